/*
 * A firmware that uses the agent for its own buffers, not TFLM's: one arena of 4 KiB holding an
 * MFCC frame buffer, a Hann window table, a DMA pool and one region whose name is hostile bytes,
 * all named with ARENASCOPE_REGION_NAMES (no target bytes: the names stay in the ELF). Then a
 * wild write into the window table (a DMA gone wrong) and a store to 0xF0000000, where QEMU's
 * MPS2 maps nothing: a precise BusFault (enabled in SHCSR, so it is taken as BusFault through the
 * CMSIS vector BusFault_Handler) or, on ARMv6-M (microbit), a word load from an odd address, a
 * HardFault. tests/integration/test_user_regions.py builds it (startup.c: a CMSIS-style vector
 * table; the port with -DARENASCOPE_FAULT_HANDLER_NAMES) and checks the names and the fault.
 */
#include <stdint.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"
#include "arenascope/region_names.h"

extern uint32_t __StackLimit, __StackTop, __guard_start, __guard_end;

/* The names, by region id, the test checks against these strings. Id 2's name is not UTF-8 and
 * longer than the host shows (47 bytes). */
ARENASCOPE_REGION_NAMES(0, ARENASCOPE_KIND_METADATA, "mfcc_frames", "hann_window",
                        "\xff\xfe-not-utf8-and-far-too-long-to-show-in-a-region-table");
ARENASCOPE_REGION_NAMES(0, ARENASCOPE_KIND_PERSISTENT, "dma_pool");

#define ARENA_BYTES 4096u
static uint8_t user_arena[ARENA_BYTES] __attribute__((aligned(16)));
static arenascope_region_t regions[4];
static uint32_t checksums[4];

/* offset, size, id, kind, flags: the layout the test reads back. */
static const arenascope_region_t layout[4] = {
    {.offset_bytes = 0,
     .size_bytes = 1024,
     .id = 0,
     .kind = ARENASCOPE_KIND_METADATA,
     .flags = 0,
     .first_use = ARENASCOPE_USE_NONE,
     .last_use = ARENASCOPE_USE_NONE},
    {.offset_bytes = 3072,
     .size_bytes = 512,
     .id = 1,
     .kind = ARENASCOPE_KIND_METADATA,
     .flags = ARENASCOPE_REGION_IMMUTABLE,
     .first_use = ARENASCOPE_USE_NONE,
     .last_use = ARENASCOPE_USE_NONE},
    {.offset_bytes = 3584,
     .size_bytes = 256,
     .id = 2,
     .kind = ARENASCOPE_KIND_METADATA,
     .flags = 0,
     .first_use = ARENASCOPE_USE_NONE,
     .last_use = ARENASCOPE_USE_NONE},
    {.offset_bytes = 3840,
     .size_bytes = 256,
     .id = 0,
     .kind = ARENASCOPE_KIND_PERSISTENT,
     .flags = 0,
     .first_use = ARENASCOPE_USE_NONE,
     .last_use = ARENASCOPE_USE_NONE},
};

__attribute__((noinline, used)) uint32_t fault_here(volatile uint32_t *where)
{
#if defined(__ARM_ARCH_6M__)
    return *where; /* where = 0x20000001: ARMv6-M has no unaligned access */
#else
    *where = 0x5a5a5a5au; /* where = 0xF0000000 */
    return 0;
#endif
}

__attribute__((used)) volatile uint32_t result;

int main(void)
{
    unsigned i;
    arenascope_arena_t *arena;

    arenascope_init(&__StackLimit, &__StackTop, &__guard_start, &__guard_end);
    arenascope_fault_boot();
    arena = arenascope_arena_add(user_arena, ARENA_BYTES, 16, regions, 4);
    for (i = 0; i < 4; i++) {
        (void)arenascope_region_publish(arena, &layout[i]);
    }
    for (i = 3072; i < 3584; i++) {
        user_arena[i] = (uint8_t)i; /* the window table's contents */
    }
    arenascope_arena_set_marks(arena, 1024, 1024, 3072);
    arenascope_canary_fill(arena);
    (void)arenascope_fault_protect(arena, checksums, 4);
    arenascope_measure();
    user_arena[3072 + 100] ^= 0xFFu; /* the wild write */
#if !defined(__ARM_ARCH_6M__)
    *(volatile uint32_t *)0xE000ED24u |= 7u << 16; /* SHCSR: MemManage, BusFault, UsageFault enabled */
    __asm__ volatile("dsb\n isb");
#endif
    result = fault_here((volatile uint32_t *)(uintptr_t)(
#if defined(__ARM_ARCH_6M__)
        0x20000001u
#else
        0xF0000000u
#endif
        ));
    for (;;) {
    }
}
