/*
 * arenascope target agent: the descriptor and the calls that keep it current.
 * Contract and field meanings: include/arenascope/agent.h. Layout: docs/agent-abi.md.
 * C99, also compiles as C++. No heap, no stdio, no libc calls (a struct copy may become memcpy).
 * Written for size (budget: 512 bytes of flash at -Os on Cortex-M4, tools/footprint.py).
 */
#include "arenascope/agent.h"

arenascope_descriptor_t arenascope_descriptor ARENASCOPE_DESCRIPTOR_SECTION;

#define DESC arenascope_descriptor
#define ALIGN4_UP(x) (((x) + 3u) & ~3u)
#define ALIGN4_DOWN(x) ((x) & ~3u)

/* Seqlock: called once before and once after every change a host must see whole, so seq is
 * odd while the descriptor is being changed (agent.h, "seqlock"). */
static void seq_bump(void)
{
    ARENASCOPE_BARRIER();
    DESC.seq++;
    ARENASCOPE_BARRIER();
}

/* Ends an update that changed a region table or the arena list. */
static void layout_changed(void)
{
    DESC.layout_generation++;
    seq_bump();
}

/* Fills a band (word-aligned bounds) with the canary word. */
static __attribute__((noinline)) void fill_band(const arenascope_band_t *band)
{
    uint32_t *p = (uint32_t *)band->low_addr;

    while (p < (uint32_t *)band->high_addr) {
        *p++ = DESC.canary_pattern;
    }
}

void arenascope_init(void *stack_low, void *stack_high, void *guard_low, void *guard_high)
{
    /* The magic is kept reversed, so flash never holds "ARENASCP" as one literal, and it is
     * written from its last byte to its first, after every other field (the SEGGER RTT
     * rule): a RAM scan for the magic can only match a finished block. */
    static const char magic_reversed[ARENASCOPE_MAGIC_SIZE] = {'P', 'C', 'S', 'A', 'N', 'E', 'R', 'A'};
    unsigned i;

    DESC.abi_major = ARENASCOPE_ABI_MAJOR;
    DESC.abi_minor = ARENASCOPE_ABI_MINOR;
    DESC.descriptor_size = (uint16_t)sizeof DESC;
    DESC.addr_size = (uint8_t)sizeof(arenascope_addr_t);
    DESC.arena_capacity = (uint8_t)ARENASCOPE_MAX_ARENAS;
    DESC.arena_entry_size = (uint8_t)sizeof(arenascope_arena_t);
    DESC.region_entry_size = (uint8_t)sizeof(arenascope_region_t);
    DESC.canary_pattern = ARENASCOPE_CANARY_PATTERN;
    DESC.stack_paint_pattern = ARENASCOPE_STACK_PAINT_PATTERN;
    DESC.stack.low_addr = (uintptr_t)stack_low;
    DESC.stack.high_addr = (uintptr_t)stack_high;
    /* The guard band is outside the arena and nothing owns it: fill it now, so a stack that
     * reaches it at any later time leaves a mark. */
    DESC.guard.low_addr = (uintptr_t)guard_low;
    DESC.guard.high_addr = (uintptr_t)guard_high;
    fill_band(&DESC.guard);
    for (i = ARENASCOPE_MAGIC_SIZE; i-- > 0;) {
        ARENASCOPE_BARRIER();
        ((volatile char *)DESC.magic)[i] = magic_reversed[ARENASCOPE_MAGIC_SIZE - 1u - i];
    }
}

arenascope_arena_t *arenascope_arena_add(void *base, uint32_t size_bytes, uint16_t alignment_bytes,
                                         arenascope_region_t *table, uint16_t capacity)
{
    arenascope_arena_t *a = &DESC.arena[DESC.arena_count];

    if (DESC.arena_count >= ARENASCOPE_MAX_ARENAS) {
        return NULL;
    }
    seq_bump();
    a->base_addr = (uintptr_t)base;
    a->regions_addr = (uintptr_t)table;
    a->size_bytes = size_bytes;
    a->tail_offset = size_bytes;
    a->alignment_bytes = alignment_bytes;
    a->region_capacity = capacity;
    DESC.arena_count++;
    seq_bump();
    return a;
}

void arenascope_arena_set_marks(arenascope_arena_t *arena, uint32_t head_bytes, uint32_t temp_bytes,
                                uint32_t tail_offset)
{
    seq_bump();
    arena->head_bytes = head_bytes;
    arena->temp_bytes = temp_bytes;
    arena->tail_offset = tail_offset;
    seq_bump();
}

void arenascope_arena_set_model(arenascope_arena_t *arena, const void *model, uint32_t size_bytes)
{
    seq_bump();
    arena->model_addr = (uintptr_t)model;
    arena->model_size_bytes = size_bytes;
    seq_bump();
}

int arenascope_region_publish(arenascope_arena_t *arena, const arenascope_region_t *region)
{
    uint16_t n = arena->region_count;

    if (region != NULL && n >= arena->region_capacity) {
        return -1;
    }
    seq_bump();
    if (region == NULL) {
        n = 0; /* arenascope_regions_clear */
    } else {
        ((arenascope_region_t *)arena->regions_addr)[n++] = *region;
    }
    arena->region_count = n;
    layout_changed();
    return (int)n - 1;
}

void arenascope_canary_fill(arenascope_arena_t *arena)
{
    seq_bump();
    arena->canary.low_addr = arena->base_addr + ALIGN4_UP(arena->temp_bytes);
    arena->canary.high_addr = arena->base_addr + ALIGN4_DOWN(arena->tail_offset);
    fill_band(&arena->canary);
    seq_bump();
}

void arenascope_invoke_mark(void)
{
    DESC.invoke_phase++; /* one aligned store: a host sees it whole, no seqlock needed */
}

/* Compares the words of a band with word and stores the changed range in touched_lo/hi as
 * byte offsets from low_addr, or ARENASCOPE_NONE twice when every word still holds it. */
static void scan_band(arenascope_band_t *band, uint32_t word)
{
    const volatile uint32_t *p = (const volatile uint32_t *)band->low_addr;
    const volatile uint32_t *lo = NULL, *hi = NULL;

    for (; p < (const volatile uint32_t *)band->high_addr; p++) {
        if (*p != word) {
            lo = lo != NULL ? lo : p;
            hi = p + 1;
        }
    }
    band->touched_lo = lo != NULL ? (uint32_t)((uintptr_t)lo - band->low_addr) : ARENASCOPE_NONE;
    band->touched_hi = lo != NULL ? (uint32_t)((uintptr_t)hi - band->low_addr) : ARENASCOPE_NONE;
}

void arenascope_measure(void)
{
#if ARENASCOPE_MAX_ARENAS > 1
    unsigned i;
#endif

    seq_bump();
    scan_band(&DESC.stack, DESC.stack_paint_pattern);
    scan_band(&DESC.guard, DESC.canary_pattern);
#if ARENASCOPE_MAX_ARENAS == 1
    if (DESC.arena_count != 0u) {
        scan_band(&DESC.arena[0].canary, DESC.canary_pattern); /* not filled yet: empty, NONE */
    }
#else
    for (i = 0; i < DESC.arena_count; i++) {
        scan_band(&DESC.arena[i].canary, DESC.canary_pattern); /* not filled yet: empty, NONE */
    }
#endif
    DESC.flags = ARENASCOPE_FLAG_MEASURED; /* the only descriptor flag so far */
    seq_bump();
}
