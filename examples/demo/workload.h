/*
 * The demo's TFLM-shaped workload, shared by the Cortex-M4 firmware and the host build.
 *
 * It lays out one tensor arena the way TFLM's MicroAllocator does, from the plan the planner
 * generated for the demo's model (demo_plan.h: planned activations and scratch buffers at the
 * head, every persistent allocation in the tail where TFLM puts it), publishes it through the
 * arenascope agent, and runs the model's operators in order: each reads its input tensors, uses
 * its scratch buffers, updates its state tensor (an SVDF's, when the model has them) and writes
 * its output tensor, through an operator table (NodeAndRegistration-like, with function
 * pointers) that lives where TFLM's NodeAndRegistration array does in the persistent tail.
 */
#ifndef DEMO_WORKLOAD_H
#define DEMO_WORKLOAD_H

#include <stdint.h>

#include "arenascope/agent.h"
#include "demo_plan.h"

/* Scenario selector: set it from GDB with `set var demo_scenario = N` while halted, then
 * `continue`. It is read once per loop, after an invoke. No arenascope command writes it. */
enum demo_scenario {
    DEMO_NORMAL = 0,                /* invoke, measure, idle, forever                                  */
    DEMO_STACK_INTO_ARENA = 1,      /* deep recursion runs down through the guard band into the tail,  */
                                    /* returns; the next invoke calls through the overwritten table    */
    DEMO_TENSOR_OVERRUN = 2,        /* the first operator whose output ends at the head's end writes     */
                                    /* 128 B past it, into temp + free band                            */
    DEMO_BUS_FAULT = 3,             /* store to an unmapped address, BusFault handler enabled          */
    DEMO_HARD_FAULT = 4,            /* the same store with the configurable handlers off (FORCED)      */
    DEMO_UNDEFINED = 5,             /* an undefined instruction (UsageFault UNDEFINSTR)                */
    DEMO_DIV_BY_ZERO = 6,           /* integer divide by zero with CCR.DIV_0_TRP set (DIVBYZERO)       */
    DEMO_NULL_CALL = 7,             /* a call through a null function pointer                          */
    DEMO_STACK_INTO_ARENA_HARD = 8, /* scenario 1 with the configurable fault handlers off: the     */
                                    /* fault the overwritten tail causes escalates to HardFault (FORCED)*/
    DEMO_BUSY = 9,                  /* invoke and measure with no idle time: the descriptor is updated  */
                                    /* all the time (a live host must still read it clean)            */
};
extern volatile uint32_t demo_scenario;

/* The arena and the stack below which it sits; the architecture's main file defines them. */
extern uint8_t *const demo_arena;

/* Operator table entry: 32 bytes like TFLM's NodeAndRegistration on a 32-bit target. */
struct demo_node;
typedef struct demo_registration {
    void (*invoke)(const struct demo_node *node);
    const char *name;
} demo_registration_t;
typedef struct demo_node {
    const demo_registration_t *registration;
    uint32_t op_index;
    uint32_t state_offset; /* the operator's state (variable) tensor in the tail, 0 if none */
    uint32_t state_bytes;
    uint8_t pad[32 - sizeof(void *) - 3 * sizeof(uint32_t)];
} demo_node_t;

/* Lays the arena out and publishes it: call once after arenascope_init. */
void demo_allocate(void);

/* Runs one inference (all operators in order). */
void demo_invoke(void);

/* Runs the portable part of a scenario (recursion, overrun arming); returns 0 if it did, or
 * the scenario for the architecture's main to provoke (faults). */
uint32_t demo_run_scenario(uint32_t scenario);

/* Where the operator table lives (inside the arena tail). */
demo_node_t *demo_nodes(void);

/* Empty, never inlined: a stable place for a breakpoint after each measured invoke. */
void demo_invoke_done(uint32_t invokes);

#endif /* DEMO_WORKLOAD_H */
