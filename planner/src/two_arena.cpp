// TFLM's two-arena mode (two_arena.h). Each rule cites the TFLM 90b983c2 source it re-states.
#include "arenascope/planner/two_arena.h"

#include <algorithm>
#include <sstream>

#include "arenascope/planner/writers.h"

namespace arenascope::planner {

namespace {

constexpr int64_t kArenaAlignment = 16;  // micro_arena_constants.h MicroArenaBufferAlignment
constexpr int64_t kHuge = int64_t{1} << 31;

int64_t align_down(int64_t x, int64_t a)
{
    return x >= 0 ? x / a * a : -((-x + a - 1) / a * a);
}
int64_t align_up(int64_t x, int64_t a)
{
    return align_down(x + a - 1, a);
}

std::string u32(int64_t v)
{
    return std::to_string(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// The allocators' own lines (persistent_arena_buffer_allocator.cc AllocatePersistentBuffer,
// non_persistent_arena_buffer_allocator.cc AllocateTemp / ResizeBuffer, greedy_memory_planner.cc
// AddBuffer for the planner's arrays).
std::string message_for(const Step &s, const Attempt &a)
{
    switch (s.kind) {
    case Step::Kind::Persistent:
        return "Failed to allocate tail memory. Requested: " + u32(s.bytes) + ", available " + u32(a.available) +
               ", missing: " + u32(a.missing);
    case Step::Kind::Temp:
        return "Failed to allocate temp memory. Requested: " + u32(s.bytes) + ", available " + u32(a.available) +
               ", missing: " + u32(s.bytes - a.available);
    case Step::Kind::ResizeHead:
    case Step::Kind::ReserveHead:
        return "Failed to resize buffer. Requested: " + u32(s.bytes) + ", available " + u32(a.available) +
               ", missing: " + u32(s.bytes - a.available);
    case Step::Kind::PlannerArena:
        return "Too many buffers (max is " + std::to_string(std::max<int64_t>(a.available, 0) / 40) + ")";
    case Step::Kind::ResetTemp: break;
    }
    return "";
}

// The smallest size for which `fits(size)` holds, searched as minimum_arena does (a bisection,
// then the smallest passing size a window below, as padding makes fit/no-fit not quite monotone).
template <class F> int64_t smallest(int64_t low, F fits)
{
    int64_t high = std::max<int64_t>(low, 64);
    while (!fits(high)) high *= 2;
    while (low + 1 < high) {
        const int64_t mid = low + (high - low) / 2;
        (fits(mid) ? high : low) = mid;
    }
    for (int64_t size = std::max<int64_t>(high - 64, 1); size < high; ++size)
        if (fits(size)) return size;
    return high;
}

}  // namespace

const char *memory_name(Memory m)
{
    return m == Memory::Persistent ? "persistent" : "non-persistent";
}

Memory memory_of(const Step &s)
{
    return s.kind == Step::Kind::Persistent ? Memory::Persistent : Memory::NonPersistent;
}

TypeSize persistent_allocator_type(const Abi &abi)
{
    // vptr + buffer_head_ + buffer_tail_ + tail_temp_: four pointers.
    return {4 * int64_t{abi.pointer}, abi.pointer};
}

TypeSize non_persistent_allocator_type(const Abi &abi)
{
    // vptr, buffer_head_, buffer_tail_, head_temp_, next_temp_, temp_buffer_ptr_check_sum_
    // (intptr_t): six pointer-sized words; temp_buffer_count_ (int, 4), resizable_buffer_allocated_
    // (bool, 1); rounded up to the pointer's alignment: 32 B on cortex-m, 56 B on x86-64.
    const int64_t p = abi.pointer;
    return {align_up(6 * p + 4 + 1, p), p};
}

std::vector<Step> two_arena_steps(const std::vector<Step> &single, const Abi &abi)
{
    std::vector<Step> out;
    const char *create = "micro_allocator.cc MicroAllocator::Create (persistent and non-persistent buffers)";
    for (const Step &s : single) {
        if (s.site != Step::Site::ArenaAllocator) {
            out.push_back(s);
            if (s.site == Step::Site::PlannerObject || s.site == Step::Site::MicroAllocatorObject)
                out.back().source = create;
            continue;
        }
        // CreatePersistentArenaAllocator: a temporary allocator over the persistent buffer places
        // its copy at the top; CreateNonPersistentArenaAllocator: the non-persistent allocator
        // object, in the persistent buffer (micro_allocator.cc).
        Step p = s;
        p.bytes = persistent_allocator_type(abi).size;
        p.align = persistent_allocator_type(abi).align;
        p.role = "persistent-arena-allocator";
        p.what = "PersistentArenaBufferAllocator";
        p.source = "micro_allocator.cc CreatePersistentArenaAllocator";
        out.push_back(p);
        Step n = s;
        n.bytes = non_persistent_allocator_type(abi).size;
        n.align = non_persistent_allocator_type(abi).align;
        n.role = "non-persistent-arena-allocator";
        n.what = "NonPersistentArenaBufferAllocator";
        n.source = "micro_allocator.cc CreateNonPersistentArenaAllocator";
        out.push_back(n);
    }
    return out;
}

TwoArenaReplay replay_two(const std::vector<Step> &steps, int64_t persistent_bytes, int64_t non_persistent_bytes)
{
    TwoArenaReplay r;
    // CreatePersistentArenaAllocator aligns the persistent buffer's end down to 16 and keeps its
    // start; the allocator fails below buffer_head_ (offset 0). CreateNonPersistentArenaAllocator
    // aligns the start up (offset 0 here: the buffer starts aligned) and keeps the end, which
    // bounds temps, the resizable buffer and the head. apply_step's rules are those (arena.cpp),
    // with head_ fixed at 0 in the persistent buffer and tail_ fixed at the end in the other.
    r.persistent = {0, 0, align_down(persistent_bytes, kArenaAlignment)};
    r.non_persistent = {0, 0, non_persistent_bytes};
    r.offsets.assign(steps.size(), -1);
    for (size_t i = 0; i < steps.size(); ++i) {
        const Memory m = memory_of(steps[i]);
        ArenaState &st = m == Memory::Persistent ? r.persistent : r.non_persistent;
        const Attempt a = apply_step(steps[i], st);
        if (!a.fits) {
            if (!steps[i].fatal) continue;  // FinishPrepareNodeAllocations' status is ignored
            r.failed = i;
            r.runs_out = m;
            r.attempt = a;
            return r;
        }
        if (m == Memory::Persistent) r.offsets[i] = a.at;
    }
    r.ok = true;
    r.persistent_used = align_down(persistent_bytes, kArenaAlignment) - r.persistent.tail;
    r.non_persistent_used = std::max(r.non_persistent.head, r.non_persistent.temp);
    return r;
}

namespace {
std::vector<TailRegion> place(const std::vector<Step> &steps, const TwoArenaReplay &at)
{
    return at.ok ? tail_regions_at(steps, at.offsets) : std::vector<TailRegion>{};
}
}  // namespace

TwoArenaBudget plan_two_arenas(const Budget &b, int64_t persistent_bytes, int64_t non_persistent_bytes)
{
    TwoArenaBudget t;
    t.steps = two_arena_steps(b.arena.steps, b.abi);
    t.persistent_bytes = persistent_bytes;
    t.non_persistent_bytes = non_persistent_bytes;
    int64_t persistent_floor = 0, head_floor = 0;
    for (const Step &s : t.steps) {
        if (s.kind == Step::Kind::Persistent) persistent_floor += s.bytes;
        if (s.kind == Step::Kind::ReserveHead) head_floor = std::max(head_floor, s.bytes);
    }
    t.persistent_minimum = smallest(persistent_floor, [&](int64_t n) { return replay_two(t.steps, n, kHuge).ok; });
    t.non_persistent_minimum = smallest(head_floor, [&](int64_t n) { return replay_two(t.steps, kHuge, n).ok; });
    t.persistent_binding = replay_two(t.steps, t.persistent_minimum - 1, kHuge).failed;
    t.non_persistent_binding =
        t.non_persistent_minimum > 1 ? replay_two(t.steps, kHuge, t.non_persistent_minimum - 1).failed : 0;
    t.at_size = replay_two(t.steps, persistent_bytes, non_persistent_bytes);
    if (!t.at_size.ok) t.message = message_for(t.steps[t.at_size.failed], t.at_size.attempt);
    // Where the tail is shown: the given buffer when it holds the tail (whichever buffer ran out),
    // else the persistent minimum.
    t.tail_regions_buffer =
        persistent_bytes >= t.persistent_minimum ? persistent_bytes : align_up(t.persistent_minimum, kArenaAlignment);
    t.tail_regions = place(t.steps, t.at_size.ok ? t.at_size : replay_two(t.steps, t.tail_regions_buffer, kHuge));
    return t;
}

namespace {
nlohmann::json step_ref(const Step &s, size_t i)
{
    return {{"step", i},          {"phase", phase_name(s.phase)},
            {"what", s.what},     {"role", s.role.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.role)},
            {"source", s.source}, {"memory", memory_name(memory_of(s))}};
}
}  // namespace

nlohmann::json two_arena_json(const Budget &b, const TwoArenaBudget &t)
{
    using nlohmann::json;
    const TwoArenaReplay &r = t.at_size;
    json regions = json::array();
    for (const TailRegion &x : t.tail_regions)
        regions.push_back({{"offset", x.offset},
                           {"size", x.size},
                           {"kind", x.kind},
                           {"tensor", x.tensor},
                           {"subgraph", x.subgraph},
                           {"operator", x.op},
                           {"phase", x.phase},
                           {"category", x.category},
                           {"role", x.role},
                           {"what", x.what}});
    json constructor = json::array();
    for (size_t i = 0; i < t.steps.size() && t.steps[i].phase == Phase::Constructor; ++i)
        constructor.push_back({{"step", i},
                               {"what", t.steps[i].what},
                               {"role", t.steps[i].role},
                               {"bytes", t.steps[i].bytes},
                               {"align", t.steps[i].align},
                               {"source", t.steps[i].source}});
    json failed = nullptr;
    if (!r.ok) {
        json f = step_ref(t.steps[r.failed], r.failed);
        f["bytes"] =
            t.steps[r.failed].kind == Step::Kind::PlannerArena ? t.steps[r.failed].count * 40 : t.steps[r.failed].bytes;
        f["available"] = r.attempt.available;
        f["missing"] = r.attempt.missing;
        f["message"] = t.message.empty() ? json(nullptr) : json(t.message);
        failed = f;
    }
    return {{"persistent",
             {{"bytes", t.persistent_bytes},
              {"minimum_bytes", t.persistent_minimum},
              {"binding", step_ref(t.steps[t.persistent_binding], t.persistent_binding)},
              {"used_bytes", r.ok ? json(r.persistent_used) : json(nullptr)}}},
            {"non_persistent",
             {{"bytes", t.non_persistent_bytes},
              {"minimum_bytes", t.non_persistent_minimum},
              {"binding", step_ref(t.steps[t.non_persistent_binding], t.non_persistent_binding)},
              {"used_bytes", r.ok ? json(r.non_persistent_used) : json(nullptr)}}},
            {"exact", b.minimum_exact()},
            {"constructor", constructor},
            {"fits", r.ok},
            {"runs_out", r.ok ? json(nullptr) : json(memory_name(r.runs_out))},
            {"failed", failed},
            {"arena_used_bytes", r.ok ? json(r.persistent_used + r.non_persistent_used) : json(nullptr)},
            {"tail_regions_buffer_bytes", t.tail_regions_buffer},
            {"tail_regions", regions}};
}

std::string two_arena_table(const Budget &b, const TwoArenaBudget &t)
{
    std::ostringstream o;
    const TwoArenaReplay &r = t.at_size;
    const std::string floor = b.minimum_exact() ? "" : " (a floor: some kernels are not modelled)";
    o << "Two arenas: MicroAllocator::Create(persistent, " << t.persistent_bytes << ", non-persistent, "
      << t.non_persistent_bytes << ") (micro_allocator.cc)\n";
    o << "  persistent buffer      minimum " << t.persistent_minimum << " B" << floor << ", set by "
      << t.steps[t.persistent_binding].what << "\n";
    o << "  non-persistent buffer  minimum " << t.non_persistent_minimum << " B" << floor << ", set by "
      << t.steps[t.non_persistent_binding].what << "\n";
    o << "  in the persistent buffer: ";
    for (size_t i = 0; i < t.steps.size() && t.steps[i].phase == Phase::Constructor; ++i)
        o << (i ? ", " : "") << t.steps[i].what << " " << t.steps[i].bytes << " B";
    o << ", then the whole tail; in the non-persistent one: the head (" << b.greedy.head
      << " B) and AllocateTensors' temporaries\n";
    if (r.ok) {
        o << "  at these sizes AllocateTensors fits: persistent " << r.persistent_used << " B used of "
          << t.persistent_bytes << ", non-persistent " << r.non_persistent_used << " B used of "
          << t.non_persistent_bytes << " (arena_used_bytes() " << r.persistent_used + r.non_persistent_used << ")\n";
    } else {
        const Step &s = t.steps[r.failed];
        o << "  at these sizes the " << memory_name(r.runs_out) << " buffer runs out first: step " << r.failed << " ("
          << phase_name(s.phase) << ": " << s.what << ") lacks " << r.attempt.missing << " B";
        if (!t.message.empty()) o << "; TFLM prints \"" << t.message << "\"";
        o << "; give the " << memory_name(r.runs_out) << " buffer at least "
          << (r.runs_out == Memory::Persistent ? t.persistent_minimum : t.non_persistent_minimum) << " B\n";
    }
    o << "  persistent buffer's tail (offsets in a " << t.tail_regions_buffer << " B buffer):\n";
    for (const TailRegion &x : t.tail_regions) o << "    +" << x.offset << "  " << x.size << " B  " << x.what << "\n";
    return o.str();
}

nlohmann::json two_arena_snapshot(const Budget &b, const TwoArenaBudget &t)
{
    using nlohmann::json;
    json snap = budget_snapshot(b);
    json one = snap["arenas"][0];
    // A buffer too small for its own requests is drawn at its minimum (the viewer draws what
    // fits); the "used" check says which buffer runs out at the given sizes.
    const int64_t np = std::max(t.non_persistent_bytes, t.non_persistent_minimum), p = t.persistent_bytes;
    const int64_t p_base = align_up(np, kArenaAlignment);
    const TwoArenaReplay &r = t.at_size;
    auto figures = [](json &a, int64_t size, int64_t used, int64_t minimum) {
        const int64_t peak = std::max(used, minimum), headroom = size - peak;
        a["size_bytes"] = size;
        a["used_bytes"] = used;
        a["peak_bytes"] = peak;
        a["headroom_bytes"] = headroom;
        a["headroom_pct"] = static_cast<double>(headroom_pct_hundredths(headroom, peak)) / 100;
        a["minimum_arena_bytes"] = minimum;
    };
    json head = one, tail = one;
    json head_regions = json::array(), tail_regions = json::array();
    for (const json &reg : one["regions"])
        if (reg["kind"] == "tensor" || reg["kind"] == "scratch") head_regions.push_back(reg);
    head["memory"] = "non-persistent";
    head["regions"] = head_regions;
    head["region_capacity"] = head_regions.size();
    head["tail_offset"] = np;
    head["tail_bytes"] = 0;
    figures(head, np, b.greedy.head, t.non_persistent_minimum);
    for (const TailRegion &x : t.tail_regions) {
        json flags = json::array();
        if (x.tensor >= 0) flags.push_back("variable");
        tail_regions.push_back({{"index", tail_regions.size()},
                                {"id", x.tensor >= 0 ? json(x.tensor) : json(nullptr)},
                                {"kind", x.kind},
                                {"offset", x.offset},
                                {"address", p_base + x.offset},
                                {"size_bytes", x.size},
                                {"first_use", nullptr},
                                {"last_use", nullptr},
                                {"flags", flags},
                                {"label", x.what},
                                {"name", x.what},
                                {"shape", nullptr},
                                {"dtype", nullptr}});
    }
    const int64_t tail_bytes =
        r.ok ? r.persistent_used : replay_two(t.steps, t.tail_regions_buffer, kHuge).persistent_used;
    const int64_t p_size = align_down(t.tail_regions_buffer, kArenaAlignment);  // buffer_tail_ is aligned down
    tail["index"] = 1;
    tail["memory"] = "persistent";
    tail["base_addr"] = p_base;
    tail["head_bytes"] = 0;
    tail["temp_bytes"] = 0;
    tail["tail_offset"] = p_size - tail_bytes;
    tail["tail_bytes"] = tail_bytes;
    tail["regions"] = tail_regions;
    tail["region_capacity"] = tail_regions.size();
    tail["plan"] = {{"scopes", 0},
                    {"live_bytes", json::array()},
                    {"live_regions", json::array()},
                    {"lower_bound_bytes", 0},
                    {"lower_bound_scope", 0}};
    figures(tail, p_size, tail_bytes, t.persistent_minimum);
    snap["arenas"] = json::array({head, tail});
    // The checks: the prediction's verdict stays; "used" is per buffer.
    json checks = json::array();
    for (const json &c : snap["checks"])
        if (c["rule"] != "used") checks.push_back(c);
    const bool fits = r.ok;
    std::string reason = fits ? "two arenas: AllocateTensors fits in persistent " + std::to_string(p) +
                                    " B and non-persistent " + std::to_string(t.non_persistent_bytes) + " B"
                              : std::string("two arenas: the ") + memory_name(r.runs_out) + " buffer runs out first (" +
                                    t.steps[r.failed].what + " lacks " + std::to_string(r.attempt.missing) +
                                    " B); drawn at the minimum of each buffer that is too small";
    checks.push_back({{"rule", "used"}, {"verdict", fits ? "PASS" : "FAIL"}, {"reason", reason}});
    snap["checks"] = checks;
    if (!fits) snap["verdict"] = "FAIL";
    return snap;
}

}  // namespace arenascope::planner
