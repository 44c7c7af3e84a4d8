// Unit tests of the fault record (host): layout, creation, boot counting, capture, nesting,
// checksums. The FNV-1a reference is computed here, from its definition, not with the agent's
// function; offsets come from the golden fixture (target_agent/abi/agent_abi_v1.json,
// "fault_record"), never from the agent's header.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "arenascope/fault.h"

namespace {

const nlohmann::json &fixture()
{
    static const nlohmann::json abi = [] {
        std::ifstream in(ARENASCOPE_ABI_FIXTURE);
        return nlohmann::json::parse(in);
    }();
    return abi["fault_record"];
}

// The fixture's layout for this host's address size.
const nlohmann::json &layout()
{
    return fixture()["layouts"][std::to_string(sizeof(void *))];
}
std::size_t at(const char *field)
{
    return layout()[field].get<std::size_t>();
}

// A field of the record as a host decodes it: little-endian bytes at the fixture's offset.
uint64_t field(const arenascope_fault_record_t &r, const char *name, std::size_t bytes)
{
    uint8_t raw[sizeof r];
    std::memcpy(raw, &r, sizeof r);
    uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; i++) v |= uint64_t(raw[at(name) + i]) << (8 * i);
    return v;
}

uint32_t fnv1a(const void *data, std::size_t n)
{
    const auto *p = static_cast<const uint8_t *>(data);
    uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

bool sealed(const arenascope_fault_record_t &r)
{
    const std::size_t from = fixture()["checksummed_from"].get<std::size_t>();
    return field(r, "magic", 4) == fixture()["magic"].get<uint32_t>() &&
           field(r, "checksum", 4) == fnv1a(reinterpret_cast<const uint8_t *>(&r) + from, at("checksum") - from);
}

class Fault : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::memset(&arenascope_fault_record, 0x5A, sizeof arenascope_fault_record);  // power-on garbage
    }
};

#define RECORD_FIELD(name) std::pair<const std::string, std::size_t>(#name, offsetof(arenascope_fault_record_t, name))

TEST(FaultLayout, MatchesGoldenFixture)
{
    EXPECT_EQ(fixture()["version"].get<unsigned>(), ARENASCOPE_FAULT_VERSION);
    EXPECT_EQ(fixture()["magic"].get<uint32_t>(), ARENASCOPE_FAULT_MAGIC);
    const std::map<std::string, std::size_t> c_layout = {
        RECORD_FIELD(magic),      RECORD_FIELD(version),        RECORD_FIELD(size),
        RECORD_FIELD(boot_count), RECORD_FIELD(fault_count),    RECORD_FIELD(fault_boot),
        RECORD_FIELD(flags),      RECORD_FIELD(exc_return),     RECORD_FIELD(sp),
        RECORD_FIELD(cfsr),       RECORD_FIELD(hfsr),           RECORD_FIELD(mmfar),
        RECORD_FIELD(bfar),       RECORD_FIELD(shcsr),          RECORD_FIELD(icsr),
        RECORD_FIELD(frame),      RECORD_FIELD(checksums_addr), RECORD_FIELD(checksum_count),
        RECORD_FIELD(arch),       RECORD_FIELD(checksum),       {"_size", sizeof(arenascope_fault_record_t)}};
    EXPECT_EQ(layout().size(), c_layout.size());
    for (const auto &[name, offset] : c_layout) {
        ASSERT_TRUE(layout().contains(name)) << name << " missing from the fixture";
        EXPECT_EQ(layout()[name].get<std::size_t>(), offset) << name;
    }
    // Declaration order: offsets increase along the fixture's field list.
    std::size_t last = 0;
    for (const auto &f : fixture()["fields"]) {
        const std::size_t off = layout()[f[0].get<std::string>()].get<std::size_t>();
        EXPECT_TRUE(f[0] == "magic" || off > last) << f[0];
        last = off;
    }
    EXPECT_EQ(sizeof(arenascope_fault_record.checksums_addr), sizeof(void *));  // a whole address
    const auto &flags = fixture()["flags"];
    EXPECT_EQ(flags["frame_copied"].get<uint32_t>(), ARENASCOPE_FAULT_FRAME_COPIED);
    EXPECT_EQ(flags["psp"].get<uint32_t>(), ARENASCOPE_FAULT_PSP);
    EXPECT_EQ(flags["extended"].get<uint32_t>(), ARENASCOPE_FAULT_EXTENDED);
    EXPECT_EQ(flags["lazy_fp"].get<uint32_t>(), ARENASCOPE_FAULT_LAZY_FP);
    EXPECT_EQ(flags["nested"].get<uint32_t>(), ARENASCOPE_FAULT_NESTED);
}

TEST_F(Fault, FirstBootCreatesARecordLaterBootsCountAndKeepIt)
{
    arenascope_fault_boot();
    const auto &r = arenascope_fault_record;
    EXPECT_TRUE(sealed(r));
    EXPECT_EQ(field(r, "version", 2), fixture()["version"].get<unsigned>());
    EXPECT_EQ(field(r, "size", 2), layout()["_size"].get<std::size_t>());
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

// The RISC-V port's capture (fault.h): the trap CSRs in the Cortex-M-named fields, arch 1, the
// registers always copied, and only FRAME_COPIED of the flags; a nested trap keeps the first.
TEST_F(Fault, CaptureWordsRecordsARiscVTrapUnderItsArch)
{
    arenascope_fault_boot();
    const uint32_t status[7] = {0x1800 /* mstatus */,  7 /* mcause */,         0, 0x90000000 /* mtval */,
                                0x80000272 /* mepc */, 0x8000092c /* mtvec */, 0};
    const uint32_t frame[8] = {0x80000272, 0x8000025e, 0x807fffe0, 0x154, 0x8040058c, 0x10, 0xf, 0x154};
    arenascope_fault_capture_words(ARENASCOPE_FAULT_ARCH_RISCV, 0x807fffe0, status, frame);
    const auto &r = arenascope_fault_record;
    EXPECT_TRUE(sealed(r));
    EXPECT_EQ(field(r, "arch", 2), 1u);
    EXPECT_EQ(r.flags, ARENASCOPE_FAULT_FRAME_COPIED);
    EXPECT_EQ(r.exc_return, 0x1800u);
    EXPECT_EQ(r.cfsr, 7u);
    EXPECT_EQ(r.mmfar, 0x90000000u);
    EXPECT_EQ(r.bfar, 0x80000272u);
    EXPECT_EQ(r.shcsr, 0x8000092cu);
    EXPECT_EQ(r.sp, 0x807fffe0u);
    EXPECT_EQ(0, std::memcmp(r.frame, frame, sizeof frame));
    EXPECT_EQ(r.fault_count, 1u);
    const uint32_t other[7] = {0, 5, 0, 0xa5000000, 0x80000548, 0x8000092c, 0};
    arenascope_fault_capture_words(ARENASCOPE_FAULT_ARCH_RISCV, 0, other, frame);
    EXPECT_TRUE(sealed(r));
    EXPECT_EQ(r.cfsr, 7u);  // still the first trap
    EXPECT_NE(r.flags & ARENASCOPE_FAULT_NESTED, 0u);
    const arenascope_fault_regs_t regs = {0x8200, 0, 0, 0, 0, 3, 0};
    arenascope_fault_boot();
    arenascope_fault_capture(frame, 0xFFFFFFF9, &regs);
    EXPECT_EQ(field(r, "arch", 2), 0u);  // a Cortex-M capture says so
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
    EXPECT_EQ(rec.checksums_addr, reinterpret_cast<uintptr_t>(sums));
    EXPECT_EQ(rec.checksum_count, 2u);
    arena[200] ^= 1;  // something overwrites the region: the host's recomputation differs
    EXPECT_NE(sums[1], fnv1a(arena + 192, 64));
}

// Version 1 kept 32 bits of the table's address. On x86-64 a stack (and a heap) address is above
// 4 GiB: the record must hand the whole address back, at the fixture's offset and width.
TEST_F(Fault, ChecksumTableAboveFourGiBIsRecordedWhole)
{
    alignas(16) uint8_t arena[64];
    arenascope_region_t table[1];
    uint32_t sums[1];
    const uint64_t where = reinterpret_cast<uintptr_t>(sums);
    if (sizeof(void *) < 8) GTEST_SKIP() << "a 32-bit host has no address above 4 GiB";
    ASSERT_GT(where, 0xFFFFFFFFull) << "this host put the stack below 4 GiB: the test proves nothing here";
    std::memset(&arenascope_descriptor, 0, sizeof arenascope_descriptor);
    std::memset(arena, 0x22, sizeof arena);
    arenascope_init(nullptr, nullptr, nullptr, nullptr);
    arenascope_fault_boot();
    arenascope_arena_t *a = arenascope_arena_add(arena, sizeof arena, 16, table, 1);
    const arenascope_region_t r0 = {0, 64, 0xFFFF, ARENASCOPE_KIND_METADATA, ARENASCOPE_REGION_IMMUTABLE, -1, -1};
    arenascope_region_publish(a, &r0);
    ASSERT_EQ(arenascope_fault_protect(a, sums, 1), 1);
    const auto &rec = arenascope_fault_record;
    EXPECT_TRUE(sealed(rec));
    EXPECT_EQ(field(rec, "checksums_addr", sizeof(void *)), where);
    EXPECT_EQ(field(rec, "checksum_count", 2), 1u);
    EXPECT_EQ(sums[0], fnv1a(arena, 64));
    // The checksum covers the address's high half: a record that lost it no longer seals.
    arenascope_fault_record_t torn = rec;
    uint8_t raw[sizeof torn];
    std::memcpy(raw, &torn, sizeof torn);
    raw[at("checksums_addr") + 4] ^= 0x01;
    std::memcpy(&torn, raw, sizeof torn);
    EXPECT_FALSE(sealed(torn));
}

}  // namespace
