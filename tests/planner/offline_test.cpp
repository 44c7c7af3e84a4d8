// The search for a better plan (plan_search) and writing a plan into a model as TFLM's offline
// plan (with_offline_plan, rewrite_offline_plan). Expected heads come from greedy_loses.h's
// hand-worked greedy plan and from a brute force over every first-fit order written here, apart
// from the planner's own first fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>

#include "arenascope/planner/offline_plan.h"
#include "arenascope/planner/plan.h"
#include "arenascope/planner/rewrite.h"
#include "arenascope/planner/writers.h"
#include "greedy_loses.h"
#include "random_graph.h"

using namespace arenascope::planner;

namespace {

// First fit over `order`, the plain way: each buffer at the lowest offset clear of every placed
// buffer live at the same time.
int64_t first_fit_head(const std::vector<Buffer> &b, const std::vector<int> &order)
{
    std::vector<int64_t> at(b.size(), -1);
    int64_t head = 0;
    for (int i : order) {
        int64_t c = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (size_t j = 0; j < b.size(); ++j)
                if (at[j] >= 0 && !(b[i].first > b[j].last || b[j].first > b[i].last) && c < at[j] + b[j].size &&
                    at[j] < c + b[i].size) {
                    c = at[j] + b[j].size;
                    moved = true;
                }
        }
        // The lowest clear offset is 0 or the end of a placed buffer: try them all, lowest first.
        std::vector<int64_t> starts{0};
        for (size_t j = 0; j < b.size(); ++j)
            if (at[j] >= 0) starts.push_back(at[j] + b[j].size);
        std::sort(starts.begin(), starts.end());
        for (int64_t s : starts) {
            const bool clear = std::none_of(b.begin(), b.end(), [&](const Buffer &o) {
                const size_t j = static_cast<size_t>(o.id);
                return at[j] >= 0 && !(b[i].first > o.last || o.first > b[i].last) && s < at[j] + o.size &&
                       at[j] < s + b[i].size;
            });
            if (clear) {
                c = s;
                break;
            }
        }
        at[i] = c;
        head = std::max(head, c + b[i].size);
    }
    return head;
}

int64_t brute_force_head(const std::vector<Buffer> &b)
{
    std::vector<int> order(b.size());
    std::iota(order.begin(), order.end(), 0);
    int64_t best = INT64_MAX;
    do best = std::min(best, first_fit_head(b, order));
    while (std::next_permutation(order.begin(), order.end()));
    return best;
}

std::vector<Buffer> greedy_loses_buffers()
{
    const std::vector<uint8_t> bytes = test_models::greedy_loses_model();
    return build_lifetimes(read_model(bytes.data(), bytes.size()), {}).buffers;
}

std::string temp_path(const std::string &name)
{
    return (std::filesystem::temp_directory_path() /
            ("arenascope-offline-test-" + std::to_string(::getpid()) + "-" + name))
        .string();
}

void write_file(const std::string &path, const std::vector<uint8_t> &bytes)
{
    ASSERT_TRUE(test_models::save(path, bytes)) << path;
}

// --write-offline-plan's defaults: Cortex-M, reference kernels, margin 10, the default search.
OfflineRewrite rewrite_file(const std::string &in)
{
    return rewrite_offline_plan(in, "out.tflite", abi_named("cortex-m"), 10, false, {}, kSearchDefaultBudget);
}

}  // namespace

TEST(Search, ReachesTheLowerBoundWhereEveryOrderingMisses)
{
    const std::vector<Buffer> b = greedy_loses_buffers();
    ASSERT_EQ(b.size(), 7u);  // the activations; the weights are constants
    EXPECT_EQ(plan_tflm_greedy(b).head, test_models::kGreedyLosesTflmHead);
    EXPECT_EQ(plan_best(b).head, test_models::kGreedyLosesTflmHead);
    EXPECT_EQ(lower_bound(b).bytes, test_models::kGreedyLosesBound);
    EXPECT_EQ(brute_force_head(b), test_models::kGreedyLosesBound);
    const SearchResult s = plan_search(b, plan_best(b), lower_bound(b).bytes);
    EXPECT_TRUE(s.searched);
    EXPECT_TRUE(s.exhausted);
    EXPECT_EQ(s.plan.head, test_models::kGreedyLosesBound);
    EXPECT_EQ(s.plan.planner, "search");
    EXPECT_EQ(check_plan(b, s.plan), "");
}

// Model graphs (random_graph.h: FULLY_CONNECTED and ADD) where TFLM's greedy plan and every
// ordering miss the lower bound and the search reaches it, within the default budget.
TEST(Search, ReachesTheLowerBoundOnModelGraphsWhereOrderingsMiss)
{
    for (const auto &[ops, seed] : {std::pair{50, 1u}, std::pair{100, 2u}}) {
        SCOPED_TRACE(std::to_string(ops) + " operators, seed " + std::to_string(seed));
        const std::vector<uint8_t> bytes = test_models::random_graph(ops, seed);
        const std::vector<Buffer> b = build_lifetimes(read_model(bytes.data(), bytes.size()), {}).buffers;
        const int64_t bound = lower_bound(b).bytes;
        ASSERT_GT(plan_tflm_greedy(b).head, bound);
        ASSERT_GT(plan_best(b).head, bound);
        const SearchResult s = plan_search(b, plan_best(b), bound);
        EXPECT_EQ(s.plan.head, bound);
        EXPECT_TRUE(s.exhausted);
        EXPECT_EQ(check_plan(b, s.plan), "");
    }
}

// Random small lifetimes: the search, given room, finds the best first-fit order's head (the
// brute force's) and says it searched everything; its plan always passes the checker.
TEST(Search, FindsTheBestFirstFitOrderOnRandomBuffers)
{
    std::mt19937 rng(18);
    int improved = 0;
    for (int round = 0; round < 300; ++round) {
        std::vector<Buffer> b(3 + rng() % 5);
        for (size_t i = 0; i < b.size(); ++i) {
            const int first = static_cast<int>(rng() % 6), len = static_cast<int>(rng() % 4);
            b[i] = Buffer{
                static_cast<int>(i), 0, static_cast<int>(i), -1, 0, static_cast<int64_t>(16 * (1 + rng() % 6)), first,
                first + len,         -1};
        }
        const Plan start = plan_best(b);
        const SearchResult s = plan_search(b, start, lower_bound(b).bytes, 100000000);
        SCOPED_TRACE("round " + std::to_string(round));
        ASSERT_EQ(check_plan(b, s.plan), "");
        ASSERT_TRUE(s.exhausted);
        ASSERT_EQ(s.plan.head, std::min(start.head, brute_force_head(b)));
        improved += s.plan.head < start.head;
    }
    EXPECT_GT(improved, 0);  // the instances exercise the search, not only the orderings
}

TEST(Search, StopsWithinItsBudgetWithAValidPlan)
{
    // 200 buffers of three scopes each, in a pattern the orderings do not solve tightly.
    std::vector<Buffer> b;
    std::mt19937 rng(7);
    for (int i = 0; i < 200; ++i)
        b.push_back(Buffer{i, 0, i, -1, 0, 16 * static_cast<int64_t>(1 + rng() % 9), i / 4, i / 4 + 1 + (i % 3), -1});
    const Plan start = plan_best(b);
    ASSERT_GT(start.head, lower_bound(b).bytes);
    const SearchResult s = plan_search(b, start, lower_bound(b).bytes, 5000);
    EXPECT_TRUE(s.searched);
    EXPECT_FALSE(s.exhausted);
    // The budget is checked as each node starts: it overshoots by at most one node's work and the
    // re-fits of one placement, under 2 n^2 steps for n buffers.
    EXPECT_GE(s.steps, 5000);
    EXPECT_LT(s.steps, 5000 + 2 * 200 * 200);
    EXPECT_LE(s.plan.head, start.head);
    EXPECT_EQ(check_plan(b, s.plan), "");
}

TEST(Search, DoesNotRunWhenTheStartReachesTheBound)
{
    std::vector<Buffer> b{{0, 0, 0, -1, 0, 64, 0, 1, -1}, {1, 0, 1, -1, 0, 32, 1, 2, -1}};
    const SearchResult s = plan_search(b, plan_best(b), lower_bound(b).bytes);
    EXPECT_FALSE(s.searched);
    EXPECT_TRUE(s.exhausted);
    EXPECT_EQ(s.steps, 0);
    EXPECT_EQ(s.plan.head, 96);
}

TEST(OfflinePlan, WrittenModelCarriesThePlanAndEveryOldByte)
{
    const std::vector<uint8_t> old = test_models::greedy_loses_model();
    const Model m = read_model(old.data(), old.size());
    const Lifetimes l = build_lifetimes(m, {});
    const SearchResult s = plan_search(l.buffers, plan_best(l.buffers), lower_bound(l.buffers).bytes);
    const std::vector<int32_t> offsets = offline_offsets(m, l, s.plan);
    ASSERT_EQ(offsets.size(), 12u);                                             // 7 activations, then 5 weights
    for (int t = 0; t < 7; ++t) EXPECT_EQ(offsets[t], s.plan.offsets[t]) << t;  // buffer id = tensor index here
    for (int t = 7; t < 12; ++t) EXPECT_EQ(offsets[t], -1) << t;

    const std::vector<uint8_t> out = with_offline_plan(old.data(), old.size(), offsets);
    // Every old byte after the header, in order, after one block of a multiple of 64 bytes.
    ASSERT_GT(out.size(), old.size());
    const size_t shift = out.size() - old.size();
    EXPECT_EQ(shift % 64, 0u);
    EXPECT_TRUE(std::equal(old.begin() + 4, old.begin() + 8, out.begin() + 4));
    EXPECT_TRUE(std::equal(old.begin() + 8, old.end(), out.begin() + 8 + static_cast<long>(shift)));
    // The block ends with the old first 8 bytes: the whole old file lies at `shift`.
    EXPECT_TRUE(std::equal(old.begin(), old.end(), out.begin() + static_cast<long>(shift)));

    // Read back: the plan, and the same model otherwise.
    const Model back = read_model(out.data(), out.size());
    EXPECT_EQ(back.offline_offsets, offsets);
    ASSERT_EQ(back.subgraphs.size(), m.subgraphs.size());
    for (size_t t = 0; t < m.subgraphs[0].tensors.size(); ++t) {
        const Tensor &a = m.subgraphs[0].tensors[t], &z = back.subgraphs[0].tensors[t];
        EXPECT_EQ(a.name, z.name);
        EXPECT_EQ(a.shape, z.shape);
        EXPECT_EQ(a.type, z.type);
        EXPECT_EQ(a.buffer, z.buffer);
    }
    // TFLM's greedy planner with the offline plan puts every tensor at its offset: the head is the plan's.
    const Lifetimes lb = build_lifetimes(back, {});
    const Plan g = plan_tflm_greedy(lb.buffers);
    EXPECT_EQ(g.head, test_models::kGreedyLosesBound);
    EXPECT_EQ(g.offsets, s.plan.offsets);

    // The buffers: the old ones unchanged (index and bytes), then the plan's words.
    const auto *fo = arenascope::tflite::GetModel(old.data());
    const auto *fn = arenascope::tflite::GetModel(out.data());
    ASSERT_EQ(fn->buffers()->size(), fo->buffers()->size() + 1);
    for (uint32_t i = 0; i < fo->buffers()->size(); ++i) {
        const auto *a = fo->buffers()->Get(i)->data(), *z = fn->buffers()->Get(i)->data();
        ASSERT_EQ(a == nullptr, z == nullptr) << i;
        if (a) {
            EXPECT_TRUE(a->size() == z->size() && std::equal(a->begin(), a->end(), z->begin())) << i;
        }
    }
    const auto *words = fn->buffers()->Get(fo->buffers()->size())->data();
    ASSERT_EQ(words->size(), 4u * (3 + 12));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(words->data()) % 16, reinterpret_cast<uintptr_t>(out.data()) % 16);
    uint32_t w[3];
    std::memcpy(w, words->data(), sizeof w);
    EXPECT_EQ(w[0], 1u);   // format version
    EXPECT_EQ(w[1], 1u);   // subgraphs
    EXPECT_EQ(w[2], 12u);  // tensors
}

TEST(OfflinePlan, AnExistingPlanIsReplacedNotAdded)
{
    const std::vector<uint8_t> first = test_models::greedy_loses_model();
    std::vector<int32_t> a(12, -1);  // 7 activations, then the 5 weights (constants: -1)
    a[0] = 0, a[1] = 768, a[2] = 2560, a[3] = 3328, a[4] = 3584, a[5] = 4352, a[6] = 6400;  // no two share a byte
    const std::vector<uint8_t> once = with_offline_plan(first.data(), first.size(), a);
    const std::vector<int32_t> z(12, -1);
    const std::vector<uint8_t> twice = with_offline_plan(once.data(), once.size(), z);
    const auto *fm = arenascope::tflite::GetModel(twice.data());
    int plans = 0;
    for (const auto *md : *fm->metadata()) plans += md->name()->str() == "OfflineMemoryAllocation";
    EXPECT_EQ(plans, 1);
    EXPECT_EQ(read_model(twice.data(), twice.size()).offline_offsets, z);
    EXPECT_EQ(read_model(once.data(), once.size()).offline_offsets, a);
}

TEST(OfflinePlan, TheWrongNumberOfOffsetsIsRefused)
{
    const std::vector<uint8_t> m = test_models::greedy_loses_model();
    EXPECT_THROW(with_offline_plan(m.data(), m.size(), {0, 0}), ModelError);
    std::vector<uint8_t> broken = m;
    broken[0] ^= 0x40;  // the root offset points elsewhere
    EXPECT_THROW(with_offline_plan(broken.data(), broken.size(), std::vector<int32_t>(7, -1)), ModelError);
}

namespace {

// Where the Model's field `id` is stored: the byte of its uoffset (0 when absent).
size_t model_field_at(const std::vector<uint8_t> &bytes, int id)
{
    const auto *table = reinterpret_cast<const flatbuffers::Table *>(arenascope::tflite::GetModel(bytes.data()));
    const uint8_t *vtable = table->GetVTable();
    const auto vt = static_cast<flatbuffers::voffset_t>(4 + 2 * id);
    if (vt >= flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable)) return 0;
    const auto at = flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable + vt);
    return at ? static_cast<size_t>(reinterpret_cast<const uint8_t *>(table) - bytes.data()) + at : 0;
}

const test_models::ModelExtras kSignature{{{"serving_default", {{"x", 0}}, {{"y", 6}, {"t5", 5}}, 0}}};

}  // namespace

// The converter writes a SignatureDef per model (Model.signature_defs, field 7): the written Model
// copies it, and it reads back the same, string for string.
TEST(OfflinePlan, TheModelsSignaturesAreKept)
{
    const std::vector<uint8_t> old = test_models::greedy_loses_model(kSignature);
    const std::vector<uint8_t> out = with_offline_plan(old.data(), old.size(), std::vector<int32_t>(12, -1));
    const auto *sigs = arenascope::tflite::GetModel(out.data())->signature_defs();
    ASSERT_NE(sigs, nullptr);
    ASSERT_EQ(sigs->size(), 1u);
    const auto *sig = sigs->Get(0);
    EXPECT_EQ(sig->signature_key()->str(), "serving_default");
    EXPECT_EQ(sig->subgraph_index(), 0u);
    ASSERT_EQ(sig->inputs()->size(), 1u);
    EXPECT_EQ(sig->inputs()->Get(0)->name()->str(), "x");
    EXPECT_EQ(sig->inputs()->Get(0)->tensor_index(), 0u);
    ASSERT_EQ(sig->outputs()->size(), 2u);
    EXPECT_EQ(sig->outputs()->Get(1)->name()->str(), "t5");
    EXPECT_EQ(sig->outputs()->Get(1)->tensor_index(), 5u);
    // Without a signature the new Model has no field 7 either.
    const std::vector<uint8_t> bare = test_models::greedy_loses_model();
    const std::vector<uint8_t> bare_out = with_offline_plan(bare.data(), bare.size(), std::vector<int32_t>(12, -1));
    EXPECT_EQ(arenascope::tflite::GetModel(bare_out.data())->signature_defs(), nullptr);
}

// Issue 32: the schema subset lacked signature_defs, so the verifier never checked where it
// pointed, and the writer copied an offset that pointed past the file's end into the model it
// wrote (or, with the field's own bytes past the end, built it from whatever heap followed).
// Such a model is now corrupt to the reader and to the writer alike; nothing is written.
TEST(OfflinePlan, ASignaturePointingOutsideTheFileIsRefused)
{
    std::vector<uint8_t> bad = test_models::greedy_loses_model(kSignature);
    const size_t at = model_field_at(bad, 7);
    ASSERT_GT(at, 0u);
    const uint32_t past_the_end = static_cast<uint32_t>(bad.size() - at + 64);
    std::memcpy(&bad[at], &past_the_end, 4);
    EXPECT_THROW(read_model(bad.data(), bad.size()), ModelError);
    try {
        with_offline_plan(bad.data(), bad.size(), std::vector<int32_t>(12, -1));
        ADD_FAILURE() << "a model whose signature_defs points past its end was rewritten";
    } catch (const ModelError &e) {
        EXPECT_NE(std::string(e.what()).find("corrupt or truncated"), std::string::npos) << e.what();
    }
    // The field itself past the end (its vtable entry patched): the copy read 4 bytes after the
    // file, which AddressSanitizer reports in the sanitized build of this test.
    std::vector<uint8_t> beyond = test_models::greedy_loses_model(kSignature);
    const auto *table = reinterpret_cast<const flatbuffers::Table *>(arenascope::tflite::GetModel(beyond.data()));
    const size_t table_at = static_cast<size_t>(reinterpret_cast<const uint8_t *>(table) - beyond.data());
    const size_t entry_at = static_cast<size_t>(table->GetVTable() - beyond.data()) + 4 + 2 * 7;
    ASSERT_LT(beyond.size() - table_at, 0xffffu);
    const auto to_the_end = static_cast<uint16_t>(beyond.size() - table_at);
    std::memcpy(&beyond[entry_at], &to_the_end, 2);
    EXPECT_THROW(with_offline_plan(beyond.data(), beyond.size(), std::vector<int32_t>(12, -1)), ModelError);
}

// A fuzzed model (tests/fixtures/fuzz/budget/empty_buffer_list) with an empty buffer list, whose two tensors refer to buffer 0: with the plan's words
// appended as buffer 0 they would have become constants holding the plan. The writer puts the
// empty sentinel at 0 first (it was refused before; earlier still, the copy held the plan as data).
TEST(OfflinePlan, AModelWithoutBuffersGetsTheEmptySentinel)
{
    std::ifstream in(std::string(ARENASCOPE_FUZZ_REGRESSIONS) + "/budget/empty_buffer_list", std::ios::binary);
    const std::vector<uint8_t> old{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    ASSERT_EQ(old.size(), 344u);
    const auto *fo = arenascope::tflite::GetModel(old.data());
    ASSERT_NE(fo->buffers(), nullptr);
    ASSERT_EQ(fo->buffers()->size(), 0u);
    const Model m = read_model(old.data(), old.size(), false);
    ASSERT_EQ(m.subgraphs.size(), 1u);
    ASSERT_EQ(m.subgraphs[0].tensors.size(), 2u);
    const std::vector<int32_t> offsets{0, 64};
    const std::vector<uint8_t> out = with_offline_plan(old.data(), old.size(), offsets);
    const auto *fn = arenascope::tflite::GetModel(out.data());
    ASSERT_EQ(fn->buffers()->size(), 2u);
    EXPECT_EQ(fn->buffers()->Get(0)->data(), nullptr);  // the sentinel
    ASSERT_NE(fn->buffers()->Get(1)->data(), nullptr);
    EXPECT_EQ(fn->buffers()->Get(1)->data()->size(), 4u * (3 + 2));
    ASSERT_EQ(fn->metadata()->size(), 1u);
    EXPECT_EQ(fn->metadata()->Get(0)->buffer(), 1u);
    const Model back = read_model(out.data(), out.size());
    EXPECT_EQ(back.offline_offsets, offsets);
    for (const Tensor &t : back.subgraphs[0].tensors) EXPECT_FALSE(t.has_data) << t.index;
}

// External buffers (Model fields 8, 9) keep data at offsets from the file's start, which the
// block inserted at byte 8 would move: refused, with the reason.
TEST(OfflinePlan, ExternalBuffersAreRefused)
{
    const std::vector<uint8_t> m = test_models::greedy_loses_model({{}, {{1, 4096, 64}}});
    ASSERT_GT(model_field_at(m, 9), 0u);
    EXPECT_NO_THROW(read_model(m.data(), m.size()));  // the planner still plans it
    try {
        with_offline_plan(m.data(), m.size(), std::vector<int32_t>(12, -1));
        ADD_FAILURE() << "a model with external buffers was rewritten";
    } catch (const ModelError &e) {
        // Both fields are there; the first one met is named.
        EXPECT_NE(std::string(e.what()).find("(Model.external_buffer_groups)"), std::string::npos) << e.what();
    }
}

// TFLM reads every "OfflineMemoryAllocation" entry in order and keeps the last one's offsets
// (micro_allocation_info.cc GetOfflinePlannedOffsets has no break), failing at the first with
// the wrong count: the reader does the same (it kept the first one's before).
TEST(OfflinePlan, WithTwoPlansTheLastCounts)
{
    std::vector<int32_t> first(12, -1), last(12, -1);
    for (int t = 0; t < 7; ++t) first[t] = 2048 * t, last[t] = 4096 * t;
    const test_models::ModelExtras two{{}, {}, {last}};
    const std::vector<uint8_t> m = test_models::build({test_models::greedy_loses_sg()}, first, two);
    EXPECT_EQ(read_model(m.data(), m.size()).offline_offsets, last);
    // The first with the wrong count: TFLM fails there, whatever follows.
    const std::vector<uint8_t> bad =
        test_models::build({test_models::greedy_loses_sg()}, std::vector<int32_t>(11, -1), two);
    EXPECT_THROW(read_model(bad.data(), bad.size()), OfflinePlanError);
    // The rewrite drops both and writes one.
    const std::vector<uint8_t> out = with_offline_plan(m.data(), m.size(), std::vector<int32_t>(12, -1));
    const auto *fm = arenascope::tflite::GetModel(out.data());
    ASSERT_EQ(fm->metadata()->size(), 1u);
    EXPECT_EQ(read_model(out.data(), out.size()).offline_offsets, std::vector<int32_t>(12, -1));
}

// A metadata entry that names a buffer past the list would name the plan's words once they are
// appended: refused, not silently redirected.
TEST(OfflinePlan, MetadataNamingAMissingBufferIsRefused)
{
    const std::vector<uint8_t> ok = test_models::greedy_loses_model();
    const uint32_t buffers = arenascope::tflite::GetModel(ok.data())->buffers()->size();
    const std::vector<uint8_t> m =
        test_models::build({test_models::greedy_loses_sg()}, {}, {{}, {}, {}, {{"min_runtime_version", buffers}}});
    try {
        with_offline_plan(m.data(), m.size(), std::vector<int32_t>(12, -1));
        ADD_FAILURE() << "a metadata entry naming a missing buffer was rewritten";
    } catch (const ModelError &e) {
        EXPECT_NE(std::string(e.what()).find("metadata 'min_runtime_version' refers to buffer " +
                                             std::to_string(buffers) + ", but the model has " +
                                             std::to_string(buffers) + " buffers"),
                  std::string::npos)
            << e.what();
    }
    // Naming an existing buffer, it is kept as it was.
    const std::vector<uint8_t> fine =
        test_models::build({test_models::greedy_loses_sg()}, {}, {{}, {}, {}, {{"min_runtime_version", 0}}});
    const std::vector<uint8_t> out = with_offline_plan(fine.data(), fine.size(), std::vector<int32_t>(12, -1));
    const auto *md = arenascope::tflite::GetModel(out.data())->metadata();
    ASSERT_EQ(md->size(), 2u);
    EXPECT_EQ(md->Get(0)->name()->str(), "min_runtime_version");
    EXPECT_EQ(md->Get(0)->buffer(), 0u);
}

TEST(Rewrite, SavesTheGapAndReportsBeforeAndAfter)
{
    const std::string in = temp_path("in.tflite");
    write_file(in, test_models::greedy_loses_model());
    const OfflineRewrite r = rewrite_file(in);
    ASSERT_EQ(r.refused, "");
    EXPECT_EQ(r.before.greedy.head, test_models::kGreedyLosesTflmHead);
    EXPECT_EQ(r.after.greedy.head, test_models::kGreedyLosesBound);
    // The head shrinks by 768 B and nothing else in the arena changes: the minimum follows it.
    EXPECT_EQ(r.before.minimum.bytes - r.after.minimum.bytes, 768);
    EXPECT_EQ(r.after.model.offline_offsets.size(), 12u);
    const std::string table = rewrite_table(r, "out.tflite");
    EXPECT_NE(table.find("head (non-persistent)            3840       3072        768"), std::string::npos) << table;
    std::filesystem::remove(in);
}

TEST(Rewrite, NoSavingIsSaidAndNothingIsWritten)
{
    const std::string in = temp_path("tight.tflite");
    test_models::SG sg{{{{1, 64}}, {{1, 64}}, {{1, 64}}}, {{19, {0}, {1}}, {19, {1}, {2}}}, {0}, {2}};
    write_file(in, test_models::build({sg}));
    const OfflineRewrite r = rewrite_file(in);
    EXPECT_TRUE(r.no_saving);
    EXPECT_TRUE(r.bytes.empty());
    EXPECT_NE(r.refused.find("already reaches the lower bound (128 B"), std::string::npos) << r.refused;
    std::filesystem::remove(in);
}

// A broken offline plan on a model where no plan saves anything: nothing is written, and the
// refusal says which check the model's own plan fails, that the figures leave it out, and what to
// do (issue 37: it said "nothing written" and no more).
TEST(Rewrite, NoSavingOnABrokenOfflinePlanSaysWhyItIsBroken)
{
    const std::string in = temp_path("tight-broken.tflite");
    test_models::SG sg{{{{1, 64}}, {{1, 64}}, {{1, 64}}}, {{19, {0}, {1}}, {19, {1}, {2}}}, {0}, {2}};
    const std::string tail =
        ". These figures are TFLM's plan without it, but it stays in the model, and TFLM would use it as it is (or "
        "reject the model): remove that metadata entry (re-export the model without it) and TFLM plans as these "
        "figures say";
    const std::string bound = "TFLM's greedy plan already reaches the lower bound (128 B live at once, in scope 1): "
                              "no plan can make the head smaller; nothing written. The model's own offline plan is "
                              "broken: ";
    struct Case {
        std::vector<int32_t> plan;
        std::string why;
    };
    for (const Case &c : std::vector<Case>{
             {{0, 0, -1},  // tensors 0 and 1, live together, on the same bytes
              "the model's offline plan (metadata 'OfflineMemoryAllocation') puts (tensor 0) at 0 and (tensor 1) at "
              "0: they are live at the same time and share bytes; fix the offline plan"},
             {{0, 64},  // a header that counts 2 tensors of 3
              "metadata 'OfflineMemoryAllocation' lists 2 offsets but the model has 3 tensors (TFLM rejects this "
              "model)"},
             {{-5, -1, -1},
              "metadata 'OfflineMemoryAllocation' gives tensor 0 the offset -5; offsets are bytes from the arena "
              "start, or -1 for online"}}) {
        write_file(in, test_models::build({sg}, c.plan));
        const OfflineRewrite r = rewrite_file(in);
        EXPECT_TRUE(r.no_saving);
        EXPECT_TRUE(r.bytes.empty());
        EXPECT_EQ(r.broken_plan, c.why);
        EXPECT_EQ(r.refused, bound + c.why + tail);
    }
    std::filesystem::remove(in);
}

// A model that carries TFLM's own greedy plan as its offline plan: the budget's best plan is
// searched without it (and says it replaces it), and the rewrite replaces it.
TEST(Rewrite, AWorseOfflinePlanIsReplaced)
{
    const std::vector<uint8_t> m = test_models::greedy_loses_model();
    const Model model = read_model(m.data(), m.size());
    const Lifetimes l = build_lifetimes(model, {});
    const std::vector<uint8_t> pinned =
        with_offline_plan(m.data(), m.size(), offline_offsets(model, l, plan_tflm_greedy(l.buffers)));
    const std::string in = temp_path("pinned.tflite");
    write_file(in, pinned);
    const Budget b = make_budget(in);
    EXPECT_EQ(b.greedy.head, test_models::kGreedyLosesTflmHead);  // TFLM follows the model's plan
    EXPECT_EQ(b.best.head, test_models::kGreedyLosesBound);
    EXPECT_TRUE(b.best_replaces_offline_plan);
    EXPECT_EQ(b.minimum.bytes - b.best_minimum, 768);
    const OfflineRewrite r = rewrite_file(in);
    ASSERT_EQ(r.refused, "");
    EXPECT_EQ(r.after.greedy.head, test_models::kGreedyLosesBound);
    EXPECT_NE(rewrite_table(r, "out.tflite").find("the model's own offline plan is replaced"), std::string::npos);
    std::filesystem::remove(in);
}

// A broken offline plan (two live tensors at the same offset) cannot be planned, but it can be
// replaced: "before" is then TFLM's plan without it.
TEST(Rewrite, ABrokenOfflinePlanIsReplaced)
{
    const std::vector<uint8_t> m = test_models::greedy_loses_model();
    std::vector<int32_t> zeros(12, -1);
    for (int t = 0; t < 7; ++t) zeros[t] = 0;
    const std::string in = temp_path("broken-plan.tflite");
    write_file(in, with_offline_plan(m.data(), m.size(), zeros));
    EXPECT_THROW(make_budget(in), ModelError);
    const OfflineRewrite r = rewrite_file(in);
    ASSERT_EQ(r.refused, "");
    EXPECT_NE(r.broken_plan.find("share bytes"), std::string::npos) << r.broken_plan;
    EXPECT_EQ(r.before.greedy.head, test_models::kGreedyLosesTflmHead);
    EXPECT_EQ(r.after.greedy.head, test_models::kGreedyLosesBound);
    std::filesystem::remove(in);
}

// Only a fault of the offline plan itself is excused (and the plan replaced): a tensor merely
// named like it, with a fault of its own, is the model's fault, said with the model's path.
TEST(Rewrite, ATensorNamedLikeThePlanIsNotExcused)
{
    test_models::SG sg{{{{1, 64}, 9, false, false, "OfflineMemoryAllocation__"}, {{1, -1}}, {{1, 64}}},
                       {{19, {0}, {1}}, {19, {1}, {2}}},
                       {0},
                       {2}};
    const std::string in = temp_path("named.tflite");
    write_file(in, test_models::build({sg}));
    try {
        rewrite_file(in);
        ADD_FAILURE() << "a model with a negative dimension was rewritten";
    } catch (const OfflinePlanError &e) {
        ADD_FAILURE() << "taken for a broken offline plan: " << e.what();
    } catch (const ModelError &e) {
        EXPECT_EQ(std::string(e.what()).rfind(in + ": ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("negative dimension"), std::string::npos) << e.what();
    }
    std::filesystem::remove(in);
}

// A smaller head that does not shrink the minimum arena is no saving: on this graph the minimum
// is set by TFLM's planner arrays (40 B a buffer) while it plans, not by the head.
TEST(Rewrite, AHeadSavingThatLeavesTheArenaIsRefused)
{
    const std::string in = temp_path("graph.tflite");
    write_file(in, test_models::random_graph(100, 2));
    const Budget b = make_budget(in);
    ASSERT_LT(b.best.head, b.greedy.head);
    EXPECT_EQ(b.best_minimum, b.minimum.bytes);
    EXPECT_NE(budget_table(b).find("but the minimum arena stays " + std::to_string(b.minimum.bytes) + " B"),
              std::string::npos);
    const OfflineRewrite r = rewrite_file(in);
    EXPECT_TRUE(r.no_saving);
    EXPECT_TRUE(r.bytes.empty());
    EXPECT_NE(r.refused.find("smaller, but the minimum arena stays"), std::string::npos) << r.refused;
    std::filesystem::remove(in);
}

// A plan the reader refuses (a negative offset other than -1) is replaced too; the model's other
// faults are not excused.
TEST(Rewrite, AnUnreadableOfflinePlanIsReplaced)
{
    const std::vector<uint8_t> m = test_models::greedy_loses_model();
    // A valid plan (all online), then tensor 0's word patched to -2.
    std::vector<uint8_t> patched = with_offline_plan(m.data(), m.size(), std::vector<int32_t>(12, -1));
    const auto *fm = arenascope::tflite::GetModel(patched.data());
    const auto *words = fm->buffers()->Get(fm->buffers()->size() - 1)->data();
    const size_t at = static_cast<size_t>(words->data() - patched.data()) + 12;  // tensor 0's offset
    const int32_t minus_two = -2;
    std::memcpy(&patched[at], &minus_two, 4);
    EXPECT_THROW(read_model(patched.data(), patched.size()), ModelError);
    const std::string in = temp_path("unreadable-plan.tflite");
    write_file(in, patched);
    const OfflineRewrite r = rewrite_file(in);
    ASSERT_EQ(r.refused, "");
    EXPECT_NE(r.broken_plan.find("the offset -2"), std::string::npos) << r.broken_plan;
    EXPECT_EQ(r.after.greedy.head, test_models::kGreedyLosesBound);
    std::filesystem::remove(in);
}
