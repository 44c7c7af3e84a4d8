/* Calls through pointers (tests/plugin/test_stackdepth.py): a chain A -> (p1) B -> (p2) leaf that
 * only pointers join, so every assumed target of each call closes a possible cycle; and a const
 * table of pointers, which calls.ld links into .text with the code (as many vendor scripts do). The
 * ELF's entry point is Reset_Handler, so the vector table is found wherever it is. */
typedef int (*fp_t)(int);
fp_t volatile p1, p2, q;
volatile int sink;

__attribute__((noinline)) int leaf(int x)
{
    return x + 1;
}
__attribute__((noinline)) int chain_a(int x)
{
    volatile char b[400];
    b[x & 255] = (char)x;
    return p1(x) + b[(x * 3) & 255];
}
__attribute__((noinline)) int chain_b(int x)
{
    volatile char b[500];
    b[x & 255] = (char)x;
    return p2(x) + b[(x * 5) & 255];
}
__attribute__((noinline)) int heavy(int x)
{
    volatile int b[150];
    b[x & 127] = x;
    return b[3];
}
__attribute__((noinline)) int light(int x)
{
    return x * 3;
}
const fp_t ops[2] = {heavy, light};
__attribute__((noinline)) int table_call(int i, int x)
{
    return ops[i & 1](x) + 1;
}

int main(void)
{
    p1 = chain_b;
    p2 = leaf;
    q = chain_a;
    for (;;) {
        sink = q(sink) + table_call(sink, sink);
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
extern unsigned __StackTop;
/* .text.zvectors: linked after the code, so the .text output section starts with a function. */
__attribute__((section(".text.zvectors"), used)) void (*const vectors[4])(void) = {
    (void (*)(void)) & __StackTop, Reset_Handler, Default_Handler, Default_Handler};
