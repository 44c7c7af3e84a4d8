/*
 * arenascope target agent: the fault record (HardFault post-mortem).
 *
 * What it is
 *   One record, `arenascope_fault_record`, in a RAM section the startup code does not zero
 *   (`.noinit`), so it survives a warm reset (watchdog, NVIC_SystemReset). At exception entry the
 *   Cortex-M port (ports/cortex_m/arenascope_fault_port.c) records the fault status registers,
 *   EXC_RETURN, the active stack pointer and a copy of the stacked frame, then chains to a weak
 *   user hook. The host finds the record by its symbol, before or without the descriptor
 *   (descriptor field fault_record_addr points at it too), validates it by magic and checksum,
 *   and tells a fault of this boot from one of an earlier boot by the counters.
 *   Layout byte by byte: docs/agent-abi.md, "Fault record". Register meanings: ARMv7-M
 *   Architecture Reference Manual B3.2.15 (CFSR), B3.2.16 (HFSR), B3.2.17 (MMFAR), B3.2.18 (BFAR),
 *   B1.5.6 (EXC_RETURN), B1.5.7 (the stacked frame), and the Cortex-M4 TRM (FPCCR, lazy stacking).
 *
 * Rules
 *   - arenascope_fault_boot() runs once per boot, right after arenascope_init: it keeps a valid
 *     record, counting the boot, or creates a fresh one, and points the descriptor at it.
 *   - The record is written with the magic cleared first and set last, with a checksum, so a host
 *     never trusts a half-written record; a fault while a fault is being recorded keeps the first
 *     fault's registers and sets ARENASCOPE_FAULT_NESTED.
 *   - Region checksums (arenascope_fault_protect) cover regions flagged
 *     ARENASCOPE_REGION_IMMUTABLE (TFLM: eval tensors, node arrays, allocator objects): after a
 *     fault the host recomputes them from memory and names the regions that were overwritten, even
 *     when the stack that did it has unwound since.
 */
#ifndef ARENASCOPE_FAULT_H
#define ARENASCOPE_FAULT_H

#include "arenascope/agent.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARENASCOPE_FAULT_MAGIC 0x544C4641u /* "AFLT" in memory */
/* 2: checksums_addr is an address (arenascope_addr_t, 8 bytes on a 64-bit host build, which
 * version 1 truncated to 32 bits). On a 32-bit target the layout is version 1's, byte for byte. */
#define ARENASCOPE_FAULT_VERSION 2u

/* arenascope_fault_record_t.arch: which core's registers the record holds. */
#define ARENASCOPE_FAULT_ARCH_CORTEX_M 0u /* the fields' names: Cortex-M's SCB and EXC_RETURN        */
#define ARENASCOPE_FAULT_ARCH_RISCV 1u    /* RISC-V machine mode: the fields hold the trap CSRs (below) */

/* arenascope_fault_record_t.flags */
#define ARENASCOPE_FAULT_FRAME_COPIED 0x01u /* frame[] holds the stacked frame                       */
#define ARENASCOPE_FAULT_PSP 0x02u          /* the frame was on the process stack (EXC_RETURN bit 2) */
#define ARENASCOPE_FAULT_EXTENDED 0x04u     /* extended (FP) frame: EXC_RETURN bit 4 clear           */
#define ARENASCOPE_FAULT_LAZY_FP 0x08u      /* FPCCR.LSPACT: FP space reserved, registers not written */
#define ARENASCOPE_FAULT_NESTED 0x10u       /* another fault came while this one was being recorded  */

/* Offsets in the trailing comments are for a 32-bit target (addr = 4 bytes), then, where they
 * differ, for 8-byte addresses; docs/agent-abi.md and the golden fixture
 * (target_agent/abi/agent_abi_v1.json, "fault_record") give both. No padding in either. */
typedef struct arenascope_fault_record {
    uint32_t magic;                   /*  0 ARENASCOPE_FAULT_MAGIC when complete, 0 while being written   */
    uint16_t version;                 /*  4 ARENASCOPE_FAULT_VERSION                                        */
    uint16_t size;                    /*  6 sizeof(arenascope_fault_record_t): 100, 104 with 8-byte addr    */
    uint32_t boot_count;              /*  8 boots since the record was created (1 on the first)            */
    uint32_t fault_count;             /* 12 faults recorded since the record was created                   */
    uint32_t fault_boot;              /* 16 boot_count when the last fault was recorded (0: none yet)       */
    uint32_t flags;                   /* 20 ARENASCOPE_FAULT_*                                             */
    uint32_t exc_return;              /* 24 LR at exception entry                                          */
    uint32_t sp;                      /* 28 the active SP at entry: the stacked frame's address            */
    uint32_t cfsr;                    /* 32 SCB->CFSR (0xE000ED28): MMFSR | BFSR << 8 | UFSR << 16          */
    uint32_t hfsr;                    /* 36 SCB->HFSR (0xE000ED2C)                                          */
    uint32_t mmfar;                   /* 40 SCB->MMFAR (0xE000ED34), meaningful when CFSR.MMARVALID         */
    uint32_t bfar;                    /* 44 SCB->BFAR (0xE000ED38), meaningful when CFSR.BFARVALID          */
    uint32_t shcsr;                   /* 48 SCB->SHCSR (0xE000ED24): enabled/active handlers                */
    uint32_t icsr;                    /* 52 SCB->ICSR (0xE000ED04): VECTACTIVE = the exception number       */
    uint32_t frame[8];                /* 56 r0 r1 r2 r3 r12 lr pc xpsr, when FRAME_COPIED                    */
    arenascope_addr_t checksums_addr; /* 88 uint32_t[checksum_count]: FNV-1a of each immutable   */
                                      /*    region of arena 0 by region index, 0 for the others  */
    uint16_t checksum_count;          /* 92 / 96  entries in that table; 0 if none                          */
    uint16_t arch;                    /* 94 / 98  ARENASCOPE_FAULT_ARCH_*: 0 also in records where it was reserved */
    uint32_t checksum;                /* 96 / 100 FNV-1a 32 over bytes 4 up to this field                   */
} arenascope_fault_record_t;          /* 100 bytes on a 32-bit target, 104 with 8-byte addresses */

/* On a RISC-V core (arch ARENASCOPE_FAULT_ARCH_RISCV, ports/riscv) the same fields hold the trap,
 * RISC-V Privileged Architecture 1.12 section 3.1: exc_return = mstatus, sp = the SP at the trap,
 * cfsr = mcause, hfsr = 0, mmfar = mtval, bfar = mepc, shcsr = mtvec, icsr = 0, frame = mepc, ra,
 * sp, a0, a1, a2, a3, a4 (always copied); flags only FRAME_COPIED and NESTED. */

/* Bytes the record's checksum covers: from `version` (offset 4) up to `checksum`. */
#define ARENASCOPE_FAULT_CHECKSUMMED_BYTES ((uint32_t)(offsetof(arenascope_fault_record_t, checksum) - 4u))

/* The layout checked at compile time, for the target being built (C99 has no _Static_assert: an
 * array of size -1 is the error). The golden fixture's offsets are checked by the tests. */
typedef char arenascope_fault_record_size_check
    [sizeof(arenascope_fault_record_t) == (sizeof(arenascope_addr_t) == 8 ? 104u : 100u) ? 1 : -1];
typedef char arenascope_fault_record_checksum_last
    [offsetof(arenascope_fault_record_t, checksum) + 4u == sizeof(arenascope_fault_record_t) ? 1 : -1];

/* The record (in .noinit: not zeroed by the startup code). */
extern arenascope_fault_record_t arenascope_fault_record;

/* The registers the port reads at exception entry. */
typedef struct arenascope_fault_regs {
    uint32_t cfsr, hfsr, mmfar, bfar, shcsr, icsr, fpccr;
} arenascope_fault_regs_t;

/* Keeps a valid record (counting this boot) or creates a fresh one, and sets the descriptor's
 * fault_record_addr. Once per boot, right after arenascope_init. */
void arenascope_fault_boot(void);

/* RISC-V (ports/riscv/arenascope_port.h): locks a PMP guard over the stack's lowest bytes instead.
 * ARMv8-M Mainline (M33, M55, M85): sets MSPLIM, the main stack's limit register, to the stack's
 * low bound given to arenascope_init, so that a stack overflow faults at once (UsageFault STKOF,
 * ARMv8-M ARM B3.22) instead of writing into the guard band and the arena below, and sets the
 * descriptor's ARENASCOPE_FLAG_STACK_LIMIT so that `arena fault` says so. The port's handler
 * clears MSPLIM before it runs C, on the guard band below the limit: leave one (arenascope_init's
 * guard) of at least 128 bytes. Call after arenascope_init, from thread mode on the main stack.
 * Returns 1 when set, 0 on a core without a (Non-secure-visible) main stack limit register. */
int arenascope_fault_stack_limit(void);

/* Records a fault: frame is the stacked frame (the active SP at entry), exc_return the LR at
 * entry. Copies the frame unless the stacking itself failed (CFSR MSTKERR/STKERR). Called by the
 * port's handler; public so the port can be replaced. Interrupt-safe, not reentrant: a second
 * call before the first returns keeps the first fault and sets NESTED. */
void arenascope_fault_capture(const uint32_t *frame, uint32_t exc_return, const arenascope_fault_regs_t *regs);

/* Records a trap on a core without Cortex-M's exception frame: arch (ARENASCOPE_FAULT_ARCH_*),
 * the SP at the trap, the 7 status words in the order of the record's exc_return, cfsr, hfsr,
 * mmfar, bfar, shcsr, icsr fields and the 8 saved registers, as the arch's mapping above says.
 * Called by such a port's trap handler (ports/riscv); the same rules as arenascope_fault_capture. */
void arenascope_fault_capture_words(uint16_t arch, uint32_t sp, const uint32_t status[7], const uint32_t frame[8]);

/* Checksums every region of arena flagged ARENASCOPE_REGION_IMMUTABLE into table[index]
 * (0 for the others) and points the record at the table. Call after allocation is final.
 * Returns the number of regions checksummed, or -1 if capacity < the arena's region count. */
int arenascope_fault_protect(const arenascope_arena_t *arena, uint32_t *table, uint16_t capacity);

/* FNV-1a 32-bit over len bytes (the checksum the host recomputes). */
uint32_t arenascope_fnv1a(const void *data, uint32_t len);

/* Called after a fault is recorded, with the record. Weak default: sleeps forever (wfi), so a
 * debugger can attach and a watchdog can reset. Override to log, blink, or reset. */
void arenascope_fault_hook(const arenascope_fault_record_t *record);

#ifdef __cplusplus
}
#endif

#endif /* ARENASCOPE_FAULT_H */
