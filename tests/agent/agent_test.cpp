// Unit tests of the arenascope target agent on the host (GoogleTest). Expected values are
// computed here from the test's own buffers and from the hand-written ABI fixture
// (target_agent/abi/agent_abi_v1.json), never from the agent's code.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "arenascope/agent.h"

namespace {

constexpr uint32_t kCanary = 0xAAAAAAAAu;
constexpr uint32_t kPaint = 0xCCCCCCCCu;
constexpr uint8_t kUntouched = 0x11;

struct TestRam {
    alignas(16) uint8_t arena[1024];
    alignas(4) uint8_t guard[64];
    alignas(4) uint32_t stack[64];
};

class Agent : public ::testing::Test {
protected:
    TestRam ram{};
    arenascope_region_t table[4]{};

    void SetUp() override
    {
        std::memset(&ram, kUntouched, sizeof ram);
        std::memset(&arenascope_descriptor, 0, sizeof arenascope_descriptor);  // a fresh .bss
        arenascope_init(ram.stack, ram.stack + 64, ram.guard, ram.guard + sizeof ram.guard);
    }

    static uint32_t word_at(const uint8_t *p)
    {
        uint32_t w;
        std::memcpy(&w, p, 4);
        return w;
    }
};

#define FIELD(type, name) std::pair<const std::string, size_t>(#name, offsetof(type, name))

namespace {
// Every ABI struct's field offsets and size as this compiler lays them out, by the fixture's names.
using Layout = std::map<std::string, std::map<std::string, size_t>>;
Layout c_layout()
{
    const size_t kEnd = offsetof(arenascope_descriptor_t, arena) + sizeof(arenascope_descriptor::arena);
    return {
        {"region",
         {FIELD(arenascope_region_t, offset_bytes),
          FIELD(arenascope_region_t, size_bytes),
          FIELD(arenascope_region_t, id),
          FIELD(arenascope_region_t, kind),
          FIELD(arenascope_region_t, flags),
          FIELD(arenascope_region_t, first_use),
          FIELD(arenascope_region_t, last_use),
          {"_size", sizeof(arenascope_region_t)}}},
        {"band",
         {FIELD(arenascope_band_t, low_addr),
          FIELD(arenascope_band_t, high_addr),
          FIELD(arenascope_band_t, touched_lo),
          FIELD(arenascope_band_t, touched_hi),
          {"_size", sizeof(arenascope_band_t)}}},
        {"arena",
         {FIELD(arenascope_arena_t, base_addr),
          FIELD(arenascope_arena_t, regions_addr),
          FIELD(arenascope_arena_t, model_addr),
          FIELD(arenascope_arena_t, size_bytes),
          FIELD(arenascope_arena_t, head_bytes),
          FIELD(arenascope_arena_t, temp_bytes),
          FIELD(arenascope_arena_t, tail_offset),
          FIELD(arenascope_arena_t, model_size_bytes),
          FIELD(arenascope_arena_t, canary),
          FIELD(arenascope_arena_t, alignment_bytes),
          FIELD(arenascope_arena_t, region_count),
          FIELD(arenascope_arena_t, region_capacity),
          FIELD(arenascope_arena_t, flags),
          FIELD(arenascope_arena_t, reserved),
          {"_size", sizeof(arenascope_arena_t)}}},
        {"descriptor",
         {FIELD(arenascope_descriptor_t, magic),
          FIELD(arenascope_descriptor_t, abi_major),
          FIELD(arenascope_descriptor_t, abi_minor),
          FIELD(arenascope_descriptor_t, descriptor_size),
          FIELD(arenascope_descriptor_t, addr_size),
          FIELD(arenascope_descriptor_t, arena_capacity),
          FIELD(arenascope_descriptor_t, arena_count),
          FIELD(arenascope_descriptor_t, arena_entry_size),
          FIELD(arenascope_descriptor_t, region_entry_size),
          FIELD(arenascope_descriptor_t, flags),
          FIELD(arenascope_descriptor_t, seq),
          FIELD(arenascope_descriptor_t, layout_generation),
          FIELD(arenascope_descriptor_t, reserved),
          FIELD(arenascope_descriptor_t, invoke_phase),
          FIELD(arenascope_descriptor_t, canary_pattern),
          FIELD(arenascope_descriptor_t, stack_paint_pattern),
          FIELD(arenascope_descriptor_t, fault_record_addr),
          FIELD(arenascope_descriptor_t, stack),
          FIELD(arenascope_descriptor_t, guard),
          FIELD(arenascope_descriptor_t, arena),
          {"_end_one_arena", offsetof(arenascope_descriptor_t, seq_check)},
          {"_size_one_arena", sizeof(arenascope_descriptor_t)}}},
        {"descriptor_end",  // offsets from the end of the arena entries (ABI 1.1)
         {{"seq_check", offsetof(arenascope_descriptor_t, seq_check) - kEnd},
          {"reserved_end", offsetof(arenascope_descriptor_t, reserved_end) - kEnd},
          {"_size", offsetof(arenascope_descriptor_t, reserved_end) + 2 - kEnd}}},
    };
}
}  // namespace

TEST(AbiLayout, MatchesGoldenFixture)
{
    std::ifstream in(ARENASCOPE_ABI_FIXTURE);
    ASSERT_TRUE(in) << "cannot open " << ARENASCOPE_ABI_FIXTURE;
    const auto abi = nlohmann::json::parse(in);
    const auto &layout = abi["layouts"][std::to_string(sizeof(void *))];

    const Layout c = c_layout();
    for (const auto &[type, fields] : c) {
        ASSERT_TRUE(layout.contains(type)) << type;
        EXPECT_EQ(layout[type].size(), fields.size()) << "field count of " << type;
        for (const auto &[name, offset] : fields) {
            ASSERT_TRUE(layout[type].contains(name)) << type << "." << name << " missing from the fixture";
            EXPECT_EQ(layout[type][name].get<size_t>(), offset) << type << "." << name;
        }
    }
    // Field order in "types" is the declaration order: offsets must increase along it.
    for (const auto &[type, decl] : abi["types"].items()) {
        size_t last = 0;
        bool first = true;
        for (const auto &f : decl) {
            const size_t off = layout[type][f[0].get<std::string>()].get<size_t>();
            EXPECT_TRUE(first || off > last) << type << "." << f[0];
            last = off;
            first = false;
        }
    }
}

TEST_F(Agent, InitWritesHeaderAndMagicAndFillsGuard)
{
    const auto &d = arenascope_descriptor;
    EXPECT_EQ(0, std::memcmp(d.magic, "ARENASCP", 8));
    EXPECT_EQ(d.abi_major, 1);
    EXPECT_EQ(d.abi_minor, 1);
    EXPECT_EQ(d.descriptor_size, sizeof(void *) == 8 ? 184 : 132);
    EXPECT_EQ(d.addr_size, sizeof(void *));
    EXPECT_EQ(d.arena_capacity, 1);
    EXPECT_EQ(d.arena_count, 0);
    EXPECT_EQ(d.arena_entry_size, sizeof(void *) == 8 ? 80 : 56);
    EXPECT_EQ(d.region_entry_size, 16);
    EXPECT_EQ(d.canary_pattern, kCanary);
    EXPECT_EQ(d.stack_paint_pattern, kPaint);
    EXPECT_EQ(d.stack.low_addr, reinterpret_cast<uintptr_t>(&ram.stack[0]));
    EXPECT_EQ(d.stack.high_addr, reinterpret_cast<uintptr_t>(&ram.stack[64]));
    EXPECT_EQ(d.guard.low_addr, reinterpret_cast<uintptr_t>(&ram.guard[0]));
    EXPECT_EQ(d.guard.high_addr, reinterpret_cast<uintptr_t>(&ram.guard[64]));
    EXPECT_EQ(d.seq % 2, 0u);
    for (unsigned i = 0; i < sizeof ram.guard; i += 4) {
        EXPECT_EQ(word_at(&ram.guard[i]), kCanary) << "guard byte " << i;
    }
    EXPECT_EQ(ram.arena[sizeof ram.arena - 1], kUntouched);  // the word below the guard
}

TEST_F(Agent, ArenaAddFillsEntryAndRefusesMoreThanCapacity)
{
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    ASSERT_EQ(a, &arenascope_descriptor.arena[0]);
    EXPECT_EQ(arenascope_descriptor.arena_count, 1);
    EXPECT_EQ(a->base_addr, reinterpret_cast<uintptr_t>(ram.arena));
    EXPECT_EQ(a->regions_addr, reinterpret_cast<uintptr_t>(table));
    EXPECT_EQ(a->size_bytes, 1024u);
    EXPECT_EQ(a->tail_offset, 1024u);
    EXPECT_EQ(a->head_bytes, 0u);
    EXPECT_EQ(a->alignment_bytes, 16);
    EXPECT_EQ(a->region_capacity, 4);
    EXPECT_EQ(a->region_count, 0);
    EXPECT_EQ(arenascope_arena_add(ram.arena, 16, 16, nullptr, 0), nullptr);  // ARENASCOPE_MAX_ARENAS == 1
    EXPECT_EQ(arenascope_descriptor.arena_count, 1);
}

TEST_F(Agent, PublishAppendsCopiesAndBumpsLayoutGeneration)
{
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    const uint16_t gen0 = arenascope_descriptor.layout_generation;
    arenascope_region_t r = {512, 96, 7, ARENASCOPE_KIND_TENSOR, ARENASCOPE_REGION_MODEL_INPUT, 0, 3};
    EXPECT_EQ(arenascope_region_publish(a, &r), 0);
    r.offset_bytes = 0;
    EXPECT_EQ(arenascope_region_publish(a, &r), 1);
    EXPECT_EQ(a->region_count, 2);
    EXPECT_EQ(table[0].offset_bytes, 512u);  // a copy, not a reference to r
    EXPECT_EQ(table[0].size_bytes, 96u);
    EXPECT_EQ(table[0].id, 7);
    EXPECT_EQ(table[0].kind, ARENASCOPE_KIND_TENSOR);
    EXPECT_EQ(table[0].flags, ARENASCOPE_REGION_MODEL_INPUT);
    EXPECT_EQ(table[0].first_use, 0);
    EXPECT_EQ(table[0].last_use, 3);
    EXPECT_EQ(arenascope_descriptor.layout_generation, gen0 + 2);
    EXPECT_EQ(arenascope_region_publish(a, &r), 2);
    EXPECT_EQ(arenascope_region_publish(a, &r), 3);
    EXPECT_EQ(arenascope_region_publish(a, &r), -1);  // full
    EXPECT_EQ(a->region_count, 4);
    EXPECT_EQ(arenascope_descriptor.layout_generation, gen0 + 4);  // a refused publish changes nothing
    arenascope_regions_clear(a);
    EXPECT_EQ(a->region_count, 0);
    EXPECT_EQ(arenascope_descriptor.layout_generation, gen0 + 5);
}

TEST_F(Agent, TableAbsentRefusesPublish)
{
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, nullptr, 0);
    arenascope_region_t r = {0, 16, 0, ARENASCOPE_KIND_TENSOR, 0, 1, 1};
    EXPECT_EQ(arenascope_region_publish(a, &r), -1);
}

TEST_F(Agent, SeqlockIsEvenBetweenCallsAndAdvancesByTwoPerUpdate)
{
    uint16_t seq = arenascope_descriptor.seq;
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    EXPECT_EQ(arenascope_descriptor.seq, seq + 2);
    seq = arenascope_descriptor.seq;
    arenascope_arena_set_marks(a, 64, 96, 800);
    EXPECT_EQ(arenascope_descriptor.seq, seq + 2);
    seq = arenascope_descriptor.seq;
    arenascope_canary_fill(a);
    EXPECT_EQ(arenascope_descriptor.seq, seq + 2);
    seq = arenascope_descriptor.seq;
    arenascope_measure();
    EXPECT_EQ(arenascope_descriptor.seq, seq + 2);
    seq = arenascope_descriptor.seq;
    arenascope_arena_set_model(a, ram.arena, 10);
    EXPECT_EQ(arenascope_descriptor.seq, seq + 2);
    EXPECT_EQ(arenascope_descriptor.seq % 2, 0u);
    EXPECT_EQ(arenascope_descriptor.seq_check, arenascope_descriptor.seq);  // ABI 1.1: the seq it ended with
}

// ABI 1.1's one-read rule under real concurrency: a writer thread updates the marks with no idle
// time, keeping temp = head + 32 and tail = head + 512; a reader copies the descriptor byte by
// byte in ascending order (as a MEM-AP burst reads) and trusts a copy only when seq is even and
// equal to seq_check. Every trusted copy must hold the invariant; some must be trusted.
TEST_F(Agent, OneAscendingReadIsConsistentWhenSeqEqualsSeqCheck)
{
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    arenascope_arena_set_marks(a, 0, 32, 512);  // the invariant holds from the first trusted copy on
    volatile bool stop = false;
    std::thread writer([&] {
        for (uint32_t h = 0; !stop; h = (h + 16) % 256) {
            arenascope_arena_set_marks(a, h, h + 32, h + 512);
        }
    });
    const size_t arena0 = offsetof(arenascope_descriptor_t, arena);
    int trusted = 0, rejected = 0, torn_trusted = 0;
    for (int i = 0; i < 200000 && trusted < 2000 && torn_trusted == 0; i++) {
        uint8_t copy[sizeof(arenascope_descriptor_t)];
        const volatile uint8_t *src = reinterpret_cast<const volatile uint8_t *>(&arenascope_descriptor);
        for (size_t k = 0; k < sizeof copy; k++) {
            if (k == arena0 + offsetof(arenascope_arena_t, temp_bytes)) {
                for (volatile int spin = 0; spin < (i % 64) * 8; spin = spin + 1) {
                }  // a slow probe: the writer moves on in the middle of the copy
            }
            copy[k] = src[k];
        }
        uint16_t seq, check;
        uint32_t head, temp, tail;
        std::memcpy(&seq, copy + offsetof(arenascope_descriptor_t, seq), 2);
        std::memcpy(&check, copy + offsetof(arenascope_descriptor_t, seq_check), 2);
        std::memcpy(&head, copy + arena0 + offsetof(arenascope_arena_t, head_bytes), 4);
        std::memcpy(&temp, copy + arena0 + offsetof(arenascope_arena_t, temp_bytes), 4);
        std::memcpy(&tail, copy + arena0 + offsetof(arenascope_arena_t, tail_offset), 4);
        if (seq % 2 == 0 && seq == check) {
            trusted++;
            if (temp != head + 32 || tail != head + 512) {
                torn_trusted++;
                ADD_FAILURE() << "a torn copy was trusted (seq " << seq << ": head " << head << ", temp " << temp
                              << ", tail " << tail << ")";
            }
        } else {
            rejected++;
        }
    }
    stop = true;
    writer.join();
    EXPECT_GT(trusted, 0);
    std::printf("one-read seqlock: %d copies trusted, %d rejected\n", trusted, rejected);
}

TEST_F(Agent, MarksAndModelAreRecorded)
{
    static const uint8_t model[24] = {0};
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    arenascope_arena_set_marks(a, 100, 130, 900);
    arenascope_arena_set_model(a, model, sizeof model);
    EXPECT_EQ(a->head_bytes, 100u);
    EXPECT_EQ(a->temp_bytes, 130u);
    EXPECT_EQ(a->tail_offset, 900u);
    EXPECT_EQ(a->model_addr, reinterpret_cast<uintptr_t>(model));
    EXPECT_EQ(a->model_size_bytes, 24u);
}

TEST_F(Agent, CanaryFillCoversExactlyTheWordTrimmedFreeBand)
{
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    arenascope_arena_set_marks(a, 100, 130, 902);
    arenascope_canary_fill(a);
    // temp 130 rounds up to 132, tail 902 down to 900.
    EXPECT_EQ(a->canary.low_addr, reinterpret_cast<uintptr_t>(ram.arena + 132));
    EXPECT_EQ(a->canary.high_addr, reinterpret_cast<uintptr_t>(ram.arena + 900));
    for (unsigned i = 0; i < sizeof ram.arena; i++) {
        const bool in_band = i >= 132 && i < 900;
        EXPECT_EQ(ram.arena[i], in_band ? 0xAA : kUntouched) << "arena byte " << i;
    }
}

TEST_F(Agent, MeasureReportsIntactBandsAsNone)
{
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    arenascope_arena_set_marks(a, 128, 128, 896);
    arenascope_canary_fill(a);
    std::memset(ram.stack, 0xCC, sizeof ram.stack);
    arenascope_measure();
    const auto &d = arenascope_descriptor;
    EXPECT_EQ(d.flags & ARENASCOPE_FLAG_MEASURED, ARENASCOPE_FLAG_MEASURED);
    EXPECT_EQ(a->canary.touched_lo, ARENASCOPE_NONE);
    EXPECT_EQ(a->canary.touched_hi, ARENASCOPE_NONE);
    EXPECT_EQ(d.guard.touched_lo, ARENASCOPE_NONE);
    EXPECT_EQ(d.guard.touched_hi, ARENASCOPE_NONE);
    EXPECT_EQ(d.stack.touched_lo, ARENASCOPE_NONE);  // never reached
}

TEST_F(Agent, MeasureFindsLowestAndHighestTouchedWords)
{
    arenascope_arena_t *a = arenascope_arena_add(ram.arena, sizeof ram.arena, 16, table, 4);
    arenascope_arena_set_marks(a, 128, 128, 896);
    arenascope_canary_fill(a);
    ram.arena[501] = 0x00;  // word at arena offset 500 -> band offset 372
    ram.arena[702] = 0xAB;  // word at arena offset 700 -> band offset 572
    ram.guard[10] = 0x00;   // word 8..12 of the guard
    arenascope_measure();
    EXPECT_EQ(a->canary.touched_lo, 500u - 128u);
    EXPECT_EQ(a->canary.touched_hi, 704u - 128u);
    EXPECT_EQ(arenascope_descriptor.guard.touched_lo, 8u);
    EXPECT_EQ(arenascope_descriptor.guard.touched_hi, 12u);
}

TEST_F(Agent, StackHighWaterMarkIsTheLowestWordThatLostItsPaint)
{
    std::memset(ram.stack, 0xCC, sizeof ram.stack);
    for (unsigned i = 40; i < 64; i++) {  // a stack that was used down to word 40
        ram.stack[i] = 0x12345678u;
    }
    ram.stack[50] = kPaint;  // a painted-looking word inside the used part changes nothing
    arenascope_measure();
    EXPECT_EQ(arenascope_descriptor.stack.touched_lo, 40u * 4u);
    EXPECT_EQ(arenascope_descriptor.stack.touched_hi, 64u * 4u);
}

TEST_F(Agent, InvokePhaseIsOddInsideAnInvokeAndCountsPairs)
{
    EXPECT_EQ(arenascope_descriptor.invoke_phase, 0u);
    arenascope_invoke_begin();
    EXPECT_EQ(arenascope_descriptor.invoke_phase, 1u);
    arenascope_invoke_end();
    arenascope_invoke_begin();
    arenascope_invoke_end();
    EXPECT_EQ(arenascope_descriptor.invoke_phase, 4u);  // 2 completed
}

}  // namespace
