/*
 * arenascope demo, host build (x86-64 Linux): the same agent and TFLM-shaped workload as the
 * Cortex-M4 firmware, so the GDB plugin can be tested under plain gdb too.
 *
 * Memory is laid out as on the board: one static block holding the tensor arena, then the
 * guard band, then the stack of the thread that runs the inferences (the stack grows down
 * toward the arena). Usage: demo_host [INVOKES] (default 5; 0 = forever).
 * The scenario selector is the same global (workload.h); faults become signals here.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"
#include "arenascope_port.h"
#include "workload.h"

#define HOST_STACK_BYTES (64u * 1024u)

static struct {
    uint8_t arena[DEMO_ARENA_BYTES];
    uint8_t guard[DEMO_GUARD_BYTES];
    uint8_t stack[HOST_STACK_BYTES];
} ram __attribute__((aligned(16)));

uint8_t *const demo_arena = ram.arena;
static unsigned long invoke_limit = 5;

static void provoke(uint32_t scenario)
{
    volatile uint32_t zero = 0u, one = 1u;
    void (*volatile null_fn)(void) = 0;

    printf("arenascope demo: scenario %u\n", (unsigned)scenario);
    fflush(stdout);
    switch (scenario) {
    case DEMO_BUS_FAULT:
    case DEMO_HARD_FAULT:
        *(volatile uint32_t *)(uintptr_t)0x10u = 0u; /* unmapped: SIGSEGV */
        break;
    case DEMO_UNDEFINED:
        __asm__ volatile("ud2"); /* SIGILL */
        break;
    case DEMO_DIV_BY_ZERO:
        one = one / zero; /* SIGFPE */
        break;
    case DEMO_NULL_CALL:
        null_fn(); /* SIGSEGV */
        break;
    default: break;
    }
}

static void *inference_thread(void *arg)
{
    unsigned long invokes = 0;
    const struct timespec idle = {0, 10 * 1000 * 1000};

    (void)arg;
    arenascope_port_stack_paint_below_sp();
    demo_allocate();
    printf("arenascope demo (host): arena at %p, %u bytes, running inferences\n", (void *)ram.arena,
           (unsigned)DEMO_ARENA_BYTES);
    fflush(stdout);
    while (invoke_limit == 0 || invokes < invoke_limit) {
        uint32_t scenario;
        demo_invoke();
        arenascope_measure();
        demo_invoke_done((uint32_t)++invokes);
        scenario = demo_run_scenario(demo_scenario);
        if (scenario != DEMO_NORMAL) {
            provoke(scenario);
        }
        nanosleep(&idle, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_attr_t attr;
    pthread_t thread;

    if (argc > 2 || (argc == 2 && (argv[1][0] < '0' || argv[1][0] > '9'))) {
        fprintf(stderr, "usage: demo_host [INVOKES]   (number of inferences, default 5, 0 = until killed)\n");
        return 2;
    }
    if (argc == 2) {
        char *end;
        invoke_limit = strtoul(argv[1], &end, 10);
        if (*end != '\0') {
            fprintf(stderr, "demo_host: INVOKES must be a number, not %s\n", argv[1]);
            return 2;
        }
    }
    arenascope_init(ram.stack, ram.stack + sizeof ram.stack, ram.guard, ram.guard + sizeof ram.guard);
    arenascope_fault_boot();
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, ram.stack, sizeof ram.stack);
    if (pthread_create(&thread, &attr, inference_thread, NULL) != 0) {
        fprintf(stderr, "demo_host: cannot start the inference thread\n");
        return 1;
    }
    pthread_join(thread, NULL);
    printf("arenascope demo (host): %lu inferences, %u invoke marks\n", invoke_limit,
           (unsigned)arenascope_descriptor.invoke_phase);
    return 0;
}
