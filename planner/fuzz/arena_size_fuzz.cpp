// libFuzzer target for arenascope-plan --arena-size N: TFLM's AllocateTensors replayed in an
// arena of a fuzzed size (outcome.h replay_at_size, through make_budget as the tool runs it).
//   Input: a 5-byte prefix choosing N, then the model. Prefix byte 0 % 3 picks how N is made
// from bytes 1..4 (little-endian): 0, the minimum arena plus a signed byte (the boundary,
// where alignment padding decides); 1, the minimum plus a signed 32-bit value; 2, that value
// as an unsigned size. N is clamped to what --arena-size accepts (1..2^32-1).
//   Invariants, any broken aborts: the at-size replay agrees with the plain replay; it fits
// exactly when N >= the minimum (the minimum is the smallest size that fits, and fitting is
// monotone in N: a larger arena only moves the tail up); a fit has no failure, an outcome "ok"
// and every persistent request inside the arena, not sharing bytes; a failure names a step and
// the bytes it lacks (or a wrapped space) and ends somewhere other than "ok"; and the JSON (with its "replay") and
// the table are well-formed (writer_checks.h). Built by planner/fuzz/CMakeLists.txt; run:
// tools/fuzz.sh arena_size SECONDS.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "arenascope/planner/writers.h"
#include "writer_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace arenascope;
    using planner::Outcome;
    if (size < 5) return 0;
    uint32_t raw;
    std::memcpy(&raw, data + 1, 4);  // little-endian hosts only (x86-64, aarch64)
    const int mode = data[0] % 3;
    const bool host = data[0] & 0x80, adapter = data[0] & 0x40;
    const std::string path = fuzz::write_model_file(data + 5, size - 5);
    const planner::Abi abi = planner::abi_named(host ? "host" : "cortex-m");
    planner::Budget plain;
    try {
        plain = planner::make_budget(path, abi, 10, adapter, 0, {}, fuzz::kSearchBudget);
    } catch (const planner::ModelError &) {
        return 0;
    }
    const int64_t minimum = plain.minimum.bytes;
    int64_t n = mode == 0   ? minimum + static_cast<int8_t>(raw & 0xff)
                : mode == 1 ? minimum + static_cast<int32_t>(raw)
                            : static_cast<int64_t>(raw);
    n = std::clamp<int64_t>(n, 1, 0xffffffffLL);
    planner::Budget b;
    try {
        b = planner::make_budget(path, abi, 10, adapter, n, {}, fuzz::kSearchBudget);
    } catch (const planner::ModelError &e) {
        fuzz::fail("make_budget", std::string("a model that plans fails with --arena-size: ") + e.what());
    }
    if (!b.at_size) fuzz::fail("make_budget", "no replay with --arena-size");
    const planner::ArenaAtSize &r = *b.at_size;
    const std::string at = " at " + std::to_string(n) + " bytes (minimum " + std::to_string(minimum) + ")";
    if (r.arena_bytes != n) fuzz::fail("replay_at_size", "arena_bytes is not N" + at);
    if (r.fits != planner::replay(b.arena.steps, n).ok)
        fuzz::fail("replay_at_size", "fits disagrees with replay()" + at);
    if (r.fits != (n >= minimum)) fuzz::fail("replay_at_size", std::string(r.fits ? "fits" : "fails") + at);
    if (r.offsets.size() > b.arena.steps.size()) fuzz::fail("replay_at_size", "more offsets than steps");
    if (r.fits) {
        if (r.failed || r.outcome.kind != Outcome::Kind::Ok)
            fuzz::fail("replay_at_size", "a fit with a failure or an outcome other than ok" + at);
        if (r.tail_bytes < 0 || r.head_bytes < 0 || r.tail_bytes + r.head_bytes > n)
            fuzz::fail("replay_at_size", "head + tail beyond the arena" + at);
        std::vector<std::pair<int64_t, int64_t>> regions;
        for (const planner::TailRegion &t : b.at_size_regions) {
            if (t.offset < 0 || t.size < 0 || t.offset + t.size > n)
                fuzz::fail("replay_at_size", "a persistent request outside the arena: " + t.what + at);
            regions.emplace_back(t.offset, t.size);
        }
        std::sort(regions.begin(), regions.end());
        for (size_t i = 1; i < regions.size(); ++i)
            if (regions[i - 1].first + regions[i - 1].second > regions[i].first)
                fuzz::fail("replay_at_size", "two persistent requests share bytes" + at);
    } else {
        // Missing bytes, or TFLM's size_t arithmetic wrapped (a negative space: arena.h Attempt).
        if (!r.failed || r.failure.step >= b.arena.steps.size() || (r.failure.missing <= 0 && r.failure.available >= 0))
            fuzz::fail("replay_at_size", "a failure that names no step, no missing bytes and no wrap" + at);
        if (r.outcome.kind == Outcome::Kind::Ok || r.outcome.stop >= b.arena.steps.size() || r.outcome.how.empty())
            fuzz::fail("replay_at_size", "a failure whose outcome is ok, or says nothing" + at);
        if (!b.at_size_regions.empty()) fuzz::fail("replay_at_size", "tail regions for an arena that fails" + at);
    }
    std::string err = fuzz::check_json(b);
    if (!err.empty()) fuzz::fail("budget_json --arena-size", err + at);
    err = fuzz::check_table(planner::printable(planner::budget_table(b), true));
    if (!err.empty()) fuzz::fail("budget_table --arena-size", err + at);
    return 0;
}
