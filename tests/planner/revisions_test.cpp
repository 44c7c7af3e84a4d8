// The planner's TFLM revisions (--tflm) against what each TFLM measured on a Cortex-M4 (QEMU
// mps2-an386, arm-none-eabi-gcc 12.2, reference kernels, arena alignas(16)) with TFLM's
// hello_world int8 model: three FULLY_CONNECTED operators, ten per-tensor quantized tensors.
// The model is rebuilt here with the same tensors and operators (the arena depends on nothing
// else of it). The figures are the measurements: the minimum arena found by bisecting the arena
// size on the target, head and tail read from the allocator after AllocateTensors, the
// allocator objects' addresses at the arena's end, and the lines TFLM printed below the
// minimum. 2026-08 is upstream 90b983c2, whose figures the planner was proven exact for.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "arenascope/planner/arena.h"
#include "arenascope/planner/outcome.h"
#include "arenascope/planner/revisions.h"
#include "arenascope/planner/writers.h"
#include "model_builder.h"

using namespace arenascope::planner;
using test_models::Op;
using test_models::SG;
using test_models::T;

namespace {

constexpr int FC = 9, INT8 = 9, INT32 = 2;

// tflm_hello_world_int8.tflite's graph: input [1,1] -> FC(16) -> FC(16) -> FC(1) -> output [1,1];
// weights and biases constant (their sizes as in the model), every tensor per-tensor quantized.
std::vector<uint8_t> hello_world()
{
    auto q = [](std::vector<int32_t> shape, int type, bool constant, size_t words) {
        T t{shape, type, constant};
        if (constant) t.values.assign(words, 1);
        t.scale = {0.05f};
        return t;
    };
    SG sg;
    sg.tensors = {q({1, 1}, INT8, false, 0), q({1}, INT32, true, 1),      q({1, 16}, INT8, true, 4),
                  q({16}, INT32, true, 16),  q({16, 16}, INT8, true, 64), q({16}, INT32, true, 16),
                  q({16, 1}, INT8, true, 4), q({1, 16}, INT8, false, 0),  q({1, 16}, INT8, false, 0),
                  q({1, 1}, INT8, false, 0)};
    sg.ops = {Op{FC, {0, 6, 5}, {7}}, Op{FC, {7, 4, 3}, {8}}, Op{FC, {8, 2, 1}, {9}}};
    sg.inputs = {0};
    sg.outputs = {9};
    return test_models::build({sg});
}

Budget budget(const std::string &revision, int64_t arena_size = 0)
{
    const std::vector<uint8_t> bytes = hello_world();
    return make_budget_for(read_model(bytes.data(), bytes.size()), "hello_world",
                           abi_named("cortex-m", tflm_revision(revision)), 10, false, arena_size);
}

struct Measured {
    const char *revision;
    int64_t minimum, used, head, tail;
    // Offsets from the arena's end of the arena allocator, the GreedyMemoryPlanner, the
    // MicroAllocator, the builtin data allocator and the SubgraphAllocations.
    std::vector<int64_t> objects;
    int64_t temp_available;  // "Failed to allocate temp memory. Requested: 32, available N" at 724 B
};
const std::vector<Measured> kMeasured = {
    {"2026-08", 1068, 676, 32, 644, {-36, -80, -116, -124, -132}, 12},
    {"2023-02", 1052, 660, 32, 628, {-36, -80, -116, -124, -132}, 28},
    {"2022-09", 1024, 628, 32, 596, {-40, -84, -124, -132, -140}, 8},  // 59b39f6cb, measured as the others
    {"2022-07", 1024, 628, 32, 596, {-40, -84, -124, -132, -140}, 8},
    {"2022-03", 1016, 628, 32, 596, {-36, -80, -116, -124, -132}, 8},
};

}  // namespace

TEST(TflmRevisions, TheIdsAndCommitsAreTheContract)
{
    const std::vector<TflmRevision> &r = tflm_revisions();
    ASSERT_EQ(r.size(), 5u);
    EXPECT_STREQ(r[0].id, "2026-08");
    EXPECT_STREQ(r[1].id, "2023-02");
    EXPECT_STREQ(r[2].id, "2022-09");
    EXPECT_STREQ(r[3].id, "2022-07");
    EXPECT_STREQ(r[4].id, "2022-03");
    EXPECT_EQ(std::string(r[0].commit).substr(0, 8), "90b983c2");
    EXPECT_EQ(std::string(r[1].commit).substr(0, 9), "58aa9833f");
    EXPECT_EQ(std::string(r[2].commit).substr(0, 9), "59b39f6cb");
    EXPECT_EQ(std::string(r[3].commit).substr(0, 9), "547f8aeab");
    EXPECT_EQ(std::string(r[4].commit).substr(0, 9), "5b3670d82");
    EXPECT_STREQ(default_tflm_revision().id, "2026-08");
    EXPECT_THROW(tflm_revision("auto"), std::invalid_argument);  // the CLI decides what auto means
    EXPECT_THROW(tflm_revision("2021-01"), std::invalid_argument);
    // One JSON line per revision, newest first.
    const std::string list = tflm_revision_list_jsonl();
    EXPECT_EQ(std::count(list.begin(), list.end(), '\n'), 5);
    EXPECT_EQ(list.find("\"id\":\"2026-08\""), list.find("\"id\""));
}

TEST(TflmRevisions, HelloWorldMatchesTheMeasuredArena)
{
    for (const Measured &m : kMeasured) {
        SCOPED_TRACE(m.revision);
        const Budget b = budget(m.revision);
        EXPECT_TRUE(b.minimum_exact());
        EXPECT_EQ(b.minimum.bytes, m.minimum);
        EXPECT_EQ(b.minimum.arena_used_bytes, m.used);
        EXPECT_EQ(b.minimum.tail_bytes, m.tail);
        EXPECT_EQ(b.minimum.arena_used_bytes - b.minimum.tail_bytes, m.head);
        EXPECT_EQ(b.greedy.head, m.head);
        // The objects at the end of the recommended arena (a multiple of 16, as on the target,
        // whose healthy arenas were these sizes: 1184, 1168, 1136, 1120).
        std::vector<int64_t> objects;
        for (const TailRegion &t : b.tail_regions)
            if (t.role == "arena-allocator" || t.role == "memory-planner" || t.role == "micro-allocator" ||
                t.role == "builtin-data-allocator" || t.role == "subgraph-allocations")
                objects.push_back(t.offset - b.recommended);
        EXPECT_EQ(objects, m.objects);
    }
}

TEST(TflmRevisions, HelloWorldFitsAtTheMinimumAndFailsAsTflmDidBelowIt)
{
    for (const Measured &m : kMeasured) {
        SCOPED_TRACE(m.revision);
        const Budget at = budget(m.revision, m.minimum);
        ASSERT_TRUE(at.at_size);
        EXPECT_TRUE(at.at_size->fits);
        EXPECT_EQ(at.at_size->outcome.kind, Outcome::Kind::Ok);

        const Budget short1 = budget(m.revision, m.minimum - 1);  // allocation_failed on the target
        EXPECT_FALSE(short1.at_size->fits);
        EXPECT_EQ(short1.at_size->outcome.kind, Outcome::Kind::Error);

        const Budget short64 = budget(m.revision, m.minimum - 64);
        EXPECT_EQ(short64.at_size->outcome.kind, Outcome::Kind::Error);
        EXPECT_EQ(short64.at_size->outcome.log, std::vector<std::string>{"Too many buffers (max is 2)"});
    }
}

TEST(TflmRevisions, At724BytesOlderTflmHaltsInATfliteDcheck)
{
    for (const Measured &m : kMeasured) {
        SCOPED_TRACE(m.revision);
        const Budget b = budget(m.revision, 724);
        const std::string line = "Failed to allocate temp memory. Requested: 32, available " +
                                 std::to_string(m.temp_available) +
                                 ", missing: " + std::to_string(32 - m.temp_available);
        ASSERT_FALSE(b.at_size->outcome.log.empty());
        EXPECT_EQ(b.at_size->outcome.log.front(), line);
        if (std::string(m.revision) == "2026-08") {
            // 90b983c2 checks the null: FULLY_CONNECTED's Prepare returns an error.
            EXPECT_EQ(b.at_size->outcome.kind, Outcome::Kind::Error);
            EXPECT_EQ(b.at_size->outcome.log.back(), "Node FULLY_CONNECTED (number 0) failed to prepare with status 1");
        } else {
            // Measured: the allocator's line, then AbortImpl's "HALTED", and the target loops.
            EXPECT_EQ(b.at_size->outcome.kind, Outcome::Kind::Hang);
            EXPECT_EQ(b.at_size->outcome.log, (std::vector<std::string>{line, "HALTED"}));
        }
    }
}

// In an older revision only the kernels checked against its source are exact: any other
// operator is named as not modelled, so the minimum is a floor, never a claim. (SOFTMAX is
// checked for 2023-02 and 2022-07, not for 2022-03, whose int16 tables differ.)
TEST(TflmRevisions, UncheckedKernelsAreNotExactInOlderRevisions)
{
    auto one_op = [](int opcode) {
        SG sg;
        sg.tensors = {T{{1, 8}}, T{{1, 8}}};
        sg.ops = {Op{opcode, {0}, {1}}};
        sg.inputs = {0};
        sg.outputs = {1};
        const std::vector<uint8_t> bytes = test_models::build({sg});
        return read_model(bytes.data(), bytes.size());
    };
    constexpr int LOGISTIC = 14, SOFTMAX = 25;
    for (const char *r : {"2023-02", "2022-09", "2022-07", "2022-03"}) {
        SCOPED_TRACE(r);
        const Budget b = make_budget_for(one_op(LOGISTIC), "logistic", abi_named("cortex-m", tflm_revision(r)));
        EXPECT_FALSE(b.minimum_exact());
        EXPECT_EQ(b.kernels.unmodelled_data, std::vector<std::string>{"subgraph 0 operator 0 (LOGISTIC)"});
        const Budget s = make_budget_for(one_op(SOFTMAX), "softmax", abi_named("cortex-m", tflm_revision(r)));
        EXPECT_EQ(s.minimum_exact(), std::string(r) != "2022-03");
    }
    EXPECT_TRUE(make_budget_for(one_op(LOGISTIC), "logistic").minimum_exact());
}

// The host sizes of the objects that differ (sizeof probes with x86-64 g++ against each
// commit's headers).
TEST(TflmRevisions, HostObjectSizes)
{
    EXPECT_EQ(abi_named("host", tflm_revision("2022-07")).arena_allocator.size, 80);
    EXPECT_EQ(abi_named("host", tflm_revision("2022-07")).micro_allocator.size, 80);
    EXPECT_EQ(abi_named("host", tflm_revision("2022-03")).arena_allocator.size, 72);
    EXPECT_EQ(abi_named("host", tflm_revision("2023-02")).micro_allocator.size, 72);
    EXPECT_EQ(abi_named("cortex-m", tflm_revision("2022-07")).arena_allocator.size, 40);
    // 59b39f6cb: SingleArenaBufferAllocator and MicroAllocator with error_reporter_ (gdb sizeof 40, 40)
    EXPECT_EQ(abi_named("cortex-m", tflm_revision("2022-09")).arena_allocator.size, 40);
    EXPECT_EQ(abi_named("cortex-m", tflm_revision("2022-09")).micro_allocator.size, 40);
    EXPECT_EQ(abi_named("host", tflm_revision("2022-09")).arena_allocator.size, 80);
}

// The kernel sizes that differ per revision (revisions.cpp kernel_sizes, from sizeof probes
// against each commit's headers): CONV_2D's TfLiteConvParams and OpDataConv.
TEST(TflmRevisions, ConvSizesFollowTheRevision)
{
    constexpr int CONV_2D = 3;
    SG sg;
    sg.tensors = {T{{1, 4, 4, 1}}, T{{2, 1, 1, 1}, INT8, true}, T{{1, 4, 4, 2}}};
    sg.tensors[1].scale = {0.5f, 0.5f};
    sg.ops = {Op{CONV_2D, {0, 1}, {2}}};
    sg.inputs = {0};
    sg.outputs = {2};
    const std::vector<uint8_t> bytes = test_models::build({sg});
    struct Want {
        const char *revision;
        int64_t params, op_data;
    };
    for (const Want &w : {Want{"2026-08", 28, 56}, Want{"2023-02", 24, 56}, Want{"2022-09", 24, 52},
                          Want{"2022-07", 24, 52}, Want{"2022-03", 24, 52}}) {
        SCOPED_TRACE(w.revision);
        const Budget b = make_budget_for(read_model(bytes.data(), bytes.size()), "conv",
                                         abi_named("cortex-m", tflm_revision(w.revision)));
        EXPECT_TRUE(b.minimum_exact());
        int64_t params = -1, op_data = -1;
        for (const Step &s : b.arena.steps) {
            if (s.role == "builtin-data") params = s.bytes;
            if (s.role == "op-data") op_data = s.bytes;
        }
        EXPECT_EQ(params, w.params);
        EXPECT_EQ(op_data, w.op_data);
    }
}
