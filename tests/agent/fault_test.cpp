// Unit tests of the fault record (host): creation, boot counting, capture, nesting, checksums.
// The FNV-1a reference is computed here, from its definition, not with the agent's function.
#include <gtest/gtest.h>

#include <cstring>

#include "arenascope/fault.h"

namespace {

uint32_t fnv1a(const void *data, std::size_t n)
{
    const auto *p = static_cast<const uint8_t *>(data);
    uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

bool sealed(const arenascope_fault_record_t &r)
{
    return r.magic == ARENASCOPE_FAULT_MAGIC && r.checksum == fnv1a(reinterpret_cast<const uint8_t *>(&r) + 4, 92);
}

class Fault : public ::testing::Test {
protected:
    void SetUp() override { std::memset(&arenascope_fault_record, 0x5A, sizeof arenascope_fault_record); }  // power-on garbage
};

TEST_F(Fault, LayoutIsTheDocumentedOne)
{
    EXPECT_EQ(sizeof(arenascope_fault_record_t), 100u);
    EXPECT_EQ(offsetof(arenascope_fault_record_t, exc_return), 24u);
    EXPECT_EQ(offsetof(arenascope_fault_record_t, cfsr), 32u);
    EXPECT_EQ(offsetof(arenascope_fault_record_t, icsr), 52u);
    EXPECT_EQ(offsetof(arenascope_fault_record_t, frame), 56u);
    EXPECT_EQ(offsetof(arenascope_fault_record_t, checksums_addr), 88u);
    EXPECT_EQ(offsetof(arenascope_fault_record_t, checksum), 96u);
}

TEST_F(Fault, FirstBootCreatesARecordLaterBootsCountAndKeepIt)
{
    arenascope_fault_boot();
    const auto &r = arenascope_fault_record;
    EXPECT_TRUE(sealed(r));
    EXPECT_EQ(r.boot_count, 1u);
    EXPECT_EQ(r.fault_count, 0u);
    EXPECT_EQ(r.fault_boot, 0u);
    EXPECT_EQ(arenascope_descriptor.fault_record_addr, reinterpret_cast<uintptr_t>(&arenascope_fault_record));
    const uint32_t frame[8] = {1, 2, 3, 4, 12, 0x08001235, 0x08000400, 0x01000003};
    const arenascope_fault_regs_t regs = {0x8200, 0x40000000, 0, 0xF0000000, 0x70000, 3, 0};
    arenascope_fault_capture(frame, 0xFFFFFFF9, &regs);
    arenascope_fault_boot();  // a warm reset: the record and its fault survive
    EXPECT_TRUE(sealed(r));
    EXPECT_EQ(r.boot_count, 2u);
    EXPECT_EQ(r.fault_count, 1u);
    EXPECT_EQ(r.fault_boot, 1u);  // from the earlier boot: stale for this one
    EXPECT_EQ(r.cfsr, 0x8200u);
}

TEST_F(Fault, CaptureRecordsRegistersFlagsAndTheFrame)
{
    arenascope_fault_boot();
    const uint32_t frame[8] = {10, 11, 12, 13, 14, 0x00000401, 0x00000568, 0x21000000};
    const arenascope_fault_regs_t regs = {0x00020000, 0x40000000, 0xE000EDF8, 0, 0x70008, 6, 1};
    arenascope_fault_capture(frame, 0xFFFFFFED, &regs);  // PSP, extended (FP) frame, thread mode
    const auto &r = arenascope_fault_record;
    EXPECT_TRUE(sealed(r));
    EXPECT_EQ(r.flags, ARENASCOPE_FAULT_FRAME_COPIED | ARENASCOPE_FAULT_PSP | ARENASCOPE_FAULT_EXTENDED |
                           ARENASCOPE_FAULT_LAZY_FP);
    EXPECT_EQ(r.exc_return, 0xFFFFFFEDu);
    EXPECT_EQ(r.sp, uint32_t(reinterpret_cast<uintptr_t>(frame)));
    EXPECT_EQ(r.cfsr, 0x00020000u);
    EXPECT_EQ(r.icsr, 6u);
    EXPECT_EQ(0, std::memcmp(r.frame, frame, sizeof frame));
    EXPECT_EQ(r.fault_count, 1u);
    EXPECT_EQ(r.fault_boot, r.boot_count);
}

TEST_F(Fault, NoFrameCopyWhenStackingFailedAndNestedFaultsKeepTheFirst)
{
    arenascope_fault_boot();
    uint32_t frame[8] = {0};
    const arenascope_fault_regs_t stacking = {1u << 4 /* MSTKERR */, 0x40000000, 0, 0, 0, 3, 0};
    arenascope_fault_capture(frame, 0xFFFFFFF9, &stacking);
    const auto &r = arenascope_fault_record;
    EXPECT_EQ(r.flags & ARENASCOPE_FAULT_FRAME_COPIED, 0u);
    const arenascope_fault_regs_t second = {0x8200, 0x40000000, 0, 0x1234, 0, 3, 0};
    arenascope_fault_capture(frame, 0xFFFFFFF9, &second);  // the handler faulted while recording
    EXPECT_TRUE(sealed(r));
    EXPECT_EQ(r.cfsr, 1u << 4);  // still the first fault
    EXPECT_NE(r.flags & ARENASCOPE_FAULT_NESTED, 0u);
    EXPECT_EQ(r.fault_count, 1u);
}

TEST_F(Fault, ProtectChecksumsImmutableRegionsOnly)
{
    alignas(16) static uint8_t arena[256];
    static arenascope_region_t table[3];
    static uint32_t sums[3];
    std::memset(&arenascope_descriptor, 0, sizeof arenascope_descriptor);
    std::memset(arena, 0x11, sizeof arena);
    arenascope_init(nullptr, nullptr, nullptr, nullptr);
    arenascope_fault_boot();
    arenascope_arena_t *a = arenascope_arena_add(arena, sizeof arena, 16, table, 3);
    arenascope_region_t r0 = {0, 64, 1, ARENASCOPE_KIND_TENSOR, 0, 1, 2};
    arenascope_region_t r1 = {192, 64, 0xFFFF, ARENASCOPE_KIND_METADATA, ARENASCOPE_REGION_IMMUTABLE, -1, -1};
    arenascope_region_publish(a, &r0);
    arenascope_region_publish(a, &r1);
    EXPECT_EQ(arenascope_fault_protect(a, sums, 1), -1);  // too small a table
    EXPECT_EQ(arenascope_fault_protect(a, sums, 3), 1);
    EXPECT_EQ(sums[0], 0u);
    EXPECT_EQ(sums[1], fnv1a(arena + 192, 64));
    const auto &rec = arenascope_fault_record;
    EXPECT_TRUE(sealed(rec));
    EXPECT_EQ(rec.checksums_addr, uint32_t(reinterpret_cast<uintptr_t>(sums)));
    EXPECT_EQ(rec.checksum_count, 2u);
    arena[200] ^= 1;  // something overwrites the region: the host's recomputation differs
    EXPECT_NE(sums[1], fnv1a(arena + 192, 64));
}

}  // namespace
