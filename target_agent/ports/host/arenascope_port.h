/*
 * arenascope host port: stack painting for a thread whose stack is known (a host build of the
 * firmware, or an RTOS task), where the stack cannot be painted before the thread runs.
 */
#ifndef ARENASCOPE_PORT_HOST_H
#define ARENASCOPE_PORT_HOST_H

#ifdef __cplusplus
extern "C" {
#endif

/* Paints the stack recorded by arenascope_init (descriptor stack.low_addr) up to
 * ARENASCOPE_STACK_PAINT_MARGIN bytes below this function's own frame with
 * stack_paint_pattern. Call from the thread that owns that stack, after arenascope_init.
 * O(stack size). Does nothing if the caller's frame is not inside the recorded stack. */
void arenascope_port_stack_paint_below_sp(void);

#ifdef __cplusplus
}
#endif

#endif /* ARENASCOPE_PORT_HOST_H */
