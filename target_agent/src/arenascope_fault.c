/*
 * arenascope target agent: the fault record (portable part). Contract: include/arenascope/fault.h.
 * C99, also compiles as C++. The entry and register reads are the ports' (ports/cortex_m, ports/riscv).
 */
#include "arenascope/fault.h"

#ifndef ARENASCOPE_FAULT_SECTION
#define ARENASCOPE_FAULT_SECTION __attribute__((section(".noinit.arenascope_fault")))
#endif

arenascope_fault_record_t arenascope_fault_record ARENASCOPE_FAULT_SECTION;

#define REC arenascope_fault_record
#define CFSR_MSTKERR (1u << 4) /* MemManage fault on exception entry stacking */
#define CFSR_STKERR (1u << 12) /* BusFault on exception entry stacking        */

static volatile uint32_t recording; /* .bss: zeroed each boot */

uint32_t arenascope_fnv1a(const void *data, uint32_t len)
{
    const volatile uint8_t *p = (const volatile uint8_t *)data;
    uint32_t h = 2166136261u;

    while (len--) {
        h = (h ^ *p++) * 16777619u;
    }
    return h;
}

static void seal(void)
{
    REC.checksum = arenascope_fnv1a((const uint8_t *)&REC + 4, ARENASCOPE_FAULT_CHECKSUMMED_BYTES);
    ARENASCOPE_BARRIER();
    REC.magic = ARENASCOPE_FAULT_MAGIC;
}

void arenascope_fault_boot(void)
{
    const int valid = REC.magic == ARENASCOPE_FAULT_MAGIC && REC.version == ARENASCOPE_FAULT_VERSION &&
                      REC.size == sizeof REC &&
                      REC.checksum == arenascope_fnv1a((const uint8_t *)&REC + 4, ARENASCOPE_FAULT_CHECKSUMMED_BYTES);
    recording = 0u; /* a new boot: the next fault is recorded */
    REC.magic = 0;
    ARENASCOPE_BARRIER();
    if (!valid) {
        uint32_t *w = (uint32_t *)&REC;
        unsigned i;
        for (i = 0; i < sizeof REC / 4u; i++) {
            w[i] = 0;
        }
        REC.version = ARENASCOPE_FAULT_VERSION;
        REC.size = (uint16_t)sizeof REC;
    }
    REC.boot_count++;
    REC.checksums_addr = 0; /* this boot's table is set by arenascope_fault_protect */
    REC.checksum_count = 0;
    seal();
    arenascope_descriptor.fault_record_addr = (uintptr_t)&REC;
}

/* Starts recording a fault: 0 when one is being recorded already (then NESTED is set). */
static int begin(uint16_t arch)
{
    if (recording) {
        REC.flags |= ARENASCOPE_FAULT_NESTED; /* keep the first fault's registers */
        seal();
        return 0;
    }
    recording = 1u;
    REC.magic = 0;
    ARENASCOPE_BARRIER();
    REC.flags = 0;
    REC.arch = arch;
    return 1;
}

static void finish(void)
{
    REC.fault_count++;
    REC.fault_boot = REC.boot_count;
    seal();
}

void arenascope_fault_capture_words(uint16_t arch, uint32_t sp, const uint32_t status[7], const uint32_t frame[8])
{
    unsigned i;

    if (!begin(arch)) {
        return;
    }
    REC.sp = sp;
    REC.exc_return = status[0];
    REC.cfsr = status[1];
    REC.hfsr = status[2];
    REC.mmfar = status[3];
    REC.bfar = status[4];
    REC.shcsr = status[5];
    REC.icsr = status[6];
    for (i = 0; i < 8u; i++) {
        REC.frame[i] = frame[i];
    }
    REC.flags |= ARENASCOPE_FAULT_FRAME_COPIED;
    finish();
}

void arenascope_fault_capture(const uint32_t *frame, uint32_t exc_return, const arenascope_fault_regs_t *regs)
{
    unsigned i;

    if (!begin(ARENASCOPE_FAULT_ARCH_CORTEX_M)) {
        return;
    }
    REC.exc_return = exc_return;
    REC.sp = (uint32_t)(uintptr_t)frame;
    REC.cfsr = regs->cfsr;
    REC.hfsr = regs->hfsr;
    REC.mmfar = regs->mmfar;
    REC.bfar = regs->bfar;
    REC.shcsr = regs->shcsr;
    REC.icsr = regs->icsr;
    if (exc_return & 4u) {
        REC.flags |= ARENASCOPE_FAULT_PSP;
    }
    if (!(exc_return & 0x10u)) {
        REC.flags |= ARENASCOPE_FAULT_EXTENDED;
        if (regs->fpccr & 1u) {
            REC.flags |= ARENASCOPE_FAULT_LAZY_FP;
        }
    }
    if (!(regs->cfsr & (CFSR_MSTKERR | CFSR_STKERR))) { /* the frame was stacked: copy it */
        for (i = 0; i < 8u; i++) {
            REC.frame[i] = frame[i];
        }
        REC.flags |= ARENASCOPE_FAULT_FRAME_COPIED;
    }
    finish();
}

int arenascope_fault_protect(const arenascope_arena_t *arena, uint32_t *table, uint16_t capacity)
{
    const arenascope_region_t *regions = (const arenascope_region_t *)arena->regions_addr;
    int n = 0;
    uint16_t i;

    if (capacity < arena->region_count) {
        return -1;
    }
    for (i = 0; i < arena->region_count; i++) {
        table[i] = 0;
        if (regions[i].flags & ARENASCOPE_REGION_IMMUTABLE) {
            table[i] =
                arenascope_fnv1a((const void *)(arena->base_addr + regions[i].offset_bytes), regions[i].size_bytes);
            n++;
        }
    }
    REC.magic = 0;
    ARENASCOPE_BARRIER();
    REC.checksums_addr = (arenascope_addr_t)table;
    REC.checksum_count = arena->region_count;
    seal();
    return n;
}
