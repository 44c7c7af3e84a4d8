// Branch and bound over first-fit placement orders (plan.h plan_search).
//
// A plan here is what first fit makes of an order of the buffers: each goes to the lowest offset
// where it shares no byte with an already placed buffer live at the same time (TFLM's own rule,
// so any such plan is one TFLM reproduces when the model carries its offsets). The search is a
// depth-first walk over which buffer to place next, with three exact reductions and one bound:
// - a buffer live together with no unplaced buffer is placed at once (its offset and the others'
//   do not depend on when it goes);
// - of buffers with the same size, lifetime and first-fit offset only one is tried (they are
//   interchangeable);
// - the candidates are tried lowest offset first, largest first: the first leaf is a good plan;
// - the walk is a limited discrepancy search: pass d may leave that order at most d times on the
//   way down, for d = 0, 1, 2, ... (so alternatives near the root are tried early, not only at the
//   bottom of one deep branch); a pass that never hit its limit walked the whole tree;
// - bound: placing more buffers never lowers another's first-fit offset, so max(offset + size)
//   over the unplaced buffers, at their offsets now, is a floor of every completion: a node whose
//   floor reaches the best head found is cut.
// Work is counted in steps, not in time, so the same model gives the same plan on every machine
// and under any load: a first-fit evaluation costs 1 + the buffers live with it, a node of the
// walk 1 + its unplaced buffers + the lifetimes it looks through (the copies, the sort and the
// tests it makes), so that the budget bounds the time whatever the model's shape.
#include <algorithm>
#include <set>
#include <tuple>

#include "arenascope/planner/plan.h"

namespace arenascope::planner {

namespace {

class Search {
public:
    Search(const std::vector<Buffer> &buffers, int64_t floor, int64_t budget)
        : buffers_(buffers), floor_(floor), budget_(budget), live_with_(buffers.size())
    {
        // Every pair live at the same time, by a sweep over first scopes: O(n log n + pairs).
        std::vector<int> by_first(buffers.size());
        for (size_t i = 0; i < buffers.size(); ++i) by_first[i] = static_cast<int>(i);
        std::sort(by_first.begin(), by_first.end(),
                  [&](int a, int b) { return std::tie(buffers[a].first, a) < std::tie(buffers[b].first, b); });
        for (size_t x = 0; x < by_first.size(); ++x)
            for (size_t y = x + 1; y < by_first.size() && buffers[by_first[y]].first <= buffers[by_first[x]].last; ++y)
                if (live_together(buffers[by_first[x]], buffers[by_first[y]])) {
                    live_with_[by_first[x]].push_back(by_first[y]);
                    live_with_[by_first[y]].push_back(by_first[x]);
                }
        offsets_.assign(buffers.size(), -1);
    }

    // Returns true when the whole tree was walked (the best is optimal among first-fit orders).
    bool run(const Plan &start, Plan &best)
    {
        best_ = start;
        std::vector<int> unplaced;
        int64_t head = 0;
        for (const Buffer &b : buffers_) {
            if (b.offline_offset >= 0) {
                offsets_[b.id] = b.offline_offset;
                head = std::max(head, b.offline_offset + b.size);
            } else {
                unplaced.push_back(b.id);
            }
        }
        std::vector<int64_t> fit(buffers_.size(), 0);
        for (int id : unplaced) fit[id] = first_fit(id);
        bool complete = false;
        for (int limit = 0; !stopped_ && best_.head > floor_; ++limit) {
            cut_ = false;
            walk(unplaced, fit, head, limit);
            if (!cut_ && !stopped_) {
                complete = true;
                break;
            }
        }
        best = best_;
        return complete || best_.head <= floor_;
    }
    int64_t steps() const { return steps_; }

private:
    int64_t first_fit(int id)
    {
        steps_ += 1 + static_cast<int64_t>(live_with_[id].size());
        near_.clear();
        for (int other : live_with_[id])
            if (offsets_[other] >= 0) near_.emplace_back(offsets_[other], offsets_[other] + buffers_[other].size);
        std::sort(near_.begin(), near_.end());
        int64_t candidate = 0;
        for (const auto &[lo, hi] : near_) {
            if (lo - candidate >= buffers_[id].size) break;
            candidate = std::max(candidate, hi);
        }
        return candidate;
    }

    // unplaced: the buffers left; fit: their first-fit offsets given the placed ones.
    // limit: how many more times the walk may take a candidate other than the first.
    void walk(const std::vector<int> &unplaced, const std::vector<int64_t> &fit, int64_t head, int limit)
    {
        if (best_.head <= floor_) return;
        if (steps_ >= budget_) {
            stopped_ = true;
            return;
        }
        int64_t reach = head;
        for (int id : unplaced) reach = std::max(reach, fit[id] + buffers_[id].size);
        if (reach >= best_.head) return;
        if (unplaced.empty()) {
            best_.offsets = offsets_;
            best_.head = head;
            return;
        }
        steps_ += 1 + static_cast<int64_t>(unplaced.size());
        std::vector<int> order = unplaced;
        std::sort(order.begin(), order.end(), [&](int a, int b) {
            return std::make_tuple(fit[a], -buffers_[a].size, a) < std::make_tuple(fit[b], -buffers_[b].size, b);
        });
        // A buffer live with no unplaced one: place it alone, no branching.
        std::vector<char> left(buffers_.size(), 0);
        for (int id : unplaced) left[id] = 1;
        for (int id : order) {
            const bool alone =
                std::none_of(live_with_[id].begin(), live_with_[id].end(), [&](int other) { return left[other] != 0; });
            if (alone) {
                branch(unplaced, fit, head, id, limit);
                return;
            }
        }
        std::set<std::tuple<int64_t, int, int, int64_t>> tried;  // size, first, last, offset
        for (int id : order) {
            const Buffer &c = buffers_[id];
            if (fit[id] + c.size >= best_.head) continue;
            if (!tried.emplace(c.size, c.first, c.last, fit[id]).second) continue;  // a twin of one tried
            const bool first = tried.size() == 1;
            if (!first && limit == 0) {
                cut_ = true;
                return;
            }
            branch(unplaced, fit, head, id, first ? limit : limit - 1);
            if (stopped_ || best_.head <= floor_) return;
        }
    }

    void branch(const std::vector<int> &unplaced, const std::vector<int64_t> &fit, int64_t head, int id, int limit)
    {
        offsets_[id] = fit[id];
        std::vector<int> rest;
        rest.reserve(unplaced.size() - 1);
        for (int other : unplaced)
            if (other != id) rest.push_back(other);
        std::vector<int64_t> next = fit;
        for (int other : live_with_[id])
            if (offsets_[other] < 0) next[other] = first_fit(other);
        walk(rest, next, std::max(head, fit[id] + buffers_[id].size), limit);
        offsets_[id] = -1;
    }

    const std::vector<Buffer> &buffers_;
    int64_t floor_, budget_;
    std::vector<std::vector<int>> live_with_;
    std::vector<int64_t> offsets_;
    std::vector<std::pair<int64_t, int64_t>> near_;
    Plan best_;
    int64_t steps_ = 0;
    bool stopped_ = false, cut_ = false;
};

}  // namespace

SearchResult plan_search(const std::vector<Buffer> &buffers, const Plan &start, int64_t floor, int64_t budget)
{
    SearchResult r;
    r.plan = start;
    if (start.head <= floor) {
        r.exhausted = true;
        return r;
    }
    if (buffers.size() > kSearchMaxBuffers || budget <= 0) return r;
    if (std::any_of(buffers.begin(), buffers.end(), [](const Buffer &b) { return b.first > b.last; })) return r;
    Search s(buffers, floor, budget);
    r.exhausted = s.run(start, r.plan);
    r.steps = s.steps();
    r.searched = true;
    if (r.plan.head < start.head) r.plan.planner = "search";
    return r;
}

}  // namespace arenascope::planner
