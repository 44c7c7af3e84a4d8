/*
 * arenascope target agent: the descriptor and the calls that keep it current.
 * Contract and field meanings: include/arenascope/agent.h. Layout: docs/agent-abi.md.
 * C99, also compiles as C++. No heap, no stdio, no libc calls (a struct copy may become memcpy).
 * Written for size (budget: 576 bytes of flash at -Os on Cortex-M4, tools/footprint.py).
 */
#include "arenascope/agent.h"

/* Opt-in: the ELF asks GDB to load the installed plugin (arenascope/gdb_autoload.h). No flash, no RAM. */
#if defined(ARENASCOPE_EMBED_GDB_SCRIPT) && ARENASCOPE_EMBED_GDB_SCRIPT
#include "arenascope/gdb_autoload.h"
ARENASCOPE_GDB_AUTOLOAD();
#endif

arenascope_descriptor_t arenascope_descriptor ARENASCOPE_DESCRIPTOR_SECTION;

#define DESC arenascope_descriptor
#define ALIGN4_UP(x) (((x) + 3u) & ~3u)
#define ALIGN4_DOWN(x) ((x) & ~3u)

/* Seqlock (agent.h, "seqlock"): every change a host must see whole sits between seq_begin and
 * seq_end, so seq is odd while it is made. seq_check, the descriptor's last field, is written
 * first with the value seq will have when the update ends: a host that reads the block in one
 * ascending pass (seq first, seq_check last) trusts it when seq is even and equal to seq_check,
 * with no second read (ABI 1.1, docs/agent-abi.md). */
static __attribute__((noinline)) void seq_end(void)
{
    ARENASCOPE_BARRIER();
    DESC.seq++;
    ARENASCOPE_BARRIER();
}

static __attribute__((noinline)) void seq_begin(void)
{
    ARENASCOPE_BARRIER();
    DESC.seq_check = (uint16_t)(DESC.seq + 2u);
    seq_end(); /* seq goes odd */
}

/* Ends an update that changed a region table or the arena list. */
static void layout_changed(void)
{
    DESC.layout_generation++;
    seq_end();
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
    seq_begin();
    a->base_addr = (uintptr_t)base;
    a->regions_addr = (uintptr_t)table;
    a->size_bytes = size_bytes;
    a->tail_offset = size_bytes;
    a->alignment_bytes = alignment_bytes;
    a->region_capacity = capacity;
    DESC.arena_count++;
    seq_end();
    return a;
}

void arenascope_arena_set_marks(arenascope_arena_t *arena, uint32_t head_bytes, uint32_t temp_bytes,
                                uint32_t tail_offset)
{
    seq_begin();
    arena->head_bytes = head_bytes;
    arena->temp_bytes = temp_bytes;
    arena->tail_offset = tail_offset;
    seq_end();
}

void arenascope_arena_set_model(arenascope_arena_t *arena, const void *model, uint32_t size_bytes)
{
    seq_begin();
    arena->model_addr = (uintptr_t)model;
    arena->model_size_bytes = size_bytes;
    seq_end();
}

int arenascope_region_publish(arenascope_arena_t *arena, const arenascope_region_t *region)
{
    uint16_t n = arena->region_count;

    if (region != NULL && n >= arena->region_capacity) {
        return -1;
    }
    seq_begin();
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
    seq_begin();
    arena->canary.low_addr = arena->base_addr + ALIGN4_UP(arena->temp_bytes);
    arena->canary.high_addr = arena->base_addr + ALIGN4_DOWN(arena->tail_offset);
    fill_band(&arena->canary);
    seq_end();
}

void arenascope_invoke_mark(void)
{
    DESC.invoke_phase++; /* one aligned store: a host sees it whole, no seqlock needed */
}

/* The changed range of a band (byte offsets from low_addr; ARENASCOPE_NONE twice when every
 * word still holds word): computed with the descriptor untouched, published by the caller. */
typedef struct {
    uint32_t lo, hi;
} touched_t;

static touched_t scan_band(const arenascope_band_t *band, uint32_t word)
{
    const volatile uint32_t *p = (const volatile uint32_t *)band->low_addr;
    const volatile uint32_t *lo = NULL, *hi = NULL;
    touched_t t;

    for (; p < (const volatile uint32_t *)band->high_addr; p++) {
        if (*p != word) {
            lo = lo != NULL ? lo : p;
            hi = p + 1;
        }
    }
    t.lo = lo != NULL ? (uint32_t)((uintptr_t)lo - band->low_addr) : ARENASCOPE_NONE;
    t.hi = lo != NULL ? (uint32_t)((uintptr_t)hi - band->low_addr) : ARENASCOPE_NONE;
    return t;
}

static void put(arenascope_band_t *band, touched_t t)
{
    band->touched_lo = t.lo;
    band->touched_hi = t.hi;
}

/* The bands are scanned first, outside the seqlock (O(stack + bands)); the results are stored
 * inside it, a few words: a host polling a firmware that measures all the time still finds the
 * descriptor consistent nearly always. */
void arenascope_measure(void)
{
    touched_t stack = scan_band(&DESC.stack, DESC.stack_paint_pattern);
    touched_t guard = scan_band(&DESC.guard, DESC.canary_pattern);
    touched_t canary[ARENASCOPE_MAX_ARENAS];
    unsigned i;

    for (i = 0; i < ARENASCOPE_MAX_ARENAS; i++) { /* entries not in use, or not filled yet: empty, NONE */
        canary[i] = scan_band(&DESC.arena[i].canary, DESC.canary_pattern);
    }
    seq_begin();
    put(&DESC.stack, stack);
    put(&DESC.guard, guard);
    for (i = 0; i < ARENASCOPE_MAX_ARENAS; i++) {
        put(&DESC.arena[i].canary, canary[i]);
    }
    DESC.flags |= ARENASCOPE_FLAG_MEASURED;
    seq_end();
}
