// C++ calls (tests/plugin/test_stackdepth.py): virtual calls through two slots of a hierarchy, a
// struct's function pointer, and a C function calling through a pointer.
void operator delete(void *, unsigned int) {}  // the deleting destructors' (no C++ library linked)
struct Shape {
    virtual ~Shape() {}
    virtual int area(int x) = 0;
    virtual int perimeter(int x) = 0;
};
struct Square : Shape {
    int area(int x) override
    {
        volatile int b[40];
        b[x & 31] = x;
        return b[1] * x;
    }
    int perimeter(int x) override { return 4 * x; }
};
struct Circle : Shape {
    int area(int x) override
    {
        volatile int b[60];
        b[x & 31] = x;
        return b[2] * 3 * x;
    }
    int perimeter(int x) override
    {
        volatile int b[8];
        b[x & 7] = x;
        return 6 * b[1];
    }
};
struct Hooks {
    int tag;
    int (*hook)(int);
};
extern "C" __attribute__((noinline)) int on_hook(int x)
{
    volatile int b[20];
    b[x & 15] = x;
    return b[3];
}
__attribute__((noinline)) int measure(Shape &s, int x)
{
    return s.perimeter(x) + 1;
}
__attribute__((noinline)) int run_hook(Hooks *h, int x)
{
    return h->hook(x) + h->tag;
}
Square sq;
Circle ci;
Hooks hooks;
volatile int sink;
extern "C" int main(void)
{
    hooks.hook = on_hook;
    for (;;) {
        Shape *s = sink ? static_cast<Shape *>(&sq) : &ci;
        sink = measure(*s, sink) + run_hook(&hooks, sink);
    }
}
extern "C" void Reset_Handler(void)
{
    main();
}
extern "C" void Default_Handler(void)
{
    for (;;) {
    }
}
extern unsigned __StackTop;
__attribute__((section(".isr_vector"), used)) void (*const vectors[4])(void) = {
    (void (*)(void)) & __StackTop, Reset_Handler, Default_Handler, Default_Handler};
