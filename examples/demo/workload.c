/* The demo's TFLM-shaped workload: see workload.h. */
#define ARENASCOPE_PLAN_TABLES /* the generated plan's tables are defined here, once */
#include "workload.h"

#include <string.h>

#include "arenascope/fault.h"

volatile uint32_t demo_scenario;

static arenascope_region_t region_table[DEMO_HEAD_REGIONS + DEMO_TAIL_ITEMS];
static uint32_t region_checksums[DEMO_HEAD_REGIONS + DEMO_TAIL_ITEMS]; /* for the fault post-mortem */
static arenascope_arena_t *arena_entry;
static demo_node_t *nodes;
static uint32_t overrun_bytes;
static uint32_t overrun_op = 0xFFFFFFFFu; /* the first operator whose output ends at the head's end */
static uint32_t input_seed;

static void kernel_invoke(const demo_node_t *node);

/* One registration per operator, named after its op: the operator table in the arena's tail
 * points here. */
static demo_registration_t registrations[DEMO_OP_COUNT];

demo_node_t *demo_nodes(void)
{
    return nodes;
}

void demo_allocate(void)
{
    uint32_t i, op;

    arena_entry = arenascope_arena_add(demo_arena, DEMO_ARENA_BYTES, DEMO_ALIGNMENT, region_table,
                                       (uint16_t)(sizeof region_table / sizeof region_table[0]));
    for (i = 0; i < DEMO_HEAD_REGIONS; i++) {
        const arenascope_region_t *r = &arenascope_plan_head[i];
        arenascope_region_publish(arena_entry, r);
        if (r->kind == ARENASCOPE_KIND_TENSOR && r->offset_bytes + r->size_bytes == DEMO_HEAD_BYTES &&
            r->first_use >= 1 && (uint32_t)r->first_use - 1u < overrun_op) {
            overrun_op = (uint32_t)r->first_use - 1u; /* operator i writes its output in scope i+1 */
        }
    }
    /* The tail, every persistent allocation at the offset TFLM gives it (arena_allocator's tail
     * grows down from the end, each request aligned down: the planner worked the offsets out). */
    for (i = 0; i < DEMO_TAIL_ITEMS; i++) {
        const arenascope_plan_tail_item_t *t = &arenascope_plan_tail[i];
        arenascope_region_t r;
        r.offset_bytes = t->offset_bytes;
        r.size_bytes = t->size_bytes;
        r.id = t->id;
        r.kind = t->kind;
        r.flags = t->flags;
        r.first_use = ARENASCOPE_USE_NONE; /* persistent: lives for the whole run */
        r.last_use = ARENASCOPE_USE_NONE;
        memset(demo_arena + r.offset_bytes, 0, r.size_bytes);
        arenascope_region_publish(arena_entry, &r);
    }
    nodes = (demo_node_t *)(void *)(demo_arena + arenascope_plan_tail[ARENASCOPE_PLAN_TAIL_NODES].offset_bytes);
    for (op = 0; op < DEMO_OP_COUNT; op++) {
        const int16_t state = arenascope_plan_op_state[op];
        registrations[op].invoke = kernel_invoke;
        registrations[op].name = arenascope_plan_op_names[op];
        nodes[op].registration = &registrations[op];
        nodes[op].op_index = op;
        if (state >= 0) {
            nodes[op].state_offset = arenascope_plan_tail[state].offset_bytes;
            nodes[op].state_bytes = arenascope_plan_tail[state].size_bytes;
        }
    }
    /* Allocation is final: record the marks, then fill the free band (never earlier, as TFLM's
     * planner uses all free space while it plans). */
    arenascope_arena_set_marks(arena_entry, DEMO_HEAD_BYTES, DEMO_HEAD_BYTES + DEMO_TEMP_BYTES,
                               DEMO_ARENA_BYTES - DEMO_TAIL_BYTES);
    arenascope_canary_fill(arena_entry);
    arenascope_fault_protect(arena_entry, region_checksums,
                             (uint16_t)(sizeof region_checksums / sizeof region_checksums[0]));
}

/* The one kernel behind every registration: reads the operator's inputs, fills and reads its
 * scratch buffers, updates its state tensor and writes its output, all at the plan's offsets. */
static void kernel_invoke(const demo_node_t *node)
{
    const int16_t scope = (int16_t)(node->op_index + 1u); /* operator i runs in scope i+1 */
    uint32_t acc = node->op_index * 2654435761u;
    uint32_t i, k;

    if (node->op_index == 0u) { /* the first operator takes temp space above the head, as kernels may */
        memset(demo_arena + DEMO_HEAD_BYTES, (int)(input_seed & 0x7fu), DEMO_TEMP_BYTES);
    }
    for (i = 0; i < DEMO_HEAD_REGIONS; i++) {
        const arenascope_region_t *r = &arenascope_plan_head[i];
        uint8_t *p = demo_arena + r->offset_bytes;
        if (r->kind == ARENASCOPE_KIND_SCRATCH && r->first_use == scope) {
            memset(p, (int)(acc & 0x7fu), r->size_bytes);
            for (k = 0; k < r->size_bytes; k += 16u) {
                acc = acc * 31u + p[k];
            }
        } else if (r->kind == ARENASCOPE_KIND_TENSOR && r->first_use < scope && scope <= r->last_use) {
            for (k = 0; k < r->size_bytes; k++) {
                acc = acc * 31u + p[k];
            }
        }
    }
    if (node->state_bytes != 0u) {
        uint8_t *state = demo_arena + node->state_offset;
        memmove(state, state + 1, node->state_bytes - 1u); /* shift the state (an SVDF's activation history) */
        state[node->state_bytes - 1u] = (uint8_t)acc;
    }
    for (i = 0; i < DEMO_HEAD_REGIONS; i++) {
        const arenascope_region_t *r = &arenascope_plan_head[i];
        if (r->kind == ARENASCOPE_KIND_TENSOR && r->first_use == scope) {
            uint32_t n = r->size_bytes + (node->op_index == overrun_op ? overrun_bytes : 0u);
            for (k = 0; k < n; k++) {
                demo_arena[r->offset_bytes + k] = (uint8_t)(acc >> (k & 15u));
            }
        }
    }
}

void demo_invoke(void)
{
    uint32_t op, i, k;

    arenascope_invoke_begin();
    input_seed++;
    for (i = 0; i < DEMO_HEAD_REGIONS; i++) { /* the model's inputs, live from scope 0 */
        const arenascope_region_t *r = &arenascope_plan_head[i];
        if (r->flags & ARENASCOPE_REGION_MODEL_INPUT) {
            for (k = 0; k < r->size_bytes; k++) {
                demo_arena[r->offset_bytes + k] = (uint8_t)(input_seed + k);
            }
        }
    }
    for (op = 0; op < DEMO_OP_COUNT; op++) {
        nodes[op].registration->invoke(&nodes[op]); /* through the table in the arena tail */
    }
    arenascope_invoke_end();
}

/* Recurses until its frame is below `floor`, each frame holding a 64-byte buffer of 0x5A, then
 * returns: like an unbounded recursion on a board, the stack runs through the guard band into
 * whatever is below it and leaves its bytes there. */
static __attribute__((noinline)) uint32_t recurse_down_to(uintptr_t floor)
{
    volatile uint32_t frame[16];
    uint32_t i, sum = 0;

    for (i = 0; i < 16u; i++) {
        frame[i] = 0x5A5A5A5Au;
    }
    if ((uintptr_t)&frame[0] > floor) {
        sum = recurse_down_to(floor);
    }
    for (i = 0; i < 16u; i++) {
        sum += frame[i];
    }
    return sum;
}

volatile uint32_t demo_sink;

uint32_t demo_run_scenario(uint32_t scenario)
{
    switch (scenario) {
    case DEMO_NORMAL:
        return 0;
    case DEMO_STACK_INTO_ARENA:
        demo_sink = recurse_down_to((uintptr_t)nodes);
        demo_scenario = DEMO_NORMAL; /* once: the damage is done, the next invoke finds it */
        return 0;
    case DEMO_TENSOR_OVERRUN:
        overrun_bytes = 128u;
        return 0;
    default:
        return scenario;
    }
}

__attribute__((noinline)) void demo_invoke_done(uint32_t invokes)
{
    demo_sink = invokes;
    __asm__ volatile("" ::: "memory");
}
