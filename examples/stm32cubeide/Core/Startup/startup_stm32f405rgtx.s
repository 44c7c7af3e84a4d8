/*
 * startup_stm32f405rgtx.s, in the shape of the one STM32CubeIDE generates for an STM32F405
 * (CMSIS device startup: vector table, Reset_Handler in assembly, weak handler names aliased to
 * Default_Handler), written for the arenascope recipe. The lines marked "arenascope" are the
 * only changes a CubeIDE project needs in its own copy: the include, the stack-paint line and
 * the four fault handlers.
 * CubeIDE assembles .s files with `-x assembler-with-cpp`, so #include works here.
 */
  .syntax unified
  .cpu cortex-m4
  .fpu softvfp
  .thumb

#include "arenascope_port.h"  /* arenascope: ARENASCOPE_STACK_PAINT */

.global g_pfnVectors
.global Default_Handler

/* start address for the initialization values of the .data section (linker script) */
.word _sidata
/* start and end address of the .data section */
.word _sdata
.word _edata
/* start and end address of the .bss section */
.word _sbss
.word _ebss

  .section .text.Reset_Handler
  .weak Reset_Handler
  .type Reset_Handler, %function
Reset_Handler:
  ldr   sp, =_estack       /* set stack pointer */
  ARENASCOPE_STACK_PAINT(_sstack, _estack)  /* arenascope: paint [_sstack, _estack) 0xCC */

/* Call the clock system initialization function.*/
  bl  SystemInit

/* Copy the data segment initializers from flash to SRAM */
  ldr r0, =_sdata
  ldr r1, =_edata
  ldr r2, =_sidata
  movs r3, #0
  b LoopCopyDataInit

CopyDataInit:
  ldr r4, [r2, r3]
  str r4, [r0, r3]
  adds r3, r3, #4

LoopCopyDataInit:
  adds r4, r0, r3
  cmp r4, r1
  bcc CopyDataInit

/* Zero fill the bss segment. */
  ldr r2, =_sbss
  ldr r4, =_ebss
  movs r3, #0
  b LoopFillZerobss

FillZerobss:
  str  r3, [r2]
  adds r2, r2, #4

LoopFillZerobss:
  cmp r2, r4
  bcc FillZerobss

/* Call static constructors */
  bl __libc_init_array
/* Call the application's entry point.*/
  bl  main
  bx  lr
.size Reset_Handler, .-Reset_Handler

/* Default_Handler: an unexpected interrupt; loops, preserving the system state for a debugger. */
  .section .text.Default_Handler,"ax",%progbits
Default_Handler:
Infinite_Loop:
  b  Infinite_Loop
  .size Default_Handler, .-Default_Handler

/* arenascope: HardFault_Handler, MemManage_Handler, BusFault_Handler and UsageFault_Handler stay
 * CubeMX's weak aliases of Default_Handler below; the fault port, compiled with
 * -DARENASCOPE_FAULT_HANDLER_NAMES (the Makefile), defines the four names strongly as its
 * capture entry, so the linker takes those (see README.md). */

/* The vector table: the Cortex-M4 system exceptions, then the STM32F405's 82 interrupts. */
  .section .isr_vector,"a",%progbits
  .type g_pfnVectors, %object

g_pfnVectors:
  .word _estack
  .word Reset_Handler
  .word NMI_Handler
  .word HardFault_Handler
  .word MemManage_Handler
  .word BusFault_Handler
  .word UsageFault_Handler
  .word 0
  .word 0
  .word 0
  .word 0
  .word SVC_Handler
  .word DebugMon_Handler
  .word 0
  .word PendSV_Handler
  .word SysTick_Handler
  /* External interrupts: CubeIDE names each one (WWDG_IRQHandler, PVD_IRQHandler, ...) and
   * aliases it weakly to Default_Handler; none is used here. */
  .rept 82
  .word Default_Handler
  .endr
  .size g_pfnVectors, .-g_pfnVectors

/* Weak aliases for each exception handler to the Default_Handler: any function of the same
 * name overrides them. */
  .weak      NMI_Handler
  .thumb_set NMI_Handler,Default_Handler

  .weak      HardFault_Handler
  .thumb_set HardFault_Handler,Default_Handler

  .weak      MemManage_Handler
  .thumb_set MemManage_Handler,Default_Handler

  .weak      BusFault_Handler
  .thumb_set BusFault_Handler,Default_Handler

  .weak      UsageFault_Handler
  .thumb_set UsageFault_Handler,Default_Handler

  .weak      SVC_Handler
  .thumb_set SVC_Handler,Default_Handler

  .weak      DebugMon_Handler
  .thumb_set DebugMon_Handler,Default_Handler

  .weak      PendSV_Handler
  .thumb_set PendSV_Handler,Default_Handler

  .weak      SysTick_Handler
  .thumb_set SysTick_Handler,Default_Handler
