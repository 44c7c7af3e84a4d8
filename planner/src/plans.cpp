// Memory plans over the buffers of build_lifetimes(): TFLM's greedy planner reproduced, a
// better planner, the lower bound and the plan checker.
#include <algorithm>
#include <functional>
#include <numeric>

#include "arenascope/planner/plan.h"

namespace arenascope::planner {

namespace {

struct Placed {
    int64_t offset;
    int id;
};

// Place buffers in `order` by first fit: walk the already placed buffers that are live at the
// same time in offset order and take the first gap that holds the buffer, else go after the
// highest of them. Ties in offset keep placement order (a new entry goes after equal offsets),
// as the offset-ordered list of greedy_memory_planner.cc CalculateOffsetsIfNeeded does.
Plan first_fit(const std::vector<Buffer> &buffers, const std::vector<int> &order, const char *name)
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
    std::vector<int64_t> live(static_cast<size_t>(last + 1), 0);
    for (const Buffer &b : buffers)
        for (int t = std::max(b.first, 0); t <= b.last; ++t) live[t] += b.size;
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

std::string check_plan(const std::vector<Buffer> &buffers, const Plan &plan)
{
    if (plan.offsets.size() != buffers.size())
        return "plan has " + std::to_string(plan.offsets.size()) + " offsets for " + std::to_string(buffers.size()) +
               " buffers";
    for (size_t i = 0; i < buffers.size(); ++i) {
        if (plan.offsets[i] < 0) return "buffer " + std::to_string(i) + " has no offset";
        if (plan.offsets[i] + buffers[i].size > plan.head)
            return "buffer " + std::to_string(i) + " ends beyond the head (" + std::to_string(plan.head) + " bytes)";
        for (size_t j = i + 1; j < buffers.size(); ++j) {
            if (!live_together(buffers[i], buffers[j])) continue;
            const int64_t a0 = plan.offsets[i], a1 = a0 + buffers[i].size;
            const int64_t b0 = plan.offsets[j], b1 = b0 + buffers[j].size;
            if (a0 < b1 && b0 < a1)
                return "buffers " + std::to_string(i) + " and " + std::to_string(j) +
                       " are live at the same time and share bytes [" + std::to_string(std::max(a0, b0)) + ", " +
                       std::to_string(std::min(a1, b1)) + ")";
        }
    }
    return {};
}

}  // namespace arenascope::planner
