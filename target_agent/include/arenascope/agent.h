/*
 * arenascope target agent: the descriptor ABI and the public API (C99, also valid C++).
 *
 * Index
 *   [SECTION] ABI constants       magic, versions, kinds, flags, sentinels
 *   [SECTION] Descriptor layout   arenascope_region_t, arenascope_arena_t, arenascope_descriptor_t
 *   [SECTION] API                 init, arenas, regions, canary, stack, invoke, measure
 *
 * What it is
 *   One descriptor, `arenascope_descriptor`, that a debugger host reads to learn where the
 *   tensor arena is, how it is split (non-persistent head, temp, free band, persistent tail),
 *   which regions live in it and for which operators, where the stack is and how deep it went.
 *   The byte-by-byte layout, versioning rules and how the host finds the block are in
 *   docs/agent-abi.md; the offsets there are checked against this header by the unit tests.
 *
 * Rules the whole API keeps
 *   - No heap, no stdio, no libc calls (a struct copy may become memcpy). Nothing here blocks.
 *   - Every call is O(1) except the explicit fill/paint/measure calls, which are O(band size),
 *     and arenascope_init, which fills the guard band.
 *   - Calls are for thread context, one caller at a time (the inference thread). They are not
 *     reentrant; an interrupt or fault handler must not call them.
 *   - Units: sizes and offsets in bytes; offsets are from the arena's base_addr; addresses are
 *     the target's own (uintptr_t wide: 4 bytes on Cortex-M, 8 on a 64-bit host build).
 *   - The host only reads. Every field is written by the target.
 *
 * Consistency for a host that reads while the target runs (seqlock)
 *   `seq` is odd while the target changes the descriptor, even otherwise. A host reads seq,
 *   the block, then seq again, and trusts the block only if both reads are equal and even.
 *   ABI 1.1: `seq_check`, the last field, is written at the start of each update with the
 *   value seq will have at its end; a host that reads the whole block in one ascending pass
 *   (seq at offset 18 first, seq_check last) trusts it when seq is even and equals seq_check,
 *   with no second read: the window is one read, however often the target updates.
 *   Updates store only their results inside the window (arenascope_measure scans first).
 *   `layout_generation` changes only when a region table changes (publish, clear):
 *   a live host re-reads region tables only then.
 *
 * Lifetimes
 *   first_use/last_use are TFLM allocation scopes (tensorflow/lite/micro/micro_allocation_info.cc,
 *   MarkAllocationLifetimes): the model's inputs live from scope 0, operator i runs in scope
 *   i+1, so a tensor produced by operator a and last read by operator b lives [a+1, b+1].
 *   Figures therefore compare one to one with TFLM's PrintMemoryPlan first_used/last_used.
 */
#ifndef ARENASCOPE_AGENT_H
#define ARENASCOPE_AGENT_H

#include "arenascope/agent_config.h"

#ifndef __ASSEMBLER__ /* assembly files (ports/) include this header for the config only */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*-----------------------------------------------------------------------------------------
 * [SECTION] ABI constants
 *---------------------------------------------------------------------------------------*/

/* The magic is the 8 bytes "ARENASCP" at offset 0 (no terminating NUL). The agent never keeps
 * them as one literal in flash and writes them last, so a RAM scan matches only a finished
 * block. This macro is for hosts and tests; the agent itself does not use it. */
#define ARENASCOPE_MAGIC_TEXT "ARENASCP"
#define ARENASCOPE_MAGIC_SIZE 8

#define ARENASCOPE_ABI_MAJOR 1 /* incompatible layout change: hosts refuse other majors */
#define ARENASCOPE_ABI_MINOR 1 /* fields appended at the end: older hosts ignore them  */
                               /* 1.1: seq_check after the arena entries              */

/* Region kinds (arenascope_region_t.kind). */
#define ARENASCOPE_KIND_TENSOR 1u     /* planned activation tensor in the head              */
#define ARENASCOPE_KIND_SCRATCH 2u    /* scratch buffer a kernel requested in Prepare       */
#define ARENASCOPE_KIND_PERSISTENT 3u /* persistent buffer in the tail (op data, variables) */
#define ARENASCOPE_KIND_METADATA 4u   /* TFLM bookkeeping in the tail (eval tensors, nodes, */
                                      /* allocator objects) or anything else               */

/* Region flags (arenascope_region_t.flags). */
#define ARENASCOPE_REGION_VARIABLE 0x01u        /* tensor is_variable (state kept across invokes) */
#define ARENASCOPE_REGION_MODEL_INPUT 0x02u     /* one of subgraph 0's inputs                     */
#define ARENASCOPE_REGION_MODEL_OUTPUT 0x04u    /* one of subgraph 0's outputs                    */
#define ARENASCOPE_REGION_OFFLINE_PLANNED 0x08u /* offset came from "OfflineMemoryAllocation"     */
#define ARENASCOPE_REGION_IMMUTABLE 0x10u       /* bytes never change after allocation: checksummed */
                                                /* for the fault post-mortem (arenascope/fault.h)   */

/* Descriptor flags (arenascope_descriptor_t.flags). */
#define ARENASCOPE_FLAG_MEASURED 0x01u    /* the bands' touched_lo/hi hold a measurement   */
#define ARENASCOPE_FLAG_STACK_LIMIT 0x02u /* a stack limit guards the stack's low bound:   */
                                          /* MSPLIM (ARMv8-M) or a PMP guard (RISC-V),     */
                                          /* arenascope_fault_stack_limit, fault.h         */

/* Arena flags (arenascope_arena_t.flags). */
#define ARENASCOPE_ARENA_TFLM 0x01u        /* set by the TFLM adapter (adapters/tflm):         */
                                           /* head/temp/tail are TFLM's own figures: then     */
                                           /* arena_used_bytes() == max(head,temp) + size - tail */
#define ARENASCOPE_ARENA_PLANNER_IDS 0x02u /* region ids are TFLM's planner buffer ids (the   */
                                           /* adapter): the host maps them to tensors and     */
                                           /* scratch buffers through the published model     */

#define ARENASCOPE_NONE 0xFFFFFFFFu /* touched_lo/hi: nothing touched                           */
#define ARENASCOPE_ID_NONE 0xFFFFu  /* region id: no tensor index                             */
#define ARENASCOPE_USE_NONE (-1)    /* first_use/last_use: not planned (lives the whole run)  */

/*-----------------------------------------------------------------------------------------
 * [SECTION] Descriptor layout
 * Little-endian (the target's own byte order). Offsets in the trailing comments are for a
 * 32-bit target (addr = 4 bytes); docs/agent-abi.md gives them for 8-byte addresses too.
 *---------------------------------------------------------------------------------------*/

typedef uintptr_t arenascope_addr_t; /* a target address, as wide as a pointer */

/* One region of an arena: 16 bytes, in a table the caller owns. */
typedef struct arenascope_region {
    uint32_t offset_bytes; /*  0 start, bytes from the arena's base_addr                          */
    uint32_t size_bytes;   /*  4 size in bytes (as planned: TFLM rounds planned sizes up to 16)    */
    uint16_t id;           /*  8 tensor index in its subgraph, or ARENASCOPE_ID_NONE               */
    uint8_t kind;          /* 10 ARENASCOPE_KIND_*                                                 */
    uint8_t flags;         /* 11 ARENASCOPE_REGION_*                                               */
    int16_t first_use;     /* 12 first allocation scope it is live in, or ARENASCOPE_USE_NONE      */
    int16_t last_use;      /* 14 last allocation scope it is live in, or ARENASCOPE_USE_NONE       */
} arenascope_region_t;

/* A band: a word-aligned address range filled with a known word (canary_pattern, or
 * stack_paint_pattern for the stack), and what a measurement found changed in it. 16 bytes on a 32-bit target, 24 with 8-byte addresses. */
typedef struct arenascope_band {
    arenascope_addr_t low_addr;  /* +0 first byte of the band (word-aligned)                  */
    arenascope_addr_t high_addr; /* +4 one past the last byte (word-aligned); low == high: none */
    uint32_t touched_lo;         /* +8 measured: first changed byte, offset from low_addr       */
    uint32_t touched_hi;         /* +12 measured: one past the last changed byte, from low_addr */
                                 /*     (word-granular; both ARENASCOPE_NONE when intact)       */
} arenascope_band_t;

/* One tensor arena. Offsets are from base_addr. Picture (TFLM's SingleArenaBufferAllocator):
 *   base                head      temp                                 tail          base+size
 *   |-- planned head ----|- temp -|------ free band (canary) ----------|-- persistent --|
 *   0               head_bytes temp_bytes                          tail_offset       size_bytes */
typedef struct arenascope_arena {
    arenascope_addr_t base_addr;    /*  0 first byte of the arena (16-aligned for TFLM; at least 4) */
    arenascope_addr_t regions_addr; /*  4 region table (arenascope_region_t[]), 0 if none           */
    arenascope_addr_t model_addr;   /*  8 model flatbuffer, 0 if not published                      */
    uint32_t size_bytes;            /* 12 arena size                                                */
    uint32_t head_bytes;            /* 16 end of the planned head, as an offset from base (= its size)*/
    uint32_t temp_bytes;            /* 20 temp high-water: highest end offset of temp use seen,     */
                                    /*    >= head_bytes (temp size = temp_bytes - head_bytes)       */
    uint32_t tail_offset;           /* 24 start of the persistent tail (size_bytes if empty)        */
    uint32_t model_size_bytes;      /* 28 length of the model flatbuffer, 0 if not published        */
    arenascope_band_t canary;       /* 32 the free band [temp, tail) as filled (word-trimmed);      */
                                    /*    all zero until arenascope_canary_fill                     */
    uint16_t alignment_bytes;       /* 48 alignment the allocator requires (16 for TFLM)            */
    uint16_t region_count;          /* 50 valid entries in the region table                         */
    uint16_t region_capacity;       /* 52 entries the table can hold                                */
    uint8_t flags;                  /* 54 ARENASCOPE_ARENA_*                                        */
    uint8_t reserved;               /* 55 zero                                                      */
} arenascope_arena_t;               /* 56 bytes on a 32-bit target, 80 with 8-byte addresses        */

/* The descriptor: 72 bytes of header, ARENASCOPE_MAX_ARENAS arena entries, then seq_check. */
typedef struct arenascope_descriptor {
    char magic[ARENASCOPE_MAGIC_SIZE];               /*  0 "ARENASCP", written last by arenascope_init   */
    uint8_t abi_major;                               /*  8 ARENASCOPE_ABI_MAJOR                           */
    uint8_t abi_minor;                               /*  9 ARENASCOPE_ABI_MINOR                           */
    uint16_t descriptor_size;                        /* 10 sizeof(arenascope_descriptor_t), bytes          */
    uint8_t addr_size;                               /* 12 bytes of an address field: 4 or 8               */
    uint8_t arena_capacity;                          /* 13 ARENASCOPE_MAX_ARENAS                           */
    uint8_t arena_count;                             /* 14 arenas in use (arena[0..count))                 */
    uint8_t arena_entry_size;                        /* 15 sizeof(arenascope_arena_t), bytes               */
    uint8_t region_entry_size;                       /* 16 sizeof(arenascope_region_t) = 16                */
    uint8_t flags;                                   /* 17 ARENASCOPE_FLAG_*                               */
    uint16_t seq;                                    /* 18 seqlock: odd while the target updates           */
    uint16_t layout_generation;                      /* 20 +1 on every region-table change (wraps)         */
    uint16_t reserved;                               /* 22 zero                                            */
    uint32_t invoke_phase;                           /* 24 2 x completed invokes, +1 while one runs        */
    uint32_t canary_pattern;                         /* 28 word the canary bands were filled with          */
    uint32_t stack_paint_pattern;                    /* 32 word the stack was painted with                 */
    arenascope_addr_t fault_record_addr;             /* 36 fault record, 0 if none                         */
    arenascope_band_t stack;                         /* 40 the stack [low, high), painted with             */
                                                     /*    stack_paint_pattern; touched_lo is the measured  */
                                                     /*    high-water mark as an offset from low (the      */
                                                     /*    lowest word that lost its paint; ARENASCOPE_NONE:*/
                                                     /*    never reached), touched_hi one past the highest  */
    arenascope_band_t guard;                         /* 56 guard band between the arena's end and the      */
                                                     /*    stack's limit, filled like the free band        */
    arenascope_arena_t arena[ARENASCOPE_MAX_ARENAS]; /* 72 */
    uint16_t seq_check;                              /* 72 + capacity x arena_entry_size (ABI 1.1):    */
                                                     /*    the seq the update in progress (or the last */
                                                     /*    one) ends with; written before seq goes odd */
    uint16_t reserved_end;                           /*    zero                                        */
} arenascope_descriptor_t; /* 132 bytes with one arena on a 32-bit target, 184 with 8-byte addr */

/* The one descriptor. Hosts find it by this symbol, or by scanning RAM for the magic. */
extern arenascope_descriptor_t arenascope_descriptor;

/*-----------------------------------------------------------------------------------------
 * [SECTION] API
 *---------------------------------------------------------------------------------------*/

/* Starts the agent: records the ABI version, the patterns, the stack bounds
 * [stack_low, stack_high) and the guard band [guard_low, guard_high) (the gap between the
 * arena's end and the stack's limit; NULL, NULL for none), fills the guard band with the canary
 * (nothing owns it, so the earlier the better), and writes the magic last. All four addresses
 * must be 4-byte aligned. Call once per boot, early in main, before any other arenascope_ call,
 * while the descriptor is still all zero (it lives in .bss). */
void arenascope_init(void *stack_low, void *stack_high, void *guard_low, void *guard_high);

/* Adds an arena of size_bytes at base (4-byte aligned at least), with a caller-owned region
 * table of capacity entries (NULL, 0 for none). head = temp = 0 and tail = size until set.
 * Returns the arena entry, or NULL when ARENASCOPE_MAX_ARENAS arenas are in use. */
arenascope_arena_t *arenascope_arena_add(void *base, uint32_t size_bytes, uint16_t alignment_bytes,
                                         arenascope_region_t *table, uint16_t capacity);

/* Records the head end, the temp high-water and the tail start, in bytes from base. The caller
 * keeps head_bytes <= temp_bytes <= tail_offset <= size_bytes and temp_bytes the highest temp
 * end seen so far (TFLM's allocator keeps the order; the adapter keeps the maximum). */
void arenascope_arena_set_marks(arenascope_arena_t *arena, uint32_t head_bytes, uint32_t temp_bytes,
                                uint32_t tail_offset);

/* Publishes the model flatbuffer (address and length in bytes), so a host can name tensors. */
void arenascope_arena_set_model(arenascope_arena_t *arena, const void *model, uint32_t size_bytes);

/* Appends a copy of *region to the arena's table. Returns its index, or -1 if the table is full
 * or absent. region == NULL empties the table instead (arenascope_regions_clear) and returns -1.
 * Bumps layout_generation. */
int arenascope_region_publish(arenascope_arena_t *arena, const arenascope_region_t *region);

/* Empties the arena's table (count = 0). Bumps layout_generation. */
#define arenascope_regions_clear(arena) ((void)arenascope_region_publish((arena), NULL))

/* Fills the arena's free band with canary_pattern, whole words only: from the temp high-water
 * rounded up to 4 to tail_offset rounded down to 4, and records it in arena->canary. Call
 * after allocation is final (TFLM: after AllocateTensors; its planner uses all free space as
 * scratch while planning, so an earlier fill proves nothing). O(band size). */
void arenascope_canary_fill(arenascope_arena_t *arena);

/* Marks the start and the end of one inference: invoke_phase goes odd at the start and even
 * at the end, so invoke_phase / 2 inferences have completed. O(1). Calls must pair. */
void arenascope_invoke_mark(void);
#define arenascope_invoke_begin() arenascope_invoke_mark()
#define arenascope_invoke_end() arenascope_invoke_mark()

/* Measures on target: the stack high-water mark (lowest word that lost its paint) and the
 * lowest/highest changed word of the guard band and of every filled free band, into the
 * bands' touched_lo/hi, so a live host need not read the bands. Sets ARENASCOPE_FLAG_MEASURED.
 * O(stack + bands): call it when idle (the demo does after each invoke). The bands are scanned
 * before the seqlock window, which holds only the stores of the results: a host reading while
 * the target measures back to back (demo scenario 9) still reads the descriptor clean.
 * The touched_* figures are as fresh as the last call: a fault after it is not in them.
 *
 * Painting the stack is a port's job, because it must not use the stack it paints:
 * ports/cortex_m/arenascope_port.h (from the reset handler, all of it) and
 * ports/host/arenascope_port.h (a thread's own stack, below the caller's frame). */
void arenascope_measure(void);

#ifdef __cplusplus
}
#endif

#endif /* __ASSEMBLER__ */
#endif /* ARENASCOPE_AGENT_H */
