/* Frames the prologue alone must size (tests/plugin/test_stackdepth.py): a frame over 508 B, which
 * ARMv6-M builds with LDR Rm, =-N; ADD SP, Rm, and an alloca, whose size no figure bounds. */
#define alloca __builtin_alloca /* no C library here */
volatile int sink;

__attribute__((noinline)) int big_frame(int x)
{
    volatile char b[600];
    b[x & 511] = (char)x;
    return b[(x * 7) & 511];
}
__attribute__((noinline)) int use_alloca(int n)
{
    volatile char *p = alloca((unsigned)n);
    p[0] = (char)n;
    return p[n - 1];
}
int main(void)
{
    for (;;) {
        sink = big_frame(sink) + use_alloca(sink & 63);
    }
}
void Reset_Handler(void)
{
    main();
}
void Default_Handler(void)
{
    for (;;) {
    }
}
#ifndef __riscv
extern unsigned __StackTop;
__attribute__((section(".isr_vector"), used)) void (*const vectors[4])(void) = {
    (void (*)(void)) & __StackTop, Reset_Handler, Default_Handler, Default_Handler};
#endif
