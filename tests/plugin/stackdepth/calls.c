/* The call-graph test program (tests/plugin/test_stackdepth.py): direct calls, a tail call, a
 * mutual recursion, an indirect call through a table, an interrupt handler. Built for Cortex-M and
 * RV32 with GCC's -fstack-usage and -fcallgraph-info, which the test compares against. */
typedef int (*op_t)(int);
volatile int sink;
__attribute__((noinline)) int leaf(int x)
{
    volatile int a[10];
    a[x & 7] = x;
    return a[3];
}
__attribute__((noinline)) int twice(int x)
{
    return leaf(x) + leaf(x + 1);
}
__attribute__((noinline)) int odd(int n);
__attribute__((noinline)) int even(int n)
{
    volatile int pad[4];
    pad[0] = n;
    return n == 0 ? 1 : odd(n - 1) + pad[0];
}
__attribute__((noinline)) int odd(int n)
{
    return n == 0 ? 0 : even(n - 1);
}
__attribute__((noinline)) int k1(int x)
{
    volatile int b[20];
    b[x & 15] = x;
    return b[1];
}
__attribute__((noinline)) int k2(int x)
{
    return twice(x) * 3;
}
op_t table[2] = {k1, k2};
__attribute__((noinline)) int dispatch(int i, int x)
{
    return table[i & 1](x) + 1;
}
__attribute__((noinline)) int tail(int x)
{
    return twice(x + 7);
}
#ifdef __riscv
__attribute__((aligned(4))) void trap_handler(void)
{
    sink = k2(sink);
}
#endif
int main(void)
{
#ifdef __riscv
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw mtvec, %0\n.option pop" : : "r"(trap_handler));
#endif
#ifdef NO_RECURSION
    for (;;) {
        sink = dispatch(sink, sink) + tail(sink);
    }
#else
    for (;;) {
        sink = dispatch(sink, sink) + even(sink) + tail(sink);
    }
#endif
}
void Reset_Handler(void)
{
    main();
}
void SysTick_Handler(void)
{
    sink = leaf(sink);
}
void Default_Handler(void)
{
    for (;;) {
    }
}
#ifndef __riscv
extern unsigned __StackTop;
__attribute__((section(".isr_vector"), used)) void (*const vectors[16])(void) = {(void (*)(void)) & __StackTop,
                                                                                 Reset_Handler,
                                                                                 Default_Handler,
                                                                                 Default_Handler,
                                                                                 0,
                                                                                 0,
                                                                                 0,
                                                                                 0,
                                                                                 0,
                                                                                 0,
                                                                                 0,
                                                                                 Default_Handler,
                                                                                 0,
                                                                                 0,
                                                                                 Default_Handler,
                                                                                 SysTick_Handler};
#endif
