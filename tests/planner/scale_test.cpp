// The planner at scale (docs/arena-budget.md, "Limits and scale"): the memoized lifetimes, the
// output-sensitive first fit, the sweeping plan checker and the streamed JSON give exactly what the
// straightforward algorithms give (each kept here as a tiny reference: TFLM's own walks, from
// micro_allocation_info.cc MarkAllocationLifetimes and greedy_memory_planner.cc
// CalculateOffsetsIfNeeded), deep and wide call graphs finish, and what is beyond a limit or
// overflows TFLM's 32-bit arithmetic is an error that names it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "arenascope/planner/arena.h"
#include "arenascope/planner/json_stream.h"
#include "arenascope/planner/limits.h"
#include "arenascope/planner/plan.h"
#include "arenascope/planner/writers.h"
#include "model_builder.h"

using namespace arenascope::planner;
using test_models::Op;
using test_models::SG;
using test_models::T;

namespace {
constexpr int ADD = 0, IF = 118, WHILE = 119, CALL_ONCE = 129;

Model parse(const std::vector<uint8_t> &bytes)
{
    return read_model(bytes.data(), bytes.size());
}

std::string error_of(const std::function<void()> &f)
{
    try {
        f();
    } catch (const ModelError &e) {
        return e.what();
    }
    return "";
}

// TFLM's walk as micro_allocation_info.cc writes it: a called subgraph is walked again at every
// call, the scope counter only grows, first creation is kept, last use overwritten.
struct ReferenceWalk {
    const Model &model;
    const std::vector<ScratchRequest> &scratch;
    std::vector<std::vector<std::pair<int, int>>> life;
    std::vector<std::pair<int, int>> scratch_life;
    std::vector<std::vector<int>> op_scope;
    int scope = 0;

    ReferenceWalk(const Model &m, const std::vector<ScratchRequest> &s)
        : model(m), scratch(s), scratch_life(s.size(), {-1, -1})
    {
        for (const Subgraph &sg : m.subgraphs) {
            life.emplace_back(sg.tensors.size(), std::make_pair(-1, -1));
            op_scope.emplace_back(sg.operators.size(), -1);
        }
        mark(0);
    }
    static void created(std::pair<int, int> &l, int at)
    {
        if (l.first == -1) l.first = at;
    }
    void mark(int s)
    {
        const Subgraph &sg = model.subgraphs[s];
        for (int32_t t : sg.inputs) created(life[s][t], scope), life[s][t].second = scope;
        for (size_t i = 0; i < sg.operators.size(); ++i) {
            const Operator &op = sg.operators[i];
            op_scope[s][i] = ++scope;
            for (int32_t t : op.outputs) created(life[s][t], scope);
            const int start = scope;
            for (int callee : op.called_subgraphs) {
                ++scope;
                mark(callee);
            }
            for (int32_t t : op.inputs)
                if (t >= 0) life[s][t].second = scope;
            for (int32_t t : op.outputs) life[s][t].second = scope;
            for (size_t k = 0; k < scratch.size(); ++k)
                if (scratch[k].subgraph == s && scratch[k].op == static_cast<int>(i))
                    created(scratch_life[k], start), scratch_life[k].second = scope;
        }
        for (int32_t t : sg.outputs) created(life[s][t], scope), life[s][t].second = scope;
    }
};

// A random model whose subgraphs call only later ones (a DAG), with IF, WHILE and CALL_ONCE
// operators calling the same subgraphs many times from several places, and random scratch
// requests.
std::pair<std::vector<SG>, std::vector<ScratchRequest>> random_call_dag(std::mt19937 &rng)
{
    const int n = 2 + static_cast<int>(rng() % 6);
    std::vector<SG> sgs(n);
    std::vector<ScratchRequest> scratch;
    for (int s = 0; s < n; ++s) {
        SG &sg = sgs[s];
        const int tensors = 2 + static_cast<int>(rng() % 5);
        for (int t = 0; t < tensors; ++t) sg.tensors.push_back(T{{1, 16 * (1 + static_cast<int32_t>(rng() % 4))}});
        auto tensor = [&] { return static_cast<int32_t>(rng() % tensors); };
        sg.inputs = {tensor()};
        sg.outputs = {tensor()};
        const int ops = static_cast<int>(rng() % 5);
        for (int i = 0; i < ops; ++i) {
            Op op{ADD, {tensor(), tensor()}, {tensor()}};
            if (s + 1 < n && rng() % 2) {
                auto callee = [&] { return s + 1 + static_cast<int32_t>(rng() % (n - s - 1)); };
                const int kind = static_cast<int>(rng() % 3);
                op.opcode = kind == 0 ? IF : kind == 1 ? WHILE : CALL_ONCE;
                op.subgraphs = {callee()};
                if (op.opcode != CALL_ONCE) op.subgraphs.push_back(callee());
            }
            sg.ops.push_back(op);
            if (rng() % 3 == 0) scratch.push_back({s, i, 16 + static_cast<int64_t>(rng() % 64), "test scratch"});
        }
    }
    return {sgs, scratch};
}

}  // namespace

TEST(Scale, MemoizedLifetimesAreTflmsRewalk)
{
    std::mt19937 rng(20240601);
    int calls_seen = 0;
    for (int round = 0; round < 400; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        auto [sgs, scratch] = random_call_dag(rng);
        const Model model = parse(test_models::build(sgs));
        const ReferenceWalk ref(model, scratch);
        const Lifetimes l = build_lifetimes(model, scratch);
        EXPECT_EQ(l.last_scope, ref.scope);
        EXPECT_EQ(l.op_scope, ref.op_scope);
        for (const Buffer &b : l.buffers) {
            const auto want = b.tensor >= 0 ? ref.life[b.subgraph][b.tensor] : ref.scratch_life[b.scratch];
            ASSERT_EQ(std::make_pair(b.first, b.last), want) << "buffer " << b.id;
        }
        for (const Subgraph &sg : model.subgraphs)
            for (const Operator &op : sg.operators) calls_seen += static_cast<int>(op.called_subgraphs.size());
    }
    EXPECT_GT(calls_seen, 1000);  // the rounds do call subgraphs, many times
}

// 20 IF subgraphs each calling the next twice: TFLM walks the leaf 2^20 times. By hand: a leaf
// of one operator spans 1 scope; an IF subgraph spans 1 (its operator) + 2 x (1 + the next's
// span), so span + 3 doubles at each level: span(0) = 4 x 2^20 - 3.
TEST(Scale, DoublyCalledChainIsWalkedOncePerSubgraph)
{
    constexpr int kLevels = 20;
    std::vector<SG> sgs;
    for (int k = 0; k < kLevels; ++k)
        sgs.push_back(SG{{{{1, 16}}, {{1, 16}}}, {{IF, {0}, {1}, {k + 1, k + 1}}}, {0}, {1}});
    sgs.push_back(SG{{{{1, 16}}, {{1, 16}}}, {{ADD, {0, 0}, {1}}}, {0}, {1}});
    const Lifetimes l = build_lifetimes(parse(test_models::build(sgs)), {});
    EXPECT_EQ(l.last_scope, 4 * (1 << kLevels) - 3);
    // Ten more levels pass TFLM's int and the planner's 2^24-scope limit: an error, at once.
    for (int k = kLevels; k < 30; ++k)
        sgs.insert(sgs.begin() + k, SG{{{{1, 16}}, {{1, 16}}}, {{IF, {0}, {1}, {k + 1, k + 1}}}, {0}, {1}});
    const std::string what = error_of([&] { build_lifetimes(parse(test_models::build(sgs)), {}); });
    EXPECT_NE(what.find("allocation scopes"), std::string::npos) << what;
    EXPECT_NE(what.find("16777216"), std::string::npos) << what;
}

// 1,000 IF subgraphs in a chain: subgraph k's IF calls k + 1 (then) and the leaf N (else). By hand,
// with N = 1000: subgraph k is entered at 2k (its IF runs at 2k + 1, the then branch one later);
// the leaf is first entered from subgraph N-1's then branch at 2N, and last from subgraph 0's else
// branch: span(k) = 4 + span(k+1), span(N-1) = 5, so span(1) = 4N - 3, the else branch enters at
// 2 + (4N - 3) + 1 = 4N and the walk ends at 4N + 1.
TEST(Scale, DeepAcyclicChainIsNoCycle)
{
    constexpr int N = 1000;
    std::vector<SG> sgs;
    for (int k = 0; k < N; ++k) sgs.push_back(SG{{{{1, 16}}, {{1, 16}}}, {{IF, {0}, {1}, {k + 1, N}}}, {0}, {1}});
    sgs.push_back(SG{{{{1, 32}}, {{1, 32}}}, {{ADD, {0, 0}, {1}}}, {0}, {1}});
    const Lifetimes l = build_lifetimes(parse(test_models::build(sgs)), {});
    EXPECT_EQ(l.last_scope, 4 * N + 1);
    EXPECT_EQ(l.op_scope[N][0], 4 * N + 1);      // the leaf's ADD, in its last walk
    EXPECT_EQ(l.op_scope[N - 1][0], 2 * N - 1);  // subgraph N-1 is entered once, at 2(N-1)
    const Buffer &in = l.buffers[2 * N], &out = l.buffers[2 * N + 1];
    ASSERT_EQ(in.subgraph, N);
    EXPECT_EQ(std::make_pair(in.first, in.last), std::make_pair(2 * N, 4 * N + 1));
    EXPECT_EQ(std::make_pair(out.first, out.last), std::make_pair(2 * N + 1, 4 * N + 1));
}

TEST(Scale, CallDepthBeyondTheLimitIsNamed)
{
    std::vector<SG> sgs;
    for (int k = 0; k <= kMaxCallDepth; ++k) sgs.push_back(SG{{{{1, 16}}}, {{CALL_ONCE, {}, {}, {k + 1}}}, {0}, {0}});
    sgs.push_back(SG{{{{1, 16}}}, {}, {0}, {0}});
    const std::string what = error_of([&] { build_lifetimes(parse(test_models::build(sgs)), {}); });
    EXPECT_NE(what.find("control-flow depth 10001"), std::string::npos) << what;
    EXPECT_NE(what.find("subgraph 10001 is called"), std::string::npos) << what;
}

TEST(Scale, CycleIsNamedWithItsSubgraphs)
{
    // 0 -> 1 -> 2 -> 3 -> 1: the cycle is 1, 2, 3.
    const std::vector<SG> sgs = {
        SG{{{{1, 16}}}, {{IF, {0}, {0}, {1, 1}}}, {0}, {0}},
        SG{{{{1, 16}}}, {{ADD, {0, 0}, {0}}, {WHILE, {0}, {0}, {2, 2}}}, {0}, {0}},
        SG{{{{1, 16}}}, {{CALL_ONCE, {0}, {0}, {3}}}, {0}, {0}},
        SG{{{{1, 16}}}, {{IF, {0}, {0}, {1, 1}}}, {0}, {0}},
    };
    const std::string what = error_of([&] { build_lifetimes(parse(test_models::build(sgs)), {}); });
    EXPECT_NE(what.find("in a cycle (subgraph 1 operator 1 (WHILE) calls subgraph 2 operator 0 (CALL_ONCE) calls "
                        "subgraph 3 operator 0 (IF) calls subgraph 1)"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("subgraph 0 operator"), std::string::npos) << what;  // 0 is not in the cycle
}

namespace {
// greedy_memory_planner.cc CalculateOffsetsIfNeeded as TFLM writes it: every buffer walks all the
// placed ones in offset order (ties in placement order).
std::vector<int64_t> reference_first_fit(const std::vector<Buffer> &buffers, const std::vector<int> &order)
{
    std::vector<int64_t> offsets(buffers.size(), -1);
    std::vector<int> by_offset;
    for (int id : order) {
        const Buffer &want = buffers[id];
        int64_t candidate = want.offline_offset;
        if (candidate < 0) {
            candidate = 0;
            for (int p : by_offset) {
                if (!live_together(want, buffers[p])) continue;
                if (offsets[p] - candidate >= want.size) break;
                candidate = std::max(candidate, offsets[p] + buffers[p].size);
            }
        }
        offsets[id] = candidate;
        auto at = std::upper_bound(by_offset.begin(), by_offset.end(), candidate,
                                   [&](int64_t off, int p) { return off < offsets[p]; });
        by_offset.insert(at, id);
    }
    return offsets;
}
// TFLM's order (CalculateOffsetsIfNeeded): offline ids first, then the others by size descending,
// a stable sort of the reversed id order.
std::vector<int> reference_order(const std::vector<Buffer> &buffers)
{
    std::vector<int> offline, online;
    for (const Buffer &b : buffers) (b.offline_offset >= 0 ? offline : online).push_back(b.id);
    std::reverse(online.begin(), online.end());
    std::stable_sort(online.begin(), online.end(), [&](int a, int b) { return buffers[a].size > buffers[b].size; });
    offline.insert(offline.end(), online.begin(), online.end());
    return offline;
}

std::vector<Buffer> random_buffers(std::mt19937 &rng, int n, int scopes, bool offline)
{
    std::vector<Buffer> buffers;
    for (int i = 0; i < n; ++i) {
        Buffer b;
        b.id = i;
        b.size = b.bytes = 16 * static_cast<int64_t>(rng() % 6);  // some empty (a 0-byte scratch buffer)
        b.first = static_cast<int>(rng() % (scopes + 1)) - 1;     // -1 too, as TFLM plans unproduced inputs
        b.last = std::max(b.first, b.first + static_cast<int>(rng() % 6) - 1);
        if (offline && rng() % 5 == 0) b.offline_offset = 16 * static_cast<int32_t>(rng() % 20);
        buffers.push_back(b);
    }
    return buffers;
}
}  // namespace

TEST(Scale, FastFirstFitIsTflmsWalk)
{
    std::mt19937 rng(7);
    for (int round = 0; round < 2000; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        const auto buffers =
            random_buffers(rng, 1 + static_cast<int>(rng() % 40), 1 + static_cast<int>(rng() % 30), round % 2 == 1);
        const Plan p = plan_tflm_greedy(buffers);
        const std::vector<int64_t> want = reference_first_fit(buffers, reference_order(buffers));
        ASSERT_EQ(p.offsets, want);
        int64_t head = 0;
        for (const Buffer &b : buffers) head = std::max(head, want[b.id] + b.size);
        ASSERT_EQ(p.head, head);
    }
}

TEST(Scale, SweepingCheckerFindsWhatThePairwiseTestFinds)
{
    std::mt19937 rng(11);
    int conflicts = 0;
    for (int round = 0; round < 3000; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        const auto buffers =
            random_buffers(rng, 1 + static_cast<int>(rng() % 25), 1 + static_cast<int>(rng() % 20), false);
        std::vector<int64_t> offsets;
        for (size_t i = 0; i < buffers.size(); ++i)
            offsets.push_back(rng() % 4 == 0 ? -1 : 8 * static_cast<int64_t>(rng() % 40));
        bool any = false;
        auto share = [&](size_t i, size_t j) {
            return offsets[i] >= 0 && offsets[j] >= 0 && live_together(buffers[i], buffers[j]) &&
                   offsets[i] < offsets[j] + buffers[j].size && offsets[j] < offsets[i] + buffers[i].size;
        };
        for (size_t i = 0; i < buffers.size(); ++i)
            for (size_t j = i + 1; j < buffers.size(); ++j) any = any || share(i, j);
        const auto [i, j] = shared_bytes(buffers, offsets);
        ASSERT_EQ(i >= 0, any);
        if (any) {
            ++conflicts;
            ASSERT_LT(i, j);
            ASSERT_TRUE(share(static_cast<size_t>(i), static_cast<size_t>(j)));
        }
    }
    EXPECT_GT(conflicts, 300);
    EXPECT_LT(conflicts, 2700);
}

TEST(Scale, LiveBytesAreTheSumOverLifetimes)
{
    std::mt19937 rng(3);
    for (int round = 0; round < 500; ++round) {
        const auto buffers = random_buffers(rng, static_cast<int>(rng() % 30), 1 + static_cast<int>(rng() % 30), false);
        int last = -1;
        for (const Buffer &b : buffers) last = std::max(last, b.last);
        std::vector<int64_t> want(static_cast<size_t>(last + 1), 0);
        for (const Buffer &b : buffers)
            for (int t = std::max(b.first, 0); t <= b.last; ++t) want[t] += b.size;
        ASSERT_EQ(live_bytes(buffers), want) << round;
    }
}

TEST(Scale, StreamedJsonIsTheDump)
{
    StreamedJson doc;
    const std::vector<int32_t> shape{1, 2, 3}, none;
    const std::vector<std::string> names{"a", "tab\there", "caf\xc3\xa9", "bad \xff byte", "quote \" and \\"};
    doc.skeleton = {{"zeta", 1},
                    {"alpha",
                     {{"rows", doc.rows(names.size(), {"name", "shape", "n", "flag", "none"},
                                        [&](size_t i, StreamedJson::Row &row) {
                                            row[0] = std::string_view(names[i]);
                                            row[1] = i % 2 ? &shape : &none;
                                            row[2] = static_cast<int64_t>(i) - 2;
                                            row[3] = i % 2 == 0;
                                            row[4] = nullptr;
                                        })},
                      {"empty", doc.rows(0, {"x"}, nullptr)},
                      {"values", doc.array(3,
                                           [](size_t i) {
                                               return nlohmann::json{{"i", i}, {"f", 0.5}};
                                           })},
                      {"pct", 12.25}}},
                    {"list", {1, "two", nullptr}}};
    std::ostringstream out;
    const uint64_t bytes = doc.write(out);
    EXPECT_EQ(bytes, out.str().size());
    const nlohmann::json whole = doc.whole();
    EXPECT_EQ(out.str(), whole.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
    // The compact form (large models' --json and --snapshot) is dump(-1): no whitespace at all.
    std::ostringstream compact;
    const uint64_t compact_bytes = doc.write(compact, true);
    EXPECT_EQ(compact_bytes, compact.str().size());
    EXPECT_EQ(compact.str(), whole.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    EXPECT_EQ(compact.str().find_first_of("\n"), std::string::npos);
    EXPECT_LT(compact.str().size() * 3, out.str().size() * 2);
    EXPECT_NE(out.str().find("\"bad \xef\xbf\xbd byte\""), std::string::npos);  // U+FFFD, as dump replaces it
    EXPECT_NE(out.str().find("\"tab\\there\""), std::string::npos);
    EXPECT_EQ(whole["alpha"]["rows"][1]["shape"], nlohmann::json({1, 2, 3}));
    EXPECT_EQ(whole["alpha"]["empty"], nlohmann::json::array());
}

TEST(Scale, SizesAndOffsetsBeyondTflmsIntegersAreNamed)
{
    // 2^31-1 int8 bytes fit TFLM's int, but aligned to 16 they are 2^31: AddBuffer's int overflows.
    auto big = SG{{{{1, 16}}, {{0x7fffffff}, 9, false, false, "huge"}}, {{ADD, {0, 0}, {1}}}, {0}, {1}};
    std::string what = error_of([&] { build_lifetimes(parse(test_models::build({big})), {}); });
    EXPECT_NE(what.find("subgraph 0 tensor 1 'huge' needs 2147483647 bytes, 2147483648 aligned"), std::string::npos)
        << what;
    // An offline offset near 2^31 plus the tensor's 64 bytes passes the planner's int.
    auto two = SG{{{{1, 16}}, {{1, 64}, 9, false, false, "late"}}, {{ADD, {0, 0}, {1}}}, {0}, {1}};
    what = error_of([&] { build_lifetimes(parse(test_models::build({two}, {-1, 0x7fffffc0})), {}); });
    EXPECT_NE(what.find("subgraph 0 tensor 1 'late' has the offline offset 2147483584 and 64 bytes"), std::string::npos)
        << what;
    EXPECT_EQ(error_of([&] { build_lifetimes(parse(test_models::build({two}, {-1, 0x7fffffb0})), {}); }), "");
    // A scratch request of 2^40 bytes (the kernels' int64 arithmetic) names its operator.
    what = error_of([&] { build_lifetimes(parse(test_models::build({two})), {{0, 0, int64_t{1} << 40, "x"}}); });
    EXPECT_NE(what.find("subgraph 0 operator 0 requests a scratch buffer (x) of 1099511627776 bytes"),
              std::string::npos)
        << what;
    // A kernel's persistent buffer beyond a 32-bit size_t: the step names it.
    const Model m = parse(test_models::build({two}));
    const Lifetimes l = build_lifetimes(m, {});
    KernelPrediction k;
    k.ops = {{OpKernel{}}};
    k.ops[0][0].init.push_back(KernelAlloc{KernelAlloc::Kind::Persistent, int64_t{1} << 33, 16, -1, "OpDataHuge"});
    what = error_of([&] { allocation_steps(m, l, k, abi_named("cortex-m"), 64); });
    EXPECT_NE(what.find("subgraph 0 operator 0 (ADD): OpDataHuge requests 8589934592 bytes"), std::string::npos)
        << what;
    EXPECT_EQ(error_of([&] { allocation_steps(m, l, k, abi_named("host"), 64); }), "");  // a 64-bit size_t holds it
}

TEST(Scale, CountsBeyondTheLimitsAreNamed)
{
    // kMaxOperators + 1 operators: one operator table referenced that many times (4 bytes each).
    namespace fb = arenascope::tflite;
    flatbuffers::FlatBufferBuilder b;
    auto op =
        fb::CreateOperator(b, 0, b.CreateVector(std::vector<int32_t>{0}), b.CreateVector(std::vector<int32_t>{0}));
    const std::vector<flatbuffers::Offset<fb::Operator>> ops(static_cast<size_t>(kMaxOperators) + 1, op);
    auto tensor = fb::CreateTensor(b, b.CreateVector(std::vector<int32_t>{1}), 9);
    auto sg = fb::CreateSubGraph(b, b.CreateVector(std::vector<flatbuffers::Offset<fb::Tensor>>{tensor}),
                                 b.CreateVector(std::vector<int32_t>{0}), b.CreateVector(std::vector<int32_t>{0}),
                                 b.CreateVector(ops));
    auto codes =
        b.CreateVector(std::vector<flatbuffers::Offset<fb::OperatorCode>>{fb::CreateOperatorCode(b, 0, 0, 1, 0)});
    fb::FinishModelBuffer(
        b, fb::CreateModel(b, 3, codes, b.CreateVector(std::vector<flatbuffers::Offset<fb::SubGraph>>{sg})));
    const std::string what = error_of([&] { read_model(b.GetBufferPointer(), b.GetSize()); });
    EXPECT_NE(what.find("the model has 1000001 operators in all, more than arenascope-plan's limit of 1000000"),
              std::string::npos)
        << what;
}
