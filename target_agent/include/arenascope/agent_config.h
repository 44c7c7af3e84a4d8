/*
 * arenascope target agent: compile-time configuration.
 *
 * Every knob has a default here; override it with -D on the compiler command line
 * (for example -DARENASCOPE_MAX_ARENAS=2). Costs are for a -Os Cortex-M4 build.
 * Do not include this file directly: include "arenascope/agent.h".
 */
#ifndef ARENASCOPE_AGENT_CONFIG_H
#define ARENASCOPE_AGENT_CONFIG_H

#ifndef ARENASCOPE_AGENT_H
#error "include arenascope/agent.h, not arenascope/agent_config.h"
#endif

/* Number of arena entries in the descriptor (several interpreters, or TFLM's two-arena mode).
 * Cost: 56 bytes of RAM per extra arena on a 32-bit target. Range 1..255. */
#ifndef ARENASCOPE_MAX_ARENAS
#define ARENASCOPE_MAX_ARENAS 1
#endif

/* Default canary word written over the free band and the guard band (0xAA bytes). It is
 * compared as a whole 32-bit word, since int8 tensor data can hold single 0xAA bytes. The value
 * in force is recorded in the descriptor, so a host never assumes it. */
#ifndef ARENASCOPE_CANARY_PATTERN
#define ARENASCOPE_CANARY_PATTERN 0xAAAAAAAA
#endif

/* Default stack paint word (0xCC bytes), recorded in the descriptor like the canary. */
#ifndef ARENASCOPE_STACK_PAINT_PATTERN
#define ARENASCOPE_STACK_PAINT_PATTERN 0xCCCCCCCC
#endif

/* Zeroed or erased RAM holds 0 or 0xFFFFFFFF: a band filled with either would look intact
 * without ever being filled, so the ABI forbids them and the host names such a pattern in the
 * descriptor as corrupt (docs/agent-abi.md). */
#if (ARENASCOPE_CANARY_PATTERN) == 0 || (ARENASCOPE_CANARY_PATTERN) == 0xFFFFFFFF
#error "ARENASCOPE_CANARY_PATTERN must not be 0 or 0xFFFFFFFF (zeroed or erased RAM holds them)"
#endif
#if (ARENASCOPE_STACK_PAINT_PATTERN) == 0 || (ARENASCOPE_STACK_PAINT_PATTERN) == 0xFFFFFFFF
#error "ARENASCOPE_STACK_PAINT_PATTERN must not be 0 or 0xFFFFFFFF (zeroed or erased RAM holds them)"
#endif

/* Bytes left unpainted below the caller's stack pointer by arenascope_stack_paint(), so the
 * painter never writes its own frame. Must be a multiple of 4. */
#ifndef ARENASCOPE_STACK_PAINT_MARGIN
#define ARENASCOPE_STACK_PAINT_MARGIN 64
#endif

#ifndef __ASSEMBLER__ /* the rest is C only; the patterns above are also used from assembly */

/* Section of the descriptor. It must be zero-initialised (no initializer copy in flash) and
 * kept by the linker: put KEEP(*(.bss.arenascope*)) in the linker script when the firmware
 * links with --gc-sections and might not reference the agent otherwise. */
#ifndef ARENASCOPE_DESCRIPTOR_SECTION
#define ARENASCOPE_DESCRIPTOR_SECTION __attribute__((section(".bss.arenascope_descriptor")))
#endif

/* Memory barrier between descriptor stores the host must see in order (seqlock, magic). */
#ifndef ARENASCOPE_BARRIER
#define ARENASCOPE_BARRIER() __sync_synchronize()
#endif

#endif /* __ASSEMBLER__ */

#if ARENASCOPE_MAX_ARENAS < 1 || ARENASCOPE_MAX_ARENAS > 255
#error "ARENASCOPE_MAX_ARENAS must be 1..255"
#endif
#if (ARENASCOPE_STACK_PAINT_MARGIN % 4) != 0
#error "ARENASCOPE_STACK_PAINT_MARGIN must be a multiple of 4"
#endif

#endif /* ARENASCOPE_AGENT_CONFIG_H */
