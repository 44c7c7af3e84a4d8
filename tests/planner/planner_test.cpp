// Planner tests on synthetic models built here. Every expected figure was worked out by hand
// from the rules in TFLM's micro_allocation_info.cc and greedy_memory_planner.cc (the working is
// in the comments), not by running the planner.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "arenascope/planner/arena.h"
#include "arenascope/planner/kernels.h"
#include "arenascope/planner/outcome.h"
#include "arenascope/planner/plan.h"
#include "arenascope/planner/writers.h"
#include "model_builder.h"

using namespace arenascope::planner;
using test_models::Op;
using test_models::SG;
using test_models::T;

namespace {
constexpr int FC = 9, SOFTMAX = 25, RELU = 19, ADD = 0, IF = 118, WHILE = 119, SVDF = 27;

Model parse(const std::vector<uint8_t> &bytes)
{
    return read_model(bytes.data(), bytes.size());
}

struct Expect {
    int tensor;
    int64_t size;
    int first, last;
    int64_t offset;
};

void expect_plan(const Lifetimes &l, const Plan &p, const std::vector<Expect> &want)
{
    ASSERT_EQ(l.buffers.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE("buffer " + std::to_string(i));
        EXPECT_EQ(l.buffers[i].tensor, want[i].tensor);
        EXPECT_EQ(l.buffers[i].size, want[i].size);
        EXPECT_EQ(l.buffers[i].first, want[i].first);
        EXPECT_EQ(l.buffers[i].last, want[i].last);
        EXPECT_EQ(p.offsets[i], want[i].offset);
    }
}

// The model's TFLM greedy plan is `want` and its head is `head`, equal to the lower bound, first
// reached in scope `scope` (every hand-worked graph below is planned tightly). Returns the
// lifetimes and the plan for the test's own further checks.
std::pair<Lifetimes, Plan> expect_tight_plan(const std::vector<uint8_t> &model, const std::vector<Expect> &want,
                                             int64_t head, int scope)
{
    Lifetimes l = build_lifetimes(parse(model), {});
    Plan p = plan_tflm_greedy(l.buffers);
    expect_plan(l, p, want);
    EXPECT_EQ(p.head, head);
    const LowerBound bound = lower_bound(l.buffers);
    EXPECT_EQ(bound.bytes, head);
    EXPECT_EQ(bound.scope, scope);
    return {std::move(l), std::move(p)};
}

// input t0 [1,100] -> FC -> t2 [1,200] -> FC -> t3 [1,50] -> SOFTMAX -> t4 [1,10]; t1 constant.
SG chain()
{
    return SG{{{{1, 100}}, {{200, 100}, 9, true}, {{1, 200}}, {{1, 50}}, {{1, 10}}},
              {{FC, {0, 1}, {2}}, {FC, {2, 1}, {3}}, {SOFTMAX, {3}, {4}}},
              {0},
              {4}};
}
}  // namespace

TEST(Reader, ReadsTensorsOperatorsAndNames)
{
    const Model m = parse(test_models::build({chain()}));
    ASSERT_EQ(m.subgraphs.size(), 1u);
    const Subgraph &sg = m.subgraphs[0];
    ASSERT_EQ(sg.tensors.size(), 5u);
    EXPECT_EQ(sg.tensors[2].bytes, 200);
    EXPECT_EQ(sg.tensors[1].has_data, true);
    EXPECT_EQ(sg.tensors[0].has_data, false);
    ASSERT_EQ(sg.operators.size(), 3u);
    EXPECT_EQ(sg.operators[0].op_name, "FULLY_CONNECTED");
    EXPECT_EQ(sg.operators[2].op_name, "SOFTMAX");
    EXPECT_EQ(sg.inputs, std::vector<int32_t>{0});
    EXPECT_EQ(builtin_name(118), "IF");
    EXPECT_EQ(builtin_name(161), "RIGHT_SHIFT");
    EXPECT_EQ(builtin_name(209), "STABLEHLO_CASE");
    EXPECT_EQ(builtin_name(400), "BUILTIN_400");
    EXPECT_EQ(type_name(9), "INT8");
    EXPECT_EQ(type_size(7), 2);  // INT16
    EXPECT_EQ(type_size(5), 0);  // STRING: TFLM cannot size it
}

// Lifetimes: t0 created at scope 0, last used by op 0 (scope 1) -> 0..1; t2 1..2; t3 2..3;
// t4 (model output) created by op 2 at scope 3 and kept to the final scope 3 -> 3..3.
// Ids (tensors needing the arena): t0->0 (112), t2->1 (208), t3->2 (64), t4->3 (16).
// TFLM order: reverse ids 3,2,1,0 stably sorted by size: 1 (208), 0 (112), 2 (64), 3 (16).
// 1 at 0. 0 (0..1) overlaps 1: gap 0 < 112 -> after it, 208. 2 (2..3) overlaps 1 only -> 208.
// 3 (3..3) overlaps 2 only (at 208): gap 208 >= 16 -> 0. Head = 208 + 112 = 320.
// Lower bound: scope 1 holds 112 + 208 = 320.
TEST(Plan, ChainMatchesHandWorkedGreedy)
{
    const auto [l, p] =
        expect_tight_plan(test_models::build({chain()}),
                          {{0, 112, 0, 1, 208}, {2, 208, 1, 2, 0}, {3, 64, 2, 3, 208}, {4, 16, 3, 3, 0}}, 320, 1);
    EXPECT_EQ(l.op_scope[0], (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(l.placement[0][1], Placement::Constant);
    EXPECT_EQ(check_plan(l.buffers, p), "");
}

// Residual: t0 -> RELU -> t1 -> RELU -> t2; ADD(t0, t2) -> t3; all 64 B.
// Lifetimes t0 0..3 (read by the ADD at scope 3), t1 1..2, t2 2..3, t3 3..3.
// Equal sizes keep reversed id order 3,2,1,0: 3@0; 2 overlaps 3 -> 64; 1 overlaps 2 only,
// gap 64 before it -> 0; 0 overlaps all -> 128. Head 192 = lower bound (scope 2: 3 x 64).
TEST(Plan, ResidualAddKeepsTheSkipTensorAlive)
{
    SG sg{{{{1, 64}}, {{1, 64}}, {{1, 64}}, {{1, 64}}},
          {{RELU, {0}, {1}}, {RELU, {1}, {2}}, {ADD, {0, 2}, {3}}},
          {0},
          {3}};
    expect_tight_plan(test_models::build({sg}),
                      {{0, 64, 0, 3, 128}, {1, 64, 1, 2, 0}, {2, 64, 2, 3, 64}, {3, 64, 3, 3, 0}}, 192, 2);
}

// Branches: t0 [1,100] feeds two operators, RELU -> t1 [1,200] and RELU -> t2 [1,48];
// ADD(t1, t2) -> t3 [1,32]. Aligned 112, 208, 48, 32. Lifetimes t0 0..2 (read at scope 2 by the
// second branch), t1 1..3, t2 2..3, t3 3..3. Size order (stable from reversed ids 3,2,1,0):
// t1, t0, t2, t3. t1@0; t0 overlaps t1 -> 208; t2 overlaps t1 and t0 -> 320; t3 overlaps t1
// and t2 (not t0): the gap 208..320 holds 32 -> 208. Head 368 = lower bound (scope 2: 112+208+48).
TEST(Plan, BranchesJoinedByAnAdd)
{
    SG sg{{{{1, 100}}, {{1, 200}}, {{1, 48}}, {{1, 32}}},
          {{RELU, {0}, {1}}, {RELU, {0}, {2}}, {ADD, {1, 2}, {3}}},
          {0},
          {3}};
    const auto [l, p] =
        expect_tight_plan(test_models::build({sg}),
                          {{0, 112, 0, 2, 208}, {1, 208, 1, 3, 0}, {2, 48, 2, 3, 320}, {3, 32, 3, 3, 208}}, 368, 2);
    EXPECT_EQ(plan_best(l.buffers).head, 368);
    EXPECT_EQ(check_plan(l.buffers, p), "");
}

// A tensor written by two operators: t0 [1,64] -> RELU -> t1 [1,64] -> RELU -> t2 [1,16];
// RELU(t2) -> t1 again; output t1. UpdateFirstCreated keeps t1's first creation (scope 1), so
// t1 lives 1..3, t0 0..1, t2 2..3. Size order (stable from reversed ids 2,1,0): t1, t0, t2.
// t1@0; t0 overlaps t1 -> 64; t2 overlaps t1 (not t0) -> 64. Head 128 = lower bound (scope 1).
// (Taking the last creation instead, t1 3..3, would let t0 and t1 share bytes: head 80.)
TEST(Lifetimes, ATensorWrittenTwiceLivesFromItsFirstProducer)
{
    SG sg{{{{1, 64}}, {{1, 64}}, {{1, 16}}}, {{RELU, {0}, {1}}, {RELU, {1}, {2}}, {RELU, {2}, {1}}}, {0}, {1}};
    expect_tight_plan(test_models::build({sg}), {{0, 64, 0, 1, 64}, {1, 64, 1, 3, 0}, {2, 16, 2, 3, 64}}, 128, 1);
}

TEST(Plan, VariableTensorGoesToTheTailNotThePlan)
{
    SG sg{{{{1, 32}}, {{1, 32}, 9, false, true}, {{1, 32}}}, {{ADD, {0, 1}, {2}}}, {0}, {2}};
    const Lifetimes l = build_lifetimes(parse(test_models::build({sg})), {});
    ASSERT_EQ(l.buffers.size(), 2u);
    EXPECT_EQ(l.buffers[0].tensor, 0);
    EXPECT_EQ(l.buffers[1].tensor, 2);
    EXPECT_EQ(l.placement[0][1], Placement::Persistent);
}

// IF in subgraph 0 calls subgraphs 1 and 2 (one RELU each). Scopes: sg0 inputs at 0; IF opens
// scope 1 (its output t2 created there); then-branch sg1 enters scope 2 (inputs), its RELU
// scope 3; else-branch sg2 scope 4, RELU scope 5; the IF's inputs and output are last used at
// 5; sg0's RELU runs in scope 6.
TEST(Lifetimes, ControlFlowSubgraphsGetTheirOwnScopes)
{
    SG main{{{{1}}, {{1, 16}}, {{1, 16}}, {{1, 16}}}, {{IF, {0, 1}, {2}, {1, 2}}, {RELU, {2}, {3}}}, {0, 1}, {3}};
    SG branch{{{{1, 16}}, {{1, 16}}}, {{RELU, {0}, {1}}}, {0}, {1}};
    const Model m = parse(test_models::build({main, branch, branch}));
    ASSERT_EQ(m.subgraphs[0].operators[0].called_subgraphs, (std::vector<int>{1, 2}));
    const Lifetimes l = build_lifetimes(m, {});
    ASSERT_EQ(l.buffers.size(), 8u);
    const std::vector<std::pair<int, int>> want{{0, 5}, {0, 5}, {1, 6}, {6, 6}, {2, 3}, {3, 3}, {4, 5}, {5, 5}};
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(l.buffers[i].first, want[i].first) << "buffer " << i;
        EXPECT_EQ(l.buffers[i].last, want[i].second) << "buffer " << i;
    }
    EXPECT_EQ(l.buffers[4].subgraph, 1);
    EXPECT_EQ(l.op_scope[0], (std::vector<int>{1, 6}));
    EXPECT_EQ(l.op_scope[2], (std::vector<int>{5}));
    EXPECT_EQ(l.last_scope, 6);
    EXPECT_EQ(check_plan(l.buffers, plan_tflm_greedy(l.buffers)), "");
}

// Two IFs call the same two subgraphs, so TFLM marks each subgraph twice: a branch's tensors keep
// their first creation (first IF) and are last used in the second. Scopes: sg0 inputs 0; IF 1 at
// scope 1 (t2), sg1 2 (RELU 3), sg2 4 (RELU 5), IF 1's inputs and output last used at 5; IF 2 at
// 6 (t3), sg1 7 (RELU 8), sg2 9 (RELU 10); t0, t2 (IF 2's inputs) and t3 last used at 10; a
// branch's input is last used by its RELU (8, 10).
TEST(Lifetimes, ASubgraphCalledTwiceLivesFromItsFirstCallToItsLast)
{
    SG main{
        {{{1}}, {{1, 16}}, {{1, 16}}, {{1, 16}}}, {{IF, {0, 1}, {2}, {1, 2}}, {IF, {0, 2}, {3}, {1, 2}}}, {0, 1}, {3}};
    SG branch{{{{1, 16}}, {{1, 16}}}, {{RELU, {0}, {1}}}, {0}, {1}};
    const Lifetimes l = build_lifetimes(parse(test_models::build({main, branch, branch})), {});
    ASSERT_EQ(l.buffers.size(), 8u);
    const std::vector<std::pair<int, int>> want{{0, 10}, {0, 5}, {1, 10}, {6, 10}, {2, 8}, {3, 8}, {4, 10}, {5, 10}};
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(l.buffers[i].first, want[i].first) << "buffer " << i;
        EXPECT_EQ(l.buffers[i].last, want[i].second) << "buffer " << i;
    }
    EXPECT_EQ(l.last_scope, 10);
    EXPECT_EQ(check_plan(l.buffers, plan_tflm_greedy(l.buffers)), "");
}

// Offline offset 1000 for t2 (id 1): placed first and kept; then 0 (112) at 0 (gap before
// 1000), 2 (64) at 0 (0 is no longer live), 3 (16) overlaps 2 -> 64. Head 1000 + 208.
TEST(Plan, OfflineOffsetsArePlacedFirstAndKept)
{
    const Model m = parse(test_models::build({chain()}, {-1, -1, 1000, -1, -1}));
    ASSERT_EQ(m.offline_offsets.size(), 5u);
    const Lifetimes l = build_lifetimes(m, {});
    const Plan p = plan_tflm_greedy(l.buffers);
    EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 1000, 0, 64}));
    EXPECT_EQ(p.head, 1208);
    EXPECT_LE(plan_best(l.buffers).head, 1208);
}

// A corrupt header whose tensor count reads -5 as int32 (0xFFFFFFFB as TFLM's uint32): the
// error gives both readings, not only 4294967291.
TEST(Reader, ANegativeOfflineTensorCountIsNamedAsSuch)
{
    std::vector<uint8_t> bytes = test_models::build({chain()}, {-1, -1, 1000, -1, -1});
    const uint8_t header[] = {1, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0};  // version 1, 1 subgraph, 5 tensors
    auto at = std::search(bytes.begin(), bytes.end(), std::begin(header), std::end(header));
    ASSERT_NE(at, bytes.end());
    const uint8_t minus_five[] = {0xfb, 0xff, 0xff, 0xff};
    std::copy(std::begin(minus_five), std::end(minus_five), at + 8);
    try {
        parse(bytes);
        FAIL() << "accepted";
    } catch (const ModelError &e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("lists 4294967291 (-5 as a signed word: a corrupt header) offsets"), std::string::npos)
            << what;
    }
}

TEST(Kernels, SvdfInt8RequestsTwoScratchBuffers)
{
    // SVDF input [2,8] int8, weights_feature [24,8] -> 2 x 24 x 4 = 192; output [2,6] -> 48.
    SG sg{{{{2, 8}}, {{24, 8}, 9, true}, {{24, 4}, 9, true}, {{24}, 2, true}, {{2, 96}, 9, false, true}, {{2, 6}}},
          {{SVDF, {0, 1, 2, 3, 4}, {5}}},
          {0},
          {5}};
    const Model m = parse(test_models::build({sg}));
    const KernelPrediction s = predict_kernels(m, abi_named("cortex-m"));
    ASSERT_EQ(s.requests.size(), 2u);
    EXPECT_EQ(s.requests[0].bytes, 192);
    EXPECT_EQ(s.requests[1].bytes, 48);
    EXPECT_TRUE(s.unmodelled.empty());
    const Lifetimes l = build_lifetimes(m, s.requests);
    ASSERT_EQ(l.buffers.size(), 4u);  // t0, t5, two scratch
    EXPECT_EQ(l.buffers[2].scratch, 0);
    EXPECT_EQ(l.buffers[2].first, 1);  // live only in the SVDF's scope
    EXPECT_EQ(l.buffers[2].last, 1);
    EXPECT_EQ(l.buffers[3].size, 48);
}

TEST(Reader, RejectsBadModelsWithAClearError)
{
    const std::vector<uint8_t> good = test_models::build({chain()});
    // Every truncation is rejected (never read out of bounds: run under ASan in the fuzz test).
    for (size_t n = 0; n < good.size(); n += 7) {
        std::vector<uint8_t> cut(good.begin(), good.begin() + n);
        EXPECT_THROW(read_model(cut.data(), cut.size()), ModelError) << n;
    }
    std::vector<uint8_t> wrong = good;
    wrong[4] = 'X';
    try {
        read_model(wrong.data(), wrong.size());
        FAIL();
    } catch (const ModelError &e) {
        EXPECT_NE(std::string(e.what()).find("TFL3"), std::string::npos);
    }
    auto expect_error = [](const std::vector<SG> &sgs, const std::string &needle) {
        const auto bytes = test_models::build(sgs);
        try {
            build_lifetimes(read_model(bytes.data(), bytes.size()), {});
            ADD_FAILURE() << "no error, wanted: " << needle;
        } catch (const ModelError &e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_error({SG{{{{1, 4}}}, {{RELU, {0}, {99}}}, {0}, {0}}}, "refers to tensor 99");
    expect_error({SG{{{{1, -1}}, {{1, 4}}}, {{RELU, {0}, {1}}}, {0}, {1}}}, "dynamic or negative dimension");
    expect_error({SG{{{{1, 4}, 5}, {{1, 4}}}, {{RELU, {0}, {1}}}, {0}, {1}}}, "cannot size");
    expect_error({SG{{{{1}}}, {{WHILE, {0}, {0}, {0, 0}}}, {0}, {0}}}, "in a cycle");
    expect_error({SG{{{{1}}}, {{IF, {0}, {0}, {0, 7}}}, {0}, {0}}}, "calls subgraph 7");
}

// Property: on random graphs, every plan is valid, the better planner never loses to TFLM's
// greedy, and nothing beats the lower bound.
TEST(Plan, RandomGraphsGiveValidPlansNeverBelowTheBound)
{
    std::mt19937 rng(1234);
    for (int round = 0; round < 300; ++round) {
        SG sg;
        const int ops = 1 + static_cast<int>(rng() % 12);
        sg.tensors.push_back(T{{1, 1 + static_cast<int32_t>(rng() % 300)}});
        sg.inputs = {0};
        for (int i = 0; i < ops; ++i) {
            const int out = static_cast<int>(sg.tensors.size());
            sg.tensors.push_back(T{{1, 1 + static_cast<int32_t>(rng() % 300)}});
            const int a = static_cast<int>(rng() % out), b = static_cast<int>(rng() % out);
            sg.ops.push_back(Op{ADD, {a, b}, {out}});
        }
        sg.outputs = {static_cast<int32_t>(sg.tensors.size() - 1)};
        const Lifetimes l = build_lifetimes(parse(test_models::build({sg})), {});
        const Plan g = plan_tflm_greedy(l.buffers), best = plan_best(l.buffers);
        const LowerBound lb = lower_bound(l.buffers);
        ASSERT_EQ(check_plan(l.buffers, g), "") << round;
        ASSERT_EQ(check_plan(l.buffers, best), "") << round;
        ASSERT_LE(best.head, g.head) << round;
        ASSERT_GE(best.head, lb.bytes) << round;
    }
}

TEST(Plan, CheckerCatchesOverlap)
{
    std::vector<Buffer> buffers{{0, 0, 0, -1, 16, 16, 0, 2, -1}, {1, 0, 1, -1, 16, 16, 2, 3, -1}};
    Plan p{"bad", {0, 8}, 24};
    EXPECT_NE(check_plan(buffers, p).find("share bytes [8, 16)"), std::string::npos);
    buffers[1].first = 3;  // no longer live together
    EXPECT_EQ(check_plan(buffers, p), "");
}

// The definitions the GDB plugin shares (inclusive lifetimes, live bytes, lower bound and its
// scope): the same golden fixture is checked by tests/plugin/test_plan_golden.py.
TEST(Plan, GoldenDefinitionsSharedWithThePlugin)
{
    std::ifstream in(ARENASCOPE_PLAN_GOLDEN);
    ASSERT_TRUE(in) << ARENASCOPE_PLAN_GOLDEN;
    const auto golden = nlohmann::json::parse(in);
    for (const auto &c : golden.at("cases")) {
        SCOPED_TRACE(c.at("name").get<std::string>());
        std::vector<Buffer> buffers;
        for (const auto &b : c.at("buffers")) {
            Buffer buf;
            buf.id = static_cast<int>(buffers.size());
            buf.size = buf.bytes = b.at("size").get<int64_t>();
            buf.first = b.at("first").get<int>();
            buf.last = b.at("last").get<int>();
            buffers.push_back(buf);
        }
        EXPECT_EQ(live_bytes(buffers), c.at("live_bytes").get<std::vector<int64_t>>());
        EXPECT_EQ(lower_bound(buffers).bytes, c.at("lower_bound").get<int64_t>());
        EXPECT_EQ(lower_bound(buffers).scope, c.at("lower_bound_scope").get<int>());
    }
}

// A variable with an offline offset is planned in the head at that offset, not in the tail
// (micro_allocation_info.cc InitializeAllocationInfo sets needs_allocating for it;
// micro_allocator.cc AllocateVariables skips it). Measured on real TFLM 90b983c2 (Cortex-M4, QEMU;
// this graph with float32 [1,16] tensors and two ADDs, docs/offline-plan.md): the plan holds the
// variable as id 3 at offset 128 with lifetime -1..1, head 192, tail 64 B smaller than without
// the offline plan. Here t3 int8 [1,64]: 64 B, read by the ADD in scope 1.
TEST(Lifetimes, VariableWithAnOfflineOffsetIsPlannedInTheHead)
{
    SG sg{
        {{{1, 64}}, {{1, 64}}, {{1, 64}}, {{1, 64}, 9, false, true}}, {{ADD, {0, 3}, {1}}, {RELU, {1}, {2}}}, {0}, {2}};
    const Lifetimes l = build_lifetimes(parse(test_models::build({sg}, {-1, -1, -1, 128})), {});
    ASSERT_EQ(l.buffers.size(), 4u);
    EXPECT_EQ(l.placement[0][3], Placement::Planned);
    EXPECT_EQ(l.buffers[3].tensor, 3);
    EXPECT_EQ(l.buffers[3].first, -1);
    EXPECT_EQ(l.buffers[3].last, 1);
    EXPECT_EQ(l.buffers[3].offline_offset, 128);
    EXPECT_TRUE(l.warnings.empty());
    // t0@0..64, t1 (live with t0 and t3) @64, t2 (with t1) @0, t3 fixed @128: head 192.
    EXPECT_EQ(plan_tflm_greedy(l.buffers).head, 192);
}

TEST(Lifetimes, ReadButNeverProducedIsWarnedAsSuch)
{
    // t1 is read by the RELU but is neither a subgraph input nor any operator's output.
    SG sg{{{{1, 16}}, {{1, 16}}, {{1, 16}}}, {{ADD, {0, 1}, {2}}}, {0}, {2}};
    const Lifetimes l = build_lifetimes(parse(test_models::build({sg})), {});
    ASSERT_EQ(l.warnings.size(), 1u);
    EXPECT_NE(l.warnings[0].find("produced by none"), std::string::npos);
    EXPECT_EQ(l.buffers[1].first, -1);
    EXPECT_EQ(l.buffers[1].last, 1);
}

TEST(Reader, RejectsWhatTflmCannotHold)
{
    auto error_of = [](const std::vector<uint8_t> &bytes) -> std::string {
        try {
            read_model(bytes.data(), bytes.size());
        } catch (const ModelError &e) {
            return e.what();
        }
        return "";
    };
    // 2^30 FLOAT32 elements = 2^32 bytes: more than the planner's int sizes.
    EXPECT_NE(error_of(test_models::build({SG{{{{1, 1 << 30}, 0}}, {}, {0}, {0}}})).find("at most 2^31-1 bytes"),
              std::string::npos);
    EXPECT_NE(error_of(test_models::build({chain()}, {-1, -7, -1, -1, -1})).find("the offset -7"), std::string::npos);
}

TEST(Budget, AnOverlappingOfflinePlanIsTheModelsFault)
{
    const auto bytes = test_models::build({chain()}, {0, -1, 0, -1, -1});  // t0 (0..1) and t2 (1..2) at 0
    const std::string path = ::testing::TempDir() + "overlap.tflite";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    try {
        make_budget(path);
        FAIL() << "no error";
    } catch (const ModelError &e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(path), std::string::npos) << what;
        EXPECT_NE(what.find("offline plan"), std::string::npos) << what;
        EXPECT_NE(what.find("share bytes"), std::string::npos) << what;
    }
}

// A kernel whose scratch request is not modelled (ethos-u, ethos_u/ethosu.cc) and a custom
// operator of unknown source make the plan approximate, and are named.
TEST(Kernels, UnmodelledKernelsAreNamed)
{
    constexpr int CUSTOM = 32;
    SG sg{{{{1, 8}}, {{1, 12}}, {{1, 12}}},
          {
              {CUSTOM, {0}, {1}, {}, "ethos-u"},
              {CUSTOM, {1}, {2}},
          },
          {0},
          {2}};
    const KernelPrediction s = predict_kernels(parse(test_models::build({sg})), abi_named("cortex-m"));
    EXPECT_TRUE(s.requests.empty());
    ASSERT_EQ(s.unmodelled.size(), 2u);
    EXPECT_EQ(s.unmodelled[0], "subgraph 0 operator 0 (ethos-u)");
    EXPECT_EQ(s.unmodelled[1], "subgraph 0 operator 1 (CUSTOM)");
}

// chain() on a Cortex-M, worked by hand from TFLM's order (micro_allocator.cc,
// micro_interpreter.cc) and the reference kernels, with the arena end E 16-byte aligned:
//   constructor: SingleArenaBufferAllocator 36, GreedyMemoryPlanner 44, MicroAllocator 36
//     (tail E-116); StartModelAllocation: MicroBuiltinDataAllocator 8, head = 12 x 12-byte
//     ScratchBufferRequest = 144, SubgraphAllocations 8, 5 x 12 TfLiteEvalTensor, 3 x 32
//     NodeAndRegistration (E-288);
//   Parse: TfLiteFullyConnectedParams 5 @1 twice, TfLiteSoftmaxParams 4 @4 (E-302 -> E-304);
//   Init: OpDataFullyConnected 48 twice, SoftmaxParams 56, each 16-aligned (E-464);
//   Prepare: temp TfLiteTensors only (3 x 32 above the head at most), nothing persistent (int8
//     input, no per-channel filter);
//   planning: temps size_t (4) + 5 x 24 AllocationInfo -> temp end 268, aligned 272; the planner
//     needs 4 buffers x 40 = 160 below the 16-aligned tail: E - 464 - 272 >= 160, E >= 896;
//   head reserved: 320 <= E - 464; I/O: TfLiteTensor*[1] 16-aligned (E-480), TfLiteTensor 32
//     (E-512), the same for the output (E-560).
// So: tail 560, arena_used_bytes 320 + 560 = 880, minimum 896 set by the planner's arrays (any
// smaller arena leaves less than 432 bytes of tail room after Init).
TEST(Arena, ChainOnCortexMWorkedByHand)
{
    const Model m = parse(test_models::build({chain()}));
    const Lifetimes l = build_lifetimes(m, {});
    const Abi abi = abi_named("cortex-m");
    const KernelPrediction k = predict_kernels(m, abi);
    EXPECT_TRUE(k.unmodelled_data.empty());
    const ArenaModel arena = allocation_steps(m, l, k, abi, plan_tflm_greedy(l.buffers).head);
    const MinimumArena min = minimum_arena(arena.steps);
    EXPECT_EQ(min.tail_bytes, 560);
    EXPECT_EQ(min.arena_used_bytes, 880);
    EXPECT_EQ(min.bytes, 896);
    EXPECT_EQ(arena.steps[min.binding].kind, Step::Kind::PlannerArena);
    EXPECT_EQ(arena.steps[min.binding].phase, Phase::MemoryPlanning);
    EXPECT_FALSE(replay(arena.steps, 895).ok);
    EXPECT_EQ(replay(arena.steps, 895).failed, min.binding);
    EXPECT_THROW(abi_named("risc-v"), std::invalid_argument);
}

// The same chain with the planner outside the arena (arenascope's TFLM adapter): no 44 B
// GreedyMemoryPlanner in the tail, so everything after it moves up 44 B and is aligned again:
// SABA E-36, MicroAllocator E-72, MBDA E-80, SubgraphAllocations E-88, eval E-148, nodes E-244,
// builtin data E-254, E-259 -> E-260 (4-aligned), OpData E-320, E-368, E-432 (16-aligned), I/O
// E-448, E-480, E-496, E-528: tail 528 (32 B less, not 44: the padding moved too), used 848.
TEST(Arena, ThePlannerOutsideTheArenaWorkedByHand)
{
    const Model m = parse(test_models::build({chain()}));
    const Lifetimes l = build_lifetimes(m, {});
    const Abi abi = abi_named("cortex-m");
    const ArenaModel arena =
        allocation_steps(m, l, predict_kernels(m, abi), abi, plan_tflm_greedy(l.buffers).head, false);
    const MinimumArena min = minimum_arena(arena.steps);
    EXPECT_EQ(min.tail_bytes, 528);
    EXPECT_EQ(min.arena_used_bytes, 848);
    EXPECT_LT(min.bytes, 896);
}

// The allocator's rules, each from single_arena_buffer_allocator.cc / micro_allocator.cc.
TEST(Arena, ReplayFollowsTheAllocatorsRules)
{
    using K = Step::Kind;
    auto step = [](K kind, int64_t bytes, int64_t align, int64_t count = 1) {
        Step s;
        s.kind = kind;
        s.bytes = bytes;
        s.align = align;
        s.count = count;
        return s;
    };
    // The end is not re-aligned: 4 bytes at alignment 16 from an end at 100 land at 96.
    Replay r = replay({step(K::Persistent, 4, 16)}, 100);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.tail_bytes, 4);
    // A persistent request is checked against the head, not the temporaries: it may go below
    // a temp's end (TFLM does not notice), but a temp above the tail fails.
    EXPECT_TRUE(replay({step(K::ResizeHead, 16, 4), step(K::Temp, 60, 4), step(K::Persistent, 40, 4)}, 100).ok);
    r = replay({step(K::ResizeHead, 16, 4), step(K::Persistent, 40, 4), step(K::Temp, 60, 4)}, 100);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.failed, 2u);
    EXPECT_EQ(r.missing, 16);  // temp needs 16..76, tail at 60
    // Temporaries end at ResetTemp, not before.
    EXPECT_TRUE(replay({step(K::Temp, 60, 4), step(K::ResetTemp, 0, 1), step(K::Temp, 60, 4)}, 64).ok);
    EXPECT_FALSE(replay({step(K::Temp, 60, 4), step(K::Temp, 8, 4)}, 64).ok);  // without the reset: 60 + 8 > 64
    // The planner takes the free space between the 16-aligned temp end and the 16-aligned tail,
    // and fits one buffer per 40 bytes of it.
    EXPECT_TRUE(replay({step(K::Temp, 1, 1), step(K::PlannerArena, 0, 16, 2)}, 96).ok);   // 96-16 = 80
    EXPECT_FALSE(replay({step(K::Temp, 1, 1), step(K::PlannerArena, 0, 16, 2)}, 95).ok);  // 80-16 = 64
    // A resize whose failure TFLM ignores does not fail the replay and leaves the head alone.
    Step soft = step(K::ResizeHead, 500, 4);
    soft.fatal = false;
    r = replay({step(K::ResizeHead, 8, 4), soft, step(K::Persistent, 80, 4)}, 100);
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.head_bytes, 8);
}

// A custom operator of the firmware's own: nothing is known of its Init and Prepare, so the
// minimum is a floor and the plan approximate (it may request scratch).
TEST(Kernels, UnmodelledKernelMakesTheMinimumAFloor)
{
    Op custom{32, {0}, {1}};
    custom.custom_code = "MyVendorOp";
    SG sg{{{{1, 8}}, {{1, 8}}}, {custom}, {0}, {1}};
    const Model m = parse(test_models::build({sg}));
    const KernelPrediction k = predict_kernels(m, abi_named("cortex-m"));
    ASSERT_EQ(k.unmodelled_data.size(), 1u);
    EXPECT_EQ(k.unmodelled_data[0], "subgraph 0 operator 0 (MyVendorOp)");
    EXPECT_EQ(k.unmodelled, k.unmodelled_data);
    EXPECT_TRUE(k.rejected.empty());
}

// RELU_N1_TO_1 is a TFLite builtin with no TFLM kernel (micro_mutable_op_resolver.h has no
// AddReluN1To1): no resolver registers it, so TFLM rejects the model.
TEST(Kernels, ABuiltinWithoutATflmKernelIsRejected)
{
    constexpr int RELU_N1_TO_1 = 20;
    SG sg{{{{1, 8}}, {{1, 8}}}, {{RELU_N1_TO_1, {0}, {1}}}, {0}, {1}};
    const KernelPrediction k = predict_kernels(parse(test_models::build({sg})), abi_named("cortex-m"));
    ASSERT_EQ(k.rejected.size(), 1u);
    EXPECT_EQ(k.rejected[0],
              "subgraph 0 operator 0 (RELU_N1_TO_1) has no TFLM kernel (TFLM 90b983c2's MicroMutableOpResolver has no "
              "Add method for RELU_N1_TO_1): AllocateTensors fails with \"Didn't find op for builtin opcode "
              "'RELU_N1_TO_1'\"; convert the model without it");
}

namespace {
std::string write_model(const std::vector<uint8_t> &bytes, const std::string &name)
{
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
}
}  // namespace

// The budget table says a FLOOR first, with the kernels, as it says APPROXIMATE and a rejection:
// before the buffers, not after the figures.
TEST(Budget, AFloorIsSaidBeforeTheTable)
{
    Op custom{32, {0}, {1}};  // a custom operator: its arena use is not known
    custom.custom_code = "MyVendorOp";
    SG sg{{{{1, 8}}, {{1, 8}}}, {custom}, {0}, {1}};
    const Budget b =
        make_budget(write_model(test_models::build({sg}), "floor.tflite"), abi_named("cortex-m"), 10, false);
    ASSERT_FALSE(b.minimum_exact());
    const std::string table = budget_table(b);
    const size_t floor = table.find("A FLOOR: the Init/Prepare allocations of these kernels are not modelled");
    ASSERT_NE(floor, std::string::npos) << table;
    const size_t listed = table.find("subgraph 0 operator 0 (MyVendorOp)", floor);  // after APPROXIMATE's list
    ASSERT_NE(listed, std::string::npos) << table;
    EXPECT_LT(listed, table.find("buffers TFLM plans"));
    EXPECT_NE(table.find("(A FLOOR: some kernels are not modelled, listed above)"), std::string::npos);
    EXPECT_NE(table.find("(A FLOOR too: the kernels listed above add to it)"), std::string::npos);
}

// Four variable INT8 tensors of 2^31-1 elements: 4 x (2^31-1) B of tail, more than a 32-bit
// target can address; on x86-64 the same model is only big.
TEST(Budget, AnArenaBeyondA32BitAddressSpaceIsAnError)
{
    const int32_t n = 0x7fffffff;
    SG sg{{{{1, 8}},
           {{n}, 9, false, true},
           {{n}, 9, false, true},
           {{n}, 9, false, true},
           {{n}, 9, false, true},
           {{1, 8}}},
          {{ADD, {0, 1}, {5}}, {ADD, {5, 2}, {5}}, {ADD, {5, 3}, {5}}, {ADD, {5, 4}, {5}}},
          {0},
          {5}};
    const std::string path = write_model(test_models::build({sg}), "big_variables.tflite");
    try {
        make_budget(path, abi_named("cortex-m"));
        FAIL() << "no error";
    } catch (const ModelError &e) {
        EXPECT_NE(std::string(e.what()).find("32-bit address space"), std::string::npos) << e.what();
    }
    EXPECT_GT(make_budget(path, abi_named("host")).minimum.bytes, 4LL * n);
}

// The header's figures are 32-bit: a host arena past 4 GiB, or a margin that takes the
// recommendation there, is refused with the figure, not written as a number no uint32_t holds
// (the budget fuzzer, issue 32: tests/fixtures/fuzz/budget/recommended_arena_beyond_32_bits).
TEST(Header, FiguresBeyond32BitsAreRefused)
{
    // 1,184 bytes the fuzzer made: a CONV_2D input of [1,3,3,167772168] INT8 (1.5 GB) and INT4
    // weights; on the host target its minimum arena is 2,852,135,728 bytes.
    const std::string path = std::string(ARENASCOPE_FUZZ_REGRESSIONS) + "/budget/recommended_arena_beyond_32_bits";
    const Budget fits = make_budget(path, abi_named("host"), 10, false);
    ASSERT_EQ(fits.minimum.bytes, 2852135728LL);
    EXPECT_EQ(fits.recommended, 3137349312LL);  // 2,852,135,728 x 1.10, rounded up to 16
    EXPECT_NE(budget_header(fits).find("#define ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES 3137349312u"),
              std::string::npos);
    const Budget wide = make_budget(path, abi_named("host"), 98, false);
    EXPECT_EQ(wide.recommended, 5647228752LL);  // x 1.98: past 4 GiB
    try {
        budget_header(wide);
        FAIL() << "a header with a recommended arena of " << wide.recommended << " bytes";
    } catch (const ModelError &e) {
        EXPECT_NE(std::string(e.what()).find("the recommended arena is 5647228752 bytes, more than the header's "
                                             "32-bit figures hold (4 GiB): lower --margin (98 % now)"),
                  std::string::npos)
            << e.what();
    }
}

// An operator code outside the BuiltinOperator enum cannot be registered: TFLM fails in
// AllocateTensors, and no figure may pass for a prediction.
TEST(Kernels, AnUnknownOperatorCodeIsRejected)
{
    SG sg{{{{1, 8}}, {{1, 8}}}, {{9999, {0}, {1}}}, {0}, {1}};
    const KernelPrediction k = predict_kernels(parse(test_models::build({sg})), abi_named("cortex-m"));
    ASSERT_EQ(k.rejected.size(), 1u);
    EXPECT_NE(k.rejected[0].find("operator code 9999, which is not a TFLite builtin"), std::string::npos)
        << k.rejected[0];
    EXPECT_EQ(k.unmodelled.size(), 1u);  // its scratch is unknown too
}

// --arena-size: TFLM in an arena of N bytes (outcome.h), on chain() for a Cortex-M. The tail,
// worked by hand as in ChainOnCortexMWorkedByHand, from an arena end N (not re-aligned):
// SingleArenaBufferAllocator 36 @4, GreedyMemoryPlanner 44 @4, MicroAllocator 36 @4,
// MicroBuiltinDataAllocator 8, head 144 (ScratchBufferRequest[12]), SubgraphAllocations 8,
// TfLiteEvalTensor[5] 60, NodeAndRegistration[3] 96, builtin data 5 @1, 5 @1, 4 @4, OpData 48,
// 48, 56 @16; planning temps 4 + 120 from 144 (temp end 268, aligned 272), 4 planner buffers.
namespace {
ArenaModel chain_steps(const char *abi_name)
{
    const Model m = parse(test_models::build({chain()}));
    const Lifetimes l = build_lifetimes(m, {});
    const Abi abi = abi_named(abi_name);
    return allocation_steps(m, l, predict_kernels(m, abi), abi, plan_tflm_greedy(l.buffers).head);
}
ArenaAtSize chain_at(const char *abi_name, int64_t n)
{
    const Model m = parse(test_models::build({chain()}));
    return replay_at_size(m, abi_named(abi_name), chain_steps(abi_name).steps, n);
}
}  // namespace

// 895 B: 895-36 = 859 -> 856, 812, 776, 768 (MBDA); head 144; 760, 700, 604; parse 599, 594,
// 590 -> 588; Init 540 -> 528, 480, 424 -> 416. The planner's space is 416 - 272 = 144 B: 3
// buffers of 40, one short: "Too many buffers (max is 3)", kTfLiteError, temp_ left at the
// aligned tail (AllocateTemp took the whole space).
TEST(ArenaSize, OneByteShortFailsAtThePlannersArraysWithAnError)
{
    const ArenaAtSize r = chain_at("cortex-m", 895);
    EXPECT_FALSE(r.fits);
    ASSERT_TRUE(r.failed);
    EXPECT_EQ(r.failure.step, 30u);
    EXPECT_EQ(r.failure.kind, "planner arrays");
    EXPECT_EQ(r.failure.bytes, 160);
    EXPECT_EQ(r.failure.available, 144);
    EXPECT_EQ(r.failure.missing, 40);
    EXPECT_EQ(r.failure.message, "Too many buffers (max is 3)");
    EXPECT_EQ(r.outcome.kind, Outcome::Kind::Error);
    EXPECT_EQ(r.outcome.log, std::vector<std::string>{"Too many buffers (max is 3)"});
    EXPECT_EQ(r.state.head, 144);
    EXPECT_EQ(r.state.temp, 416);
    EXPECT_EQ(r.state.tail, 416);
    std::vector<int64_t> landed;
    for (int64_t o : r.offsets)
        if (o >= 0) landed.push_back(o);
    EXPECT_EQ(landed, (std::vector<int64_t>{856, 812, 776, 768, 760, 700, 604, 599, 594, 588, 528, 480, 416}));
    // The budget around it: the minimum is 896 (ChainOnCortexMWorkedByHand), so 1 B short.
    const std::string path = ::testing::TempDir() + "chain_895.tflite";
    const auto bytes = test_models::build({chain()});
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    const nlohmann::json doc = budget_json(make_budget(path, abi_named("cortex-m"), 10, false, 895));
    const auto &replay = doc.at("replay");
    EXPECT_EQ(replay.at("shortfall_bytes"), 1);
    EXPECT_EQ(replay.at("minimum_bytes"), 896);
    EXPECT_EQ(replay.at("failed").at("phase"), "AllocateTensors: memory planning (FinishModelAllocation)");
    EXPECT_EQ(replay.at("state").at("temp"), 416);
    EXPECT_EQ(replay.at("outcome").at("kind"), "error");
    EXPECT_TRUE(replay.at("arena_used_bytes").is_null());
    EXPECT_FALSE(doc.at("arena").contains("replay"));  // a new key; the old ones as they were
}

// 420 B: 384, 340, 304, 296; head 144; 288, 228; NodeAndRegistration[3] at 228-96 = 132 < 144:
// missing 12, available 96-12 = 84; StartModelAllocation returns null.
TEST(ArenaSize, NodesThatDoNotFitEndStartModelAllocation)
{
    const ArenaAtSize r = chain_at("cortex-m", 420);
    ASSERT_TRUE(r.failed);
    EXPECT_EQ(r.failure.step, 7u);
    EXPECT_EQ(r.failure.kind, "persistent");
    EXPECT_EQ(r.outcome.kind, Outcome::Kind::Error);
    EXPECT_EQ(r.outcome.log,
              (std::vector<std::string>{"Failed to allocate tail memory. Requested: 96, available 84, missing: 12",
                                        "Failed to allocate memory for node_and_registrations.",
                                        "Failed starting model allocation."}));
    EXPECT_EQ(r.state.head, 144);
    EXPECT_EQ(r.state.temp, 144);
    EXPECT_EQ(r.state.tail, 228);
}

// 450 B: 414 -> 412, 368, 332, 324; head 144; 316, 256, 160; parse 155, 150, 146 -> 144. Every
// OpData fails: 144-48 = 96 (missing 48, available 0), twice, then SoftmaxParams 144-56 = 88 -> 80
// (missing 64, available -8, which %u prints as 4294967288). InitSubgraphs goes on; operator 0's
// Prepare starts with TFLITE_DCHECK(node->user_data != nullptr): AbortImpl on a Cortex-M.
TEST(ArenaSize, AFailedOpDataHangsACortexMInTheKernelsDcheck)
{
    const ArenaAtSize r = chain_at("cortex-m", 450);
    ASSERT_TRUE(r.failed);
    EXPECT_EQ(r.failure.step, 11u);
    EXPECT_EQ(r.failure.available, 0);
    EXPECT_EQ(r.outcome.kind, Outcome::Kind::Hang);
    EXPECT_EQ(r.outcome.stop, 14u);  // operator 0's first Prepare request
    EXPECT_EQ(r.outcome.log,
              (std::vector<std::string>{
                  "Failed to allocate tail memory. Requested: 48, available 0, missing: 48",
                  "Failed to allocate tail memory. Requested: 48, available 0, missing: 48",
                  "Failed to allocate tail memory. Requested: 56, available 4294967288, missing: 64", "HALTED"}));
    EXPECT_NE(r.outcome.how.find("fully_connected.cc FullyConnectedPrepare"), std::string::npos) << r.outcome.how;
    EXPECT_EQ(r.state.tail, 144);
    EXPECT_EQ(r.state.temp, 144);
}

// x86-64, 800 B: 728, 656, 584 (72 B each, 8-aligned), 568 (MBDA 16); head 192; 552, 432, 240;
// parse 16 @4 224, 208, 4 @4 204; OpDataFullyConnected 64: 140 -> 128 < 192. Operator 0's DCHECK
// is abort() on a host.
TEST(ArenaSize, AFailedOpDataAbortsOnAHost)
{
    const ArenaAtSize r = chain_at("host", 800);
    ASSERT_TRUE(r.failed);
    EXPECT_EQ(r.failure.step, 11u);
    EXPECT_EQ(r.failure.missing, 64);
    EXPECT_EQ(r.outcome.kind, Outcome::Kind::Crash);
    EXPECT_NE(r.outcome.how.find("SIGABRT"), std::string::npos) << r.outcome.how;
    EXPECT_EQ(r.state.head, 192);
    EXPECT_EQ(r.state.tail, 204);
}

// 903 B fits, with an end that is not 16-byte aligned: 867 -> 864, 820, 784, 776, 768, 708, 612;
// parse 607, 602, 598 -> 596; OpData 548 -> 544, 496, 440 -> 432; the planner's 432 - 272 = 160
// B holds 4 buffers; head 320 <= 432; I/O: 428 -> 416, 384, 380 -> 368, 336. Tail 903 - 336 = 567
// (560 with an aligned end), head 320, arena_used_bytes() 887.
TEST(ArenaSize, ItFitsAndTheTailDependsOnTheUnalignedEnd)
{
    const ArenaAtSize r = chain_at("cortex-m", 903);
    EXPECT_TRUE(r.fits);
    EXPECT_FALSE(r.failed);
    EXPECT_EQ(r.outcome.kind, Outcome::Kind::Ok);
    EXPECT_TRUE(r.outcome.log.empty());
    EXPECT_EQ(r.tail_bytes, 567);
    EXPECT_EQ(r.head_bytes, 320);
    EXPECT_EQ(r.state.tail, 336);
}

// A 512 B variable tensor: ADD(t0 [1,32], t1 variable [1,512]) -> t2 [1,32], Cortex-M, 990 B:
// 954 -> 952, 908, 872, 864 (MBDA); head 144; 856, 820 (3 x 12), 788 (1 x 32); TfLiteAddParams 2
// @1 786; OpDataAdd 726 -> 720; planning temps 144 -> 148 -> 220. The variable lands at
// 720 - 512 = 208: above the head (allowed) but below temp_ 220. The planner's space,
// aligned tail 208 - aligned temp 224 = -16, wraps: 2^32 - 16 as an int is -16, back as a size_t
// over 40: max_buffer_count_ 107374182, so AddBuffer accepts both buffers and the sorted arrays
// go 16 x 107374182 B past the planner's start 224: offset 1717987136. TFLM prints nothing.
TEST(ArenaSize, AVariableBelowTheTemporariesWrapsThePlannersSpace)
{
    SG sg{{{{1, 32}}, {{1, 512}, 9, false, true}, {{1, 32}}}, {{ADD, {0, 1}, {2}}}, {0}, {2}};
    const Model m = parse(test_models::build({sg}));
    const Lifetimes l = build_lifetimes(m, {});
    const Abi abi = abi_named("cortex-m");
    const ArenaModel arena = allocation_steps(m, l, predict_kernels(m, abi), abi, plan_tflm_greedy(l.buffers).head);
    const ArenaAtSize r = replay_at_size(m, abi, arena.steps, 990);
    ASSERT_TRUE(r.failed);
    EXPECT_EQ(arena.steps[r.failure.step].kind, Step::Kind::PlannerArena);
    EXPECT_EQ(r.offsets[r.failure.step - 1], 208);  // the variable
    EXPECT_EQ(r.failure.available, -16);
    EXPECT_EQ(r.failure.message, "");
    EXPECT_TRUE(r.outcome.log.empty());
    EXPECT_EQ(r.outcome.kind, Outcome::Kind::Crash);
    EXPECT_NE(r.outcome.how.find("max_buffer_count_ 107374182"), std::string::npos) << r.outcome.how;
    EXPECT_NE(r.outcome.how.find("offset 1717987136"), std::string::npos) << r.outcome.how;
    EXPECT_EQ(r.state.head, 144);
    EXPECT_EQ(r.state.temp, 208);
    EXPECT_EQ(r.state.tail, 208);
}

// The walk and the plain replay agree on what fits, at every size, for both ABIs.
TEST(ArenaSize, TheWalkAgreesWithTheReplayAtEverySize)
{
    for (const char *abi : {"cortex-m", "host"}) {
        const ArenaModel arena = chain_steps(abi);
        const Model m = parse(test_models::build({chain()}));
        for (int64_t n = 1; n <= 1700; ++n) {
            const Replay plain = replay(arena.steps, n);
            const ArenaAtSize r = replay_at_size(m, abi_named(abi), arena.steps, n);
            ASSERT_EQ(r.fits, plain.ok) << abi << " " << n;
            if (plain.ok) {
                ASSERT_EQ(r.tail_bytes, plain.tail_bytes) << abi << " " << n;
                ASSERT_EQ(r.head_bytes, plain.head_bytes) << abi << " " << n;
            } else {
                ASSERT_EQ(r.failure.step, plain.failed) << abi << " " << n;
                ASSERT_EQ(r.failure.missing, plain.missing) << abi << " " << n;
            }
        }
    }
}

// Every persistent request carries one of kTailRoles (the JSON's "role", matched on by tools
// instead of the label), every other request none. An int8 SVDF (builtin data, OpData, a
// variable state tensor, two scratch buffers and so their handles) and a CONV_2D (builtin
// data, OpData, per-channel multipliers and shifts in Prepare), each with an input and an output.
TEST(Arena, EveryPersistentRequestHasARoleAndOnlyThose)
{
    constexpr int CONV_2D = 3;
    const SG svdf{
        {{{2, 8}}, {{24, 8}, 9, true}, {{24, 4}, 9, true}, {{24}, 2, true}, {{2, 96}, 9, false, true}, {{2, 6}}},
        {{SVDF, {0, 1, 2, 3, 4}, {5}}},
        {0},
        {5}};
    const SG conv{{{{1, 4, 4, 1}}, {{2, 3, 3, 1}, 9, true}, {{2}, 2, true}, {{1, 2, 2, 2}}},
                  {{CONV_2D, {0, 1, 2}, {3}}},
                  {0},
                  {3}};
    std::vector<std::string> roles;
    for (const SG &sg : {svdf, conv}) {
        const Model m = parse(test_models::build({sg}));
        const Abi abi = abi_named("cortex-m");
        const KernelPrediction k = predict_kernels(m, abi);
        ASSERT_TRUE(k.unmodelled_data.empty());
        const Lifetimes l = build_lifetimes(m, k.requests);
        const ArenaModel arena = allocation_steps(m, l, k, abi, plan_tflm_greedy(l.buffers).head);
        for (const Step &s : arena.steps) {
            SCOPED_TRACE(s.what);
            if (s.kind != Step::Kind::Persistent) {
                EXPECT_EQ(s.role, "");
                continue;
            }
            EXPECT_NE(std::find_if(kTailRoles.begin(), kTailRoles.end(), [&](const char *r) { return s.role == r; }),
                      kTailRoles.end());
            // A kernel's own requests: builtin data in Parse, its OpData first in Init, then buffers.
            if (s.op >= 0) {
                EXPECT_EQ(s.role, s.phase == Phase::Parse  ? "builtin-data"
                                  : s.phase == Phase::Init ? "op-data"
                                                           : "kernel-buffer");
            }
            roles.push_back(s.role);
        }
    }
    for (const char *r :
         {"arena-allocator", "memory-planner", "micro-allocator", "builtin-data-allocator", "subgraph-allocations",
          "eval-tensors", "node-and-registration", "builtin-data", "op-data", "kernel-buffer", "scratch-handles",
          "variable-tensor", "input-tensor-array", "input-tensor", "output-tensor-array", "output-tensor"})
        EXPECT_NE(std::find(roles.begin(), roles.end(), r), roles.end()) << r;
    EXPECT_EQ(std::count(roles.begin(), roles.end(), "op-data"), 2);
    EXPECT_EQ(std::count(roles.begin(), roles.end(), "kernel-buffer"), 2);  // CONV_2D's multipliers, shifts
}

// The contract's machine-readable definition (docs/planner-schema.json) names the JSON's schema
// string and the tail roles: the planner's constants are those, one for one, in order.
TEST(Contract, TheSchemaStringAndTheRolesAreTheJsonSchemas)
{
    std::ifstream in(ARENASCOPE_PLANNER_SCHEMA);
    ASSERT_TRUE(in) << ARENASCOPE_PLANNER_SCHEMA;
    const auto schema = nlohmann::json::parse(in);
    EXPECT_EQ(schema.at("properties").at("schema").at("const").get<std::string>(), kPlanSchema);
    const auto roles = schema.at("$defs").at("tail_role").at("enum").get<std::vector<std::string>>();
    ASSERT_EQ(roles.size(), kTailRoles.size());
    for (size_t i = 0; i < roles.size(); ++i) EXPECT_EQ(roles[i], kTailRoles[i]);
}

// The definitions the planner's snapshot shares with the GDB plugin's (the plugin checks the
// same fixture in tests/plugin/test_shared_definitions.py).
TEST(SharedDefinitions, TheStackRuleHeadroomRoundingAndScratchLabelsAreTheFixtures)
{
    std::ifstream in(ARENASCOPE_SHARED_GOLDEN);
    ASSERT_TRUE(in) << ARENASCOPE_SHARED_GOLDEN;
    const auto golden = nlohmann::json::parse(in);
    EXPECT_EQ(golden.at("stack_rule_factor").get<double>(), kStackRuleFactor);
    EXPECT_EQ(golden.at("contract_versions").at("snapshot").get<int>(), kSnapshotVersion);
    EXPECT_EQ(golden.at("contract_versions").at("planner_json").get<std::string>(), kPlanSchema);
    for (const auto &c : golden.at("headroom_pct")) {
        const int64_t h = c.at("headroom").get<int64_t>(), p = c.at("peak").get<int64_t>();
        EXPECT_EQ(headroom_pct_hundredths(h, p), c.at("hundredths").get<int64_t>()) << h << " / " << p;
    }
    int with_request = 0;
    for (const auto &c : golden.at("scratch_labels")) {
        if (!c.contains("op")) continue;  // the plugin's label when the request is not known
        ScratchRequest r;
        r.op = c.at("op").get<int>();
        r.what = c.at("what").get<std::string>();
        EXPECT_EQ(scratch_label(c.at("index").get<int>(), r), c.at("label").get<std::string>());
        ++with_request;
    }
    EXPECT_GT(with_request, 0);
    // TfLiteTypeSizeOf by TensorType: the fixture's names in the planner's code order; null: 0 here.
    size_t types = 0;
    for (int code = 0; type_name(code).rfind("TYPE_", 0) != 0; ++code, ++types) {
        const auto &want = golden.at("element_bytes").at(type_name(code));
        EXPECT_EQ(type_size(code), want.is_null() ? 0 : want.get<int>()) << type_name(code);
    }
    EXPECT_EQ(types, golden.at("element_bytes").size());
}

// Names from a model reach the terminal: valid UTF-8 stays, controls (C0, DEL, C1 such as CSI
// U+009B) and bytes that are not UTF-8 become '?', one per invalid byte or control character.
TEST(Budget, PrintableKeepsUtf8AndReplacesTheRest)
{
    EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    EXPECT_EQ(printable("out\xff\xfe#"), "out??#");
    EXPECT_EQ(printable("a\x1b[2Jb\x7f"), "a?[2Jb?");
    EXPECT_EQ(printable("\xc2\x9b"
                        "31m"),
              "?31m");                                      // C1 CSI
    EXPECT_EQ(printable("\xc0\xaf\xed\xa0\x80"), "?????");  // overlong, surrogate
    EXPECT_EQ(printable("x\xe2\x82"), "x??");               // truncated sequence
    EXPECT_EQ(printable("a\nb", true), "a\nb");
    EXPECT_EQ(printable("a\nb"), "a?b");
}
