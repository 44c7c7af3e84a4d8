/*
 * arenascope's FreeRTOS stand-in: NOT FreeRTOS. A small preemptive round-robin scheduler of this
 * project's own whose kernel objects carry FreeRTOS's type, member and variable names and shapes
 * (FreeRTOS-Kernel tasks.c and include/list.h: TCB_t, List_t, ListItem_t, MiniListItem_t,
 * pxCurrentTCB, pxReadyTasksLists, xDelayedTaskList1/2, xSuspendedTaskList, ...), so the
 * plugin's agentless FreeRTOS walk (gdbplugin/arenascope_plugin/decode/freertos.py) runs in CI,
 * where FreeRTOS itself is not built. No FreeRTOS code is here; the fields it keeps are the ones
 * a kernel-aware debugger reads. A real FreeRTOS build is checked by hand (docs/rtos.md).
 *
 * Like FreeRTOS on Cortex-M: tasks run in thread mode on the process stack (PSP), the switch is
 * PendSV at the lowest priority, a task's stack is filled with 0xA5 when it is created, and its
 * TCB's pxTopOfStack is the PSP saved at its last switch-out, r4-r11 below the hardware frame.
 */
#ifndef STANDIN_RTOS_H
#define STANDIN_RTOS_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t TickType_t;
typedef unsigned long UBaseType_t;
typedef uint32_t StackType_t;

struct xLIST;
struct xLIST_ITEM {
    volatile TickType_t xItemValue;
    struct xLIST_ITEM *volatile pxNext;
    struct xLIST_ITEM *volatile pxPrevious;
    void *pvOwner;
    struct xLIST *volatile pxContainer;
};
typedef struct xLIST_ITEM ListItem_t;
struct xMINI_LIST_ITEM {
    volatile TickType_t xItemValue;
    struct xLIST_ITEM *volatile pxNext;
    struct xLIST_ITEM *volatile pxPrevious;
};
typedef struct xMINI_LIST_ITEM MiniListItem_t;
typedef struct xLIST {
    volatile UBaseType_t uxNumberOfItems;
    ListItem_t *volatile pxIndex;
    MiniListItem_t xListEnd;
} List_t;

#define configMAX_PRIORITIES 4
#define configMAX_TASK_NAME_LEN 16

typedef struct tskTaskControlBlock {
    volatile StackType_t *pxTopOfStack; /* the PSP saved at the last switch-out: the first member */
    ListItem_t xStateListItem;
    ListItem_t xEventListItem;
    UBaseType_t uxPriority;
    StackType_t *pxStack; /* the stack's lowest address */
    char pcTaskName[configMAX_TASK_NAME_LEN];
} tskTCB;
typedef tskTCB TCB_t;

/* heap_4's block header (FreeRTOS portable/MemMang/heap_4.c): the stand-in's one allocator puts it
 * in front of every block, the allocated bit the size's top bit. */
typedef struct A_BLOCK_LINK {
    struct A_BLOCK_LINK *pxNextFreeBlock;
    size_t xBlockSize;
} BlockLink_t;

extern TCB_t *volatile pxCurrentTCB;

/* Creates a task on `stack` (`words` words, filled with 0xA5) and makes it ready. */
void standin_task_create(TCB_t *tcb, const char *name, UBaseType_t priority, StackType_t *stack, uint32_t words,
                         void (*entry)(void));
/* A stack of `words` words from the stand-in's heap (ucHeap), with heap_4's header in front. */
StackType_t *standin_stack_alloc(uint32_t words);
void standin_delay(TickType_t ticks); /* blocked for `ticks` SysTicks (xDelayedTaskList1) */
void standin_suspend_self(void);      /* onto xSuspendedTaskList, for good */
void standin_start(void);             /* runs the highest-priority task; never returns */
void standin_tick(void);              /* the SysTick handler's work */
void standin_pendsv(void);            /* the PendSV handler: the context switch */

#endif /* STANDIN_RTOS_H */
