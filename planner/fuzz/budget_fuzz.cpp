// libFuzzer target for the planner's writers: a fuzzed model through make_budget (what
// arenascope-plan runs) to budget_json, budget_snapshot, budget_header and budget_table, each
// output checked well-formed (writer_checks.h). Any input must end in a ModelError (the tool's
// "arenascope-plan: ..." and exit 1) or in four well-formed outputs: a crash, a sanitizer report,
// a std::logic_error (make_budget's own "arenascope-plan bug") or a malformed output aborts.
//   The options vary with the input (a hash of its bytes, so a crash reproduces): the target ABI,
// the adapter and the margin. Built by planner/fuzz/CMakeLists.txt; run: tools/fuzz.sh budget SECONDS.
//   Then the offline-plan writer (offline_plan.h): TFLM's own greedy plan written into the model as
// its offline plan must read back (with the same head when no scratch buffer is planned online)
// and keep the whole old file, unchanged, at the new block's end; a std::logic_error from it (the
// model written reads back as another) aborts.
#include <cstdint>

#include <algorithm>

#include "arenascope/planner/offline_plan.h"
#include "arenascope/planner/writers.h"
#include "writer_checks.h"

namespace {
uint32_t fnv1a(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
    return h;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace arenascope;
    const std::string path = fuzz::write_model_file(data, size);
    const uint32_t h = fnv1a(data, size);
    const planner::Abi abi = planner::abi_named(h & 1 ? "host" : "cortex-m");
    const bool adapter = h & 2;
    const int margin = static_cast<int>((h >> 2) % 101);
    planner::Budget b;
    try {
        b = planner::make_budget(path, abi, margin, adapter, 0, {}, fuzz::kSearchBudget);
    } catch (const planner::ModelError &) {
        return 0;
    }
    std::string err = fuzz::check_json(b);
    if (!err.empty()) fuzz::fail("budget_json", err);
    err = fuzz::check_snapshot(b);
    if (!err.empty()) fuzz::fail("budget_snapshot", err);
    err = fuzz::check_table(planner::printable(planner::budget_table(b), true));
    if (!err.empty()) fuzz::fail("budget_table", err);
    try {
        const std::string header = planner::budget_header(b);
        err = fuzz::check_header(header);
        if (!err.empty()) fuzz::fail("budget_header", err + "\n" + header.substr(0, 4000));
        fuzz::save_header(header);
    } catch (const planner::ModelError &) {  // a value the agent's region fields cannot hold: said so
    }
    std::vector<uint8_t> written;
    try {
        written = planner::with_offline_plan(data, size, planner::offline_offsets(b.model, b.lifetimes, b.greedy));
    } catch (const planner::ModelError &) {  // a Model table it cannot copy, or too large: said so
        return 0;
    }
    const size_t shift = written.size() - size;
    // The whole old file, its first 8 bytes included (the block's end), lies at `shift`.
    if (written.size() < size || shift % 64 || !std::equal(data, data + size, written.begin() + shift))
        fuzz::fail("with_offline_plan", "the old file does not lie unchanged at the block's end");
    try {
        const planner::Model back = planner::read_model(written.data(), written.size());
        const planner::Lifetimes l = planner::build_lifetimes(back, b.kernels.requests);
        // (Scratch buffers stay online and may land elsewhere around the fixed tensors.)
        if (b.kernels.requests.empty() && planner::plan_tflm_greedy(l.buffers).head != b.greedy.head)
            fuzz::fail("with_offline_plan", "TFLM's own plan written as the offline plan changes the head");
    } catch (const planner::ModelError &e) {
        fuzz::fail("with_offline_plan", std::string("the written model does not read back: ") + e.what());
    }
    return 0;
}
