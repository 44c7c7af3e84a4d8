/* A user's firmware main: publishes one tensor arena with two tensors through the arenascope
 * agent (docs/agent.md, "Calls"). On the host (no linker-script symbols) the stack and guard are
 * not given. */
#include <stddef.h>
#include <stdint.h>

#include "arenascope/agent.h"

#define OUTSIDE_ARENA_BYTES 4096u

static uint8_t tensor_arena[OUTSIDE_ARENA_BYTES] __attribute__((aligned(16), section(".tensor_arena")));
static arenascope_region_t regions[8];

#if defined(__arm__)
extern uint32_t __StackLimit, __StackTop, __guard_start, __guard_end; /* stm32f405.ld */
#endif

int main(void)
{
    int unused_on_purpose; /* the user's -Wall warns; the agent's -Werror must not make it fatal */
    /* A GNU statement expression: an error under -pedantic -Werror, fine in the user's gnu11. */
    uint32_t head = ({
        uint32_t h = 512u;
        h + 96u;
    });
#if defined(__arm__)
    arenascope_init(&__StackLimit, &__StackTop, &__guard_start, &__guard_end);
#else
    arenascope_init(NULL, NULL, NULL, NULL);
#endif
    arenascope_arena_t *a = arenascope_arena_add(tensor_arena, sizeof tensor_arena, 16, regions, 8);
    arenascope_region_t input = {0, 512, 0, ARENASCOPE_KIND_TENSOR, 0, 1, 2};
    arenascope_region_t output = {512, 96, 1, ARENASCOPE_KIND_TENSOR, 0, 2, 3};
    arenascope_region_publish(a, &input);
    arenascope_region_publish(a, &output);
    arenascope_arena_set_marks(a, head, head, OUTSIDE_ARENA_BYTES);
    arenascope_canary_fill(a);
    arenascope_invoke_begin();
    arenascope_invoke_end();
    arenascope_measure();
#if defined(__arm__)
    for (;;) {
        __asm__ volatile("wfi");
    }
#else
    return 0;
#endif
}
