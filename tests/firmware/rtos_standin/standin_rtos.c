/*
 * arenascope's FreeRTOS stand-in (standin_rtos.h says what it is and is not): lists, task
 * creation, delays, the tick and the PendSV context switch for ARMv7-M and ARMv8-M Mainline
 * (ARMv7-M ARM B1.5.6-B1.5.8: exception entry pushes r0-r3, r12, lr, pc, xPSR on the active
 * stack; EXC_RETURN 0xFFFFFFFD returns to thread mode on PSP with a basic frame). On ARMv8-M the
 * switch also sets PSPLIM to the task's pxStack, as FreeRTOS's ARM_CM33 port does, so a task's
 * overflow faults at once (UsageFault STKOF).
 */
#include "standin_rtos.h"

#include <string.h>

#define REG(addr) (*(volatile uint32_t *)(addr))
#define SCB_ICSR REG(0xE000ED04u)
#define ICSR_PENDSVSET (1u << 28)
#define FILL_BYTE 0xA5u          /* tskSTACK_FILL_BYTE */
#define INITIAL_XPSR 0x01000000u /* the Thumb bit */

TCB_t *volatile pxCurrentTCB;
List_t pxReadyTasksLists[configMAX_PRIORITIES];
static List_t xDelayedTaskList1;
static List_t xDelayedTaskList2; /* kept for the names: the stand-in's tick never overflows */
static List_t xPendingReadyList;
static List_t xSuspendedTaskList;
static List_t xTasksWaitingTermination;
static volatile TickType_t xTickCount;
static volatile UBaseType_t uxCurrentNumberOfTasks;
static uint8_t ucHeap[2048] __attribute__((aligned(8)));
static size_t heap_used;

static void list_init(List_t *list)
{
    list->uxNumberOfItems = 0;
    list->pxIndex = (ListItem_t *)&list->xListEnd;
    list->xListEnd.xItemValue = 0xFFFFFFFFu;
    list->xListEnd.pxNext = (ListItem_t *)&list->xListEnd;
    list->xListEnd.pxPrevious = (ListItem_t *)&list->xListEnd;
}

static void list_insert_end(List_t *list, ListItem_t *item)
{
    ListItem_t *end = (ListItem_t *)&list->xListEnd;
    item->pxNext = end;
    item->pxPrevious = end->pxPrevious;
    end->pxPrevious->pxNext = item;
    end->pxPrevious = item;
    item->pxContainer = list;
    list->uxNumberOfItems++;
}

static void list_remove(ListItem_t *item)
{
    List_t *list = item->pxContainer;
    item->pxNext->pxPrevious = item->pxPrevious;
    item->pxPrevious->pxNext = item->pxNext;
    if (list->pxIndex == item) {
        list->pxIndex = item->pxPrevious;
    }
    item->pxContainer = 0;
    list->uxNumberOfItems--;
}

static void lists_init(void)
{
    static int done;
    if (done) {
        return;
    }
    done = 1;
    for (int p = 0; p < configMAX_PRIORITIES; p++) {
        list_init(&pxReadyTasksLists[p]);
    }
    list_init(&xDelayedTaskList1);
    list_init(&xDelayedTaskList2);
    list_init(&xPendingReadyList);
    list_init(&xSuspendedTaskList);
    list_init(&xTasksWaitingTermination);
}

static void task_exit(void)
{
    for (;;) {
        __asm__ volatile("wfi");
    }
}

StackType_t *standin_stack_alloc(uint32_t words)
{
    BlockLink_t *block = (BlockLink_t *)(void *)&ucHeap[heap_used];
    size_t bytes = sizeof(BlockLink_t) + words * sizeof(StackType_t);

    bytes = (bytes + 7u) & ~(size_t)7u;
    if (heap_used + bytes > sizeof ucHeap) {
        return 0;
    }
    heap_used += bytes;
    block->pxNextFreeBlock = 0;
    block->xBlockSize = bytes | ((size_t)1 << 31); /* heapBLOCK_ALLOCATED_BITMASK */
    return (StackType_t *)(void *)(block + 1);
}

void standin_task_create(TCB_t *tcb, const char *name, UBaseType_t priority, StackType_t *stack, uint32_t words,
                         void (*entry)(void))
{
    StackType_t *top;

    lists_init();
    memset(stack, FILL_BYTE, words * sizeof(StackType_t));
    memset(tcb, 0, sizeof *tcb);
    strncpy(tcb->pcTaskName, name, configMAX_TASK_NAME_LEN - 1);
    tcb->pxStack = stack;
    tcb->uxPriority = priority;
    top = (StackType_t *)((uintptr_t)(stack + words) & ~(uintptr_t)7u);
    *--top = INITIAL_XPSR;
    *--top = (StackType_t)(uintptr_t)entry & ~1u; /* the stacked PC */
    *--top = (StackType_t)(uintptr_t)task_exit;   /* LR */
    top -= 5;                                     /* r12, r3, r2, r1, r0 */
    top -= 8;                                     /* r11..r4, restored by PendSV */
    tcb->pxTopOfStack = top;
    tcb->xStateListItem.pvOwner = tcb;
    tcb->xEventListItem.pvOwner = tcb;
    list_insert_end(&pxReadyTasksLists[priority], &tcb->xStateListItem);
    uxCurrentNumberOfTasks++;
}

static void yield(void)
{
    SCB_ICSR = ICSR_PENDSVSET;
    __asm__ volatile("dsb\n isb");
}

void standin_delay(TickType_t ticks)
{
    __asm__ volatile("cpsid i");
    list_remove(&pxCurrentTCB->xStateListItem);
    pxCurrentTCB->xStateListItem.xItemValue = xTickCount + ticks;
    list_insert_end(&xDelayedTaskList1, &pxCurrentTCB->xStateListItem);
    yield();
    __asm__ volatile("cpsie i");
}

void standin_suspend_self(void)
{
    __asm__ volatile("cpsid i");
    list_remove(&pxCurrentTCB->xStateListItem);
    list_insert_end(&xSuspendedTaskList, &pxCurrentTCB->xStateListItem);
    yield();
    __asm__ volatile("cpsie i");
}

void standin_tick(void)
{
    ListItem_t *item = xDelayedTaskList1.xListEnd.pxNext;

    xTickCount++;
    while (item != (ListItem_t *)&xDelayedTaskList1.xListEnd) {
        ListItem_t *next = item->pxNext;
        if ((int32_t)(xTickCount - item->xItemValue) >= 0) {
            TCB_t *tcb = item->pvOwner;
            list_remove(item);
            list_insert_end(&pxReadyTasksLists[tcb->uxPriority], item);
        }
        item = next;
    }
    yield(); /* round robin: the tick may switch to another ready task */
}

/* Called from PendSV (handler mode, interrupts at the lowest priority): the next task to run,
 * the highest-priority ready one, taken round robin within its priority. */
__attribute__((used)) void standin_select(void)
{
    for (int p = configMAX_PRIORITIES - 1; p >= 0; p--) {
        List_t *list = &pxReadyTasksLists[p];
        if (list->uxNumberOfItems != 0) {
            ListItem_t *first = list->xListEnd.pxNext;
            if (list->uxNumberOfItems > 1 && first->pvOwner == pxCurrentTCB) {
                list_remove(first); /* the one that ran goes to the back */
                list_insert_end(list, first);
                first = list->xListEnd.pxNext;
            }
            pxCurrentTCB = first->pvOwner;
            return;
        }
    }
}

#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define SET_PSPLIM "ldr r2, [r1, #%c[stack]]\n msr psplim, r2\n"
#else
#define SET_PSPLIM ""
#endif

/* The context switch. The first one (pxCurrentTCB NULL) saves nothing: it leaves main on the main
 * stack for good. Naked: no compiler-made frame between entry and the saved registers. */
__attribute__((naked, used)) void standin_pendsv(void)
{
    __asm__ volatile("mrs   r0, psp\n"
                     "ldr   r3, =pxCurrentTCB\n"
                     "ldr   r2, [r3]\n"
                     "cbz   r2, 1f\n"
                     "stmdb r0!, {r4-r11}\n"
                     "str   r0, [r2]\n"
                     "1:\n"
                     "push  {r3, lr}\n"
                     "bl    standin_select\n"
                     "pop   {r3, lr}\n"
                     "ldr   r1, [r3]\n" SET_PSPLIM "ldr   r0, [r1]\n"
                     "ldmia r0!, {r4-r11}\n"
                     "msr   psp, r0\n"
                     "ldr   lr, =0xFFFFFFFD\n"
                     "bx    lr\n"
                     ".ltorg\n" ::[stack] "i"(offsetof(TCB_t, pxStack)));
}

void standin_start(void)
{
    REG(0xE000ED20u) |= 0xFFFF0000u; /* SHPR3: PendSV and SysTick at the lowest priority */
    yield();
    for (;;) {
        __asm__ volatile("wfi"); /* PendSV takes over from here and never comes back */
    }
}
