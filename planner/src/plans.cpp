// Memory plans over the buffers of build_lifetimes(): TFLM's greedy planner reproduced, a
// better planner, the lower bound and the plan checker.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>

#include "arenascope/planner/plan.h"

namespace arenascope::planner {

namespace {

struct Placed {
    int64_t offset;
    int id;
};

// TFLM's own walk (greedy_memory_planner.cc CalculateOffsetsIfNeeded): every buffer walks the
// offset-ordered list of all placed ones. O(n^2); first_fit gives the same offsets faster.
Plan first_fit_walk(const std::vector<Buffer> &buffers, const std::vector<int> &order, const char *name)
{
    Plan plan;
    plan.planner = name;
    plan.offsets.assign(buffers.size(), -1);
    std::vector<Placed> by_offset;
    by_offset.reserve(buffers.size());
    for (int id : order) {
        const Buffer &want = buffers[id];
        int64_t candidate = 0;
        if (want.offline_offset >= 0) {
            candidate = want.offline_offset;
        } else {
            for (const Placed &p : by_offset) {
                const Buffer &other = buffers[p.id];
                if (!live_together(want, other)) continue;
                if (p.offset - candidate >= want.size) break;
                candidate = std::max(candidate, p.offset + other.size);
            }
        }
        plan.offsets[id] = candidate;
        auto at = std::upper_bound(by_offset.begin(), by_offset.end(), candidate,
                                   [](int64_t off, const Placed &p) { return off < p.offset; });
        by_offset.insert(at, Placed{candidate, id});
        plan.head = std::max(plan.head, candidate + want.size);
    }
    return plan;
}

// The buffers already placed that are live at the same time as a given one, found without
// looking at the others: [f, l] and [a, b] overlap (live_together) when f lies in [a, b], or
// f < a <= l. The first kind comes from the placed buffers ordered by first scope; the second is
// a stabbing query at a in a segment tree over the scopes (compressed to the distinct first and
// last values), each buffer kept in the O(log n) nodes that cover its lifetime. A query costs
// O(log n + the buffers it returns).
class PlacedByTime {
public:
    explicit PlacedByTime(const std::vector<Buffer> &buffers) : buffers_(buffers)
    {
        for (const Buffer &b : buffers) scopes_.push_back(b.first), scopes_.push_back(b.last);
        std::sort(scopes_.begin(), scopes_.end());
        scopes_.erase(std::unique(scopes_.begin(), scopes_.end()), scopes_.end());
        leaves_ = 1;
        while (leaves_ < scopes_.size()) leaves_ *= 2;
        nodes_.resize(2 * leaves_);
    }
    void add(int id)
    {
        const Buffer &b = buffers_[id];
        by_first_.emplace(b.first, id);
        for (size_t l = leaves_ + coord(b.first), r = leaves_ + coord(b.last) + 1; l < r; l /= 2, r /= 2) {
            if (l & 1) nodes_[l++].push_back(id);
            if (r & 1) nodes_[--r].push_back(id);
        }
    }
    // Appends to `out` the placed buffers live together with `want` (its lifetime not inverted).
    void live_with(const Buffer &want, std::vector<int> &out) const
    {
        for (auto it = by_first_.lower_bound(want.first); it != by_first_.end() && it->first <= want.last; ++it)
            out.push_back(it->second);
        for (size_t i = leaves_ + coord(want.first); i >= 1; i /= 2)
            for (int id : nodes_[i])
                if (buffers_[id].first < want.first) out.push_back(id);
    }

private:
    size_t coord(int scope) const
    {
        return static_cast<size_t>(std::lower_bound(scopes_.begin(), scopes_.end(), scope) - scopes_.begin());
    }
    const std::vector<Buffer> &buffers_;
    std::vector<int> scopes_;
    size_t leaves_ = 1;
    std::vector<std::vector<int>> nodes_;
    std::multimap<int, int> by_first_;
};

bool inverted(const Buffer &b)
{
    return b.first > b.last;
}

// Place buffers in `order` by first fit: walk the already placed buffers that are live at the
// same time in offset order and take the first gap that holds the buffer, else go after the
// highest of them. Ties in offset keep placement order (a new entry goes after equal offsets),
// as the offset-ordered list of greedy_memory_planner.cc CalculateOffsetsIfNeeded does.
//
// TFLM walks its whole offset-ordered list for every buffer, skipping those not live at the same
// time: O(n^2) in buffers. Here only the buffers live at the same time are fetched (PlacedByTime)
// and sorted by offset. The walk's answer depends only on them and their offsets: the order among
// equal offsets never changes it (after the first of them the candidate is at least that offset,
// so the gap test fails for the rest), so the result is the same, in O(n log n + sum of k log k)
// with k the placed buffers live together with each new one. A lifetime with first > last (which
// build_lifetimes never makes) falls back to TFLM's walk.
Plan first_fit(const std::vector<Buffer> &buffers, const std::vector<int> &order, const char *name)
{
    Plan plan;
    plan.planner = name;
    plan.offsets.assign(buffers.size(), -1);
    if (std::any_of(buffers.begin(), buffers.end(), inverted)) return first_fit_walk(buffers, order, name);
    PlacedByTime placed(buffers);
    std::vector<int> near;
    for (int id : order) {
        const Buffer &want = buffers[id];
        int64_t candidate = 0;
        if (want.offline_offset >= 0) {
            candidate = want.offline_offset;
        } else {
            near.clear();
            placed.live_with(want, near);
            std::sort(near.begin(), near.end(), [&](int a, int b) {
                return plan.offsets[a] < plan.offsets[b] || (plan.offsets[a] == plan.offsets[b] && a < b);
            });
            for (int other : near) {
                if (plan.offsets[other] - candidate >= want.size) break;
                candidate = std::max(candidate, plan.offsets[other] + buffers[other].size);
            }
        }
        plan.offsets[id] = candidate;
        placed.add(id);
        plan.head = std::max(plan.head, candidate + want.size);
    }
    return plan;
}

// The order CalculateOffsetsIfNeeded places buffers in: offline-planned ids in id order, then
// the online ids, filled from the end of the array (so in reverse id order), stably sorted by
// size descending (ReverseSortInPlace is a stable bubble sort).
std::vector<int> tflm_order(const std::vector<Buffer> &buffers)
{
    std::vector<int> offline, online;
    for (const Buffer &b : buffers) (b.offline_offset >= 0 ? offline : online).push_back(b.id);
    std::reverse(online.begin(), online.end());
    std::stable_sort(online.begin(), online.end(), [&](int a, int b) { return buffers[a].size > buffers[b].size; });
    offline.insert(offline.end(), online.begin(), online.end());
    return offline;
}

}  // namespace

bool live_together(const Buffer &a, const Buffer &b)
{
    return !(a.first > b.last) && !(b.first > a.last);
}

Plan plan_tflm_greedy(const std::vector<Buffer> &buffers)
{
    return first_fit(buffers, tflm_order(buffers), "tflm-greedy");
}

Plan plan_best(const std::vector<Buffer> &buffers)
{
    using Key = std::function<bool(const Buffer &, const Buffer &)>;
    auto span = [](const Buffer &b) { return static_cast<int64_t>(b.last - b.first + 1); };
    const std::vector<Key> keys = {
        [](const Buffer &a, const Buffer &b) { return a.size > b.size; },
        [&](const Buffer &a, const Buffer &b) { return a.size * span(a) > b.size * span(b); },
        [&](const Buffer &a, const Buffer &b) { return span(a) > span(b) || (span(a) == span(b) && a.size > b.size); },
        [](const Buffer &a, const Buffer &b) { return a.first < b.first || (a.first == b.first && a.size > b.size); },
        [](const Buffer &a, const Buffer &b) { return a.last > b.last || (a.last == b.last && a.size > b.size); },
    };
    const std::vector<int> tflm = tflm_order(buffers);
    Plan best = first_fit(buffers, tflm, "tflm-greedy");
    for (const Key &key : keys) {
        std::vector<int> order = tflm;
        auto online = std::find_if(order.begin(), order.end(), [&](int id) { return buffers[id].offline_offset < 0; });
        std::stable_sort(online, order.end(), [&](int a, int b) { return key(buffers[a], buffers[b]); });
        Plan p = first_fit(buffers, order, "best-of-orderings");
        if (p.head < best.head) best = p;
    }
    best.planner = "best-of-orderings";
    return best;
}

std::vector<int64_t> live_bytes(const std::vector<Buffer> &buffers)
{
    int last = -1;
    for (const Buffer &b : buffers) last = std::max(last, b.last);
    // A difference array: + size where a lifetime starts, - size after it ends, then the running sum.
    std::vector<int64_t> live(static_cast<size_t>(last + 1) + 1, 0);
    for (const Buffer &b : buffers) {
        const int from = std::max(b.first, 0);
        if (from > b.last) continue;
        live[from] += b.size;
        live[static_cast<size_t>(b.last) + 1] -= b.size;
    }
    for (size_t t = 1; t < live.size(); ++t) live[t] += live[t - 1];
    live.pop_back();
    return live;
}

LowerBound lower_bound(const std::vector<Buffer> &buffers)
{
    LowerBound lb;
    const std::vector<int64_t> live = live_bytes(buffers);
    for (size_t t = 0; t < live.size(); ++t)
        if (live[t] > lb.bytes) lb = LowerBound{live[t], static_cast<int>(t)};
    // A single buffer is a bound too (covers buffers with lifetime -1..-1).
    for (const Buffer &b : buffers)
        if (b.size > lb.bytes) lb = LowerBound{b.size, b.first};
    return lb;
}

std::pair<int, int> shared_bytes(const std::vector<Buffer> &buffers, const std::vector<int64_t> &offsets)
{
    auto share = [&](int i, int j) {
        const int64_t a0 = offsets[i], a1 = a0 + buffers[i].size, b0 = offsets[j], b1 = b0 + buffers[j].size;
        return a0 < b1 && b0 < a1;
    };
    auto pair = [](int i, int j) { return std::make_pair(std::min(i, j), std::max(i, j)); };
    std::vector<int> ids;
    for (size_t i = 0; i < buffers.size(); ++i)
        if (offsets[i] >= 0) ids.push_back(static_cast<int>(i));
    if (std::any_of(buffers.begin(), buffers.end(), inverted)) {  // live_together pair by pair
        for (size_t x = 0; x < ids.size(); ++x)
            for (size_t y = x + 1; y < ids.size(); ++y)
                if (live_together(buffers[ids[x]], buffers[ids[y]]) && share(ids[x], ids[y])) return {ids[x], ids[y]};
        return {-1, -1};
    }
    // A sweep over time: the buffers live at the current first scope, ordered by (offset, end),
    // share no byte (else the sweep stopped), so a new buffer [x0, x1) shares bytes with one of
    // them exactly when it does with its neighbours: the one before x0 with the largest (offset,
    // end), or the first at or after x0 that is not empty at x0 (an empty buffer at x0 shares nothing
    // with x; one strictly inside another does, as the pairwise test says).
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return buffers[a].first < buffers[b].first; });
    using Key = std::tuple<int64_t, int64_t, int>;  // offset, end, id
    std::set<Key> live;
    std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> ends;  // last, id
    for (int id : ids) {
        const Buffer &x = buffers[id];
        while (!ends.empty() && ends.top().first < x.first) {
            const int gone = ends.top().second;
            live.erase(Key{offsets[gone], offsets[gone] + buffers[gone].size, gone});
            ends.pop();
        }
        const int64_t x0 = offsets[id];
        auto after = live.lower_bound(Key{x0, x0 + 1, std::numeric_limits<int>::min()});
        if (after != live.end() && share(id, std::get<2>(*after))) return pair(id, std::get<2>(*after));
        auto before = live.lower_bound(Key{x0, std::numeric_limits<int64_t>::min(), std::numeric_limits<int>::min()});
        if (before != live.begin() && share(id, std::get<2>(*std::prev(before))))
            return pair(id, std::get<2>(*std::prev(before)));
        live.insert(Key{x0, x0 + x.size, id});
        ends.emplace(x.last, id);
    }
    return {-1, -1};
}

std::string check_plan(const std::vector<Buffer> &buffers, const Plan &plan)
{
    if (plan.offsets.size() != buffers.size())
        return "plan has " + std::to_string(plan.offsets.size()) + " offsets for " + std::to_string(buffers.size()) +
               " buffers";
    for (size_t i = 0; i < buffers.size(); ++i) {
        if (plan.offsets[i] < 0) return "buffer " + std::to_string(i) + " has no offset";
        if (plan.offsets[i] + buffers[i].size > plan.head)
            return "buffer " + std::to_string(i) + " ends beyond the head (" + std::to_string(plan.head) + " bytes)";
    }
    const auto [i, j] = shared_bytes(buffers, plan.offsets);
    if (i < 0) return {};
    const int64_t a0 = plan.offsets[i], a1 = a0 + buffers[i].size;
    const int64_t b0 = plan.offsets[j], b1 = b0 + buffers[j].size;
    return "buffers " + std::to_string(i) + " and " + std::to_string(j) +
           " are live at the same time and share bytes [" + std::to_string(std::max(a0, b0)) + ", " +
           std::to_string(std::min(a1, b1)) + ")";
}

}  // namespace arenascope::planner
