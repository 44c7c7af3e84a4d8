/*
 * NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN: a firmware with TFLM 90b983c2's class and
 * member names for what arenascope's agentless mode reads, so that its post-mortem is tested in
 * CI where real TFLM cannot be built; it lays out the arena by re-enacting the allocation steps
 * arenascope-plan predicts.
 *
 * The application, written as a TFLM application is (a function-static MicroInterpreter over a
 * tensor arena right below the stack), and its scenarios (README.md). GDB sets the two volatile
 * selectors at a breakpoint on standin_boot(), before the interpreter is constructed.
 * Register addresses: ARMv7-M ARM B3.2 (SCB) and the MPS2 AN386 memory map (CMSDK UART0).
 * Built for RV32 (__riscv: tflm_standin_rv32_fw.elf on QEMU virt, README.md) the UART is picolibc's
 * semihosted stdout and startup_rv32.cpp paints the stack and sets mtvec at the start of main.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "standin_new.h"
#include "standin_plan.h"
#include "tflite_standin.h"
#ifdef STANDIN_WITH_AGENT
#include "arenascope/agent.h"
#endif

#if defined(__riscv)
#include <stdio.h>
#else
#define REG(addr) (*(volatile uint32_t *)(addr))
#define UART0_DATA REG(0x40004000u)
#define UART0_CTRL REG(0x40004008u)
#define UART0_BAUDDIV REG(0x40004010u)
#define SCB_VTOR REG(0xE000ED08u)
#endif

extern "C" {
extern const uint8_t demo_model_data[];  // cmake/embed_model.cmake: the demo's model
extern const uint32_t demo_model_bytes;
#if defined(__riscv)
// picolibc's linker script: the stack is __stack_size bytes (an absolute symbol) below __stack; the
// stand-in's (virt_rv32_standin.ld) puts the arena right below it.
extern char __stack[], __stack_size[];
#define STANDIN_STACK_LIMIT ((uint32_t)(uintptr_t)(__stack - (uintptr_t)__stack_size))
void standin_rv32_start(void);  // startup_rv32.cpp: mtvec, the stack's paint
#else
extern uint32_t __StackLimit, __StackTop;
extern void (*const standin_vectors_saving_sp[])(void);
#define STANDIN_STACK_LIMIT ((uint32_t)&__StackLimit)
#endif

// The tensor arena: the recommended size, placed by the linker script directly below the stack.
__attribute__((section(".tensor_arena"), aligned(16))) uint8_t tensor_arena[STANDIN_RECOMMENDED_BYTES];

// Scenario 5: a second interpreter in TFLM's two-arena mode, its head in one buffer and its tail
// (with the allocator objects) in the other: as big as the one arena, so that both fit whatever
// the model; standin_*_bytes say how much of each the allocator gets.
#define STANDIN_TWO_ARENA_BYTES (STANDIN_RECOMMENDED_BYTES + 256u)
__attribute__((aligned(16))) uint8_t standin_non_persistent_arena[STANDIN_TWO_ARENA_BYTES];
__attribute__((aligned(16))) uint8_t standin_persistent_arena[STANDIN_TWO_ARENA_BYTES];
volatile uint32_t standin_non_persistent_bytes = STANDIN_TWO_ARENA_BYTES;
volatile uint32_t standin_persistent_bytes = STANDIN_TWO_ARENA_BYTES;

#ifdef STANDIN_PER_INFERENCE
// The per-inference variant (tflm_standin_per_inference_fw.elf), as Edge Impulse's SDK runs by
// default: for each inference the arena and the interpreter are malloc'd (newlib nano's malloc,
// from the heap __HeapBase/__HeapLimit bound), allocated, invoked, destroyed and freed. A result
// buffer malloc'd after the first inference and kept makes the next arena land elsewhere: it moves.
extern uint8_t __HeapBase[], __HeapLimit[];
extern "C" void *_sbrk(ptrdiff_t increment)
{
    static uint8_t *brk = __HeapBase;
    if (increment > __HeapLimit - brk) return (void *)-1;
    uint8_t *old = brk;
    brk += increment;
    return old;
}
tflite::MicroInterpreter *g_interpreter;  // dangles between inferences, as an application's often does
volatile uint8_t *standin_results;        // kept from the first inference on
volatile uintptr_t standin_arena_at;      // this inference's arena (the tests read it)
extern "C" __attribute__((noinline)) void between_inferences(int n)
{
    __asm volatile("" ::"r"(n) : "memory");
}
#endif

#if defined(STANDIN_HEAP) || defined(STANDIN_EXTRAM)
#ifdef STANDIN_HEAP
// The heap-arena variant (tflm_standin_heap_fw.elf): the arena and the interpreter taken from the
// heap the linker script bounds (__HeapBase/__HeapLimit), as esp-tflite-micro and Edge Impulse do;
// the interpreter held through a global pointer. A bump allocator: nothing is freed.
extern uint8_t __HeapBase[], __HeapLimit[];
#define STANDIN_POOL_BASE __HeapBase
#define STANDIN_POOL_LIMIT __HeapLimit
tflite::MicroInterpreter *g_interpreter;
#else
// The external-RAM variant (tflm_standin_extram_fw.elf): the arena and the interpreter taken from
// QEMU mps2-an386's PSRAM (16 MiB at 0x21000000), which no ELF section covers, as esp-tflite-micro
// takes them from PSRAM (heap_caps_malloc); the interpreter held only through a member of a user
// struct (standin_app.slots[1].interpreter) and a pointer to that struct.
#define STANDIN_POOL_BASE ((uint8_t *)0x21000000u)
#define STANDIN_POOL_LIMIT ((uint8_t *)0x22000000u)
struct StandinModelSlot {
    uint32_t frames;
    tflite::MicroInterpreter *interpreter;
};
struct StandinApp {
    uint32_t flags;
    StandinModelSlot slots[2];
};
StandinApp standin_app;
StandinApp *volatile standin_app_ptr = &standin_app;
#endif
static uint8_t *standin_heap_next = STANDIN_POOL_BASE;
static void *standin_heap_alloc(size_t bytes)
{
    uint8_t *at = (uint8_t *)(((uintptr_t)standin_heap_next + 15u) & ~(uintptr_t)15u);
    if (at + bytes > STANDIN_POOL_LIMIT) return nullptr;
    standin_heap_next = at + bytes;
    return at;
}
#endif

// Set from GDB at standin_boot() (the plugin never writes: the tests and you do).
volatile uint32_t standin_arena_bytes = STANDIN_RECOMMENDED_BYTES;  // what the interpreter gets
volatile uint32_t standin_scenario = 0;                             // README.md: 0..5 (RV32: 6)
volatile uint32_t standin_recursion_depth = 0;        // scenario 3/4: frames; 0: down to the overrun below
volatile uint32_t standin_stack_overrun_bytes = 200;  // scenario 3/4 with depth 0: how far past __StackLimit
volatile uint32_t standin_recursion_fill_all = 0;     // scenario 3/4: 1: the frames leave no paint word
volatile uint32_t standin_invokes;                    // invokes completed
volatile uint32_t g_fault_sp;                         // scenario 4: the SP the fault stacked its frame at
volatile int8_t standin_sink;
#if defined(__riscv)
volatile uintptr_t standin_wild_address = 0x90000000u;  // scenario 6: no memory answers there on QEMU virt
#endif

void standin_uart_putc(char c)
{
#if defined(__riscv)
    putchar(c);  // picolibc's stdout: semihosting (--oslib=semihost), QEMU's stdout
#else
    UART0_DATA = (uint32_t)(uint8_t)c;
#endif
}

// Breakpoint targets (noinline, each its own function).
__attribute__((noinline, used)) void standin_boot(void)
{
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline, used)) void inference_done(int n)
{
    __asm__ volatile("" ::"r"(n) : "memory");
}
__attribute__((noinline, used)) void allocation_failed(void)
{
    while (1) {
    }
}
__attribute__((noinline, used)) void invoke_failed(void)
{
    __asm__ volatile("wfi" ::: "memory");  // no interrupt is enabled: sleeps until GDB stops it
}
}

static void uart_puts(const char *s)
{
    while (*s) standin_uart_putc(*s++);
}

namespace {

size_t element_bytes(TfLiteType t)
{
    switch (t) {
    case kTfLiteInt32:
    case kTfLiteFloat32:
    case kTfLiteUInt32: return 4;
    case kTfLiteInt16:
    case kTfLiteUInt16:
    case kTfLiteFloat16: return 2;
    case kTfLiteInt64:
    case kTfLiteFloat64:
    case kTfLiteUInt64:
    case kTfLiteComplex64: return 8;
    default: return 1;
    }
}

size_t eval_bytes(const TfLiteEvalTensor *t)
{
    size_t n = element_bytes(t->type);
    for (int i = 0; i < t->dims->size; ++i) n *= (size_t)t->dims->data[i];
    return n;
}

// The stand-in's kernel: reads what a kernel's Invoke reads through TFLM's pointers (its OpData,
// its builtin options, the eval tensors of its inputs) and writes its output tensor in the head.
TfLiteStatus standin_kernel_invoke(TfLiteContext *context, TfLiteNode *node)
{
    const uint8_t *op_data = static_cast<const uint8_t *>(node->user_data);
    const uint8_t *options = static_cast<const uint8_t *>(node->builtin_data);
    const TfLiteEvalTensor *input = context->GetEvalTensor(context, node->inputs->data[0]);
    TfLiteEvalTensor *output = context->GetEvalTensor(context, node->outputs->data[0]);
    int8_t v = input->data.int8 ? input->data.int8[0] : 0;
    v = (int8_t)(v + (op_data ? op_data[0] : 0) + (options ? options[0] : 0) + 1);
#if defined(__riscv)
    // Scenario 6 (RV32): from the second inference on, the kernel writes its output through a wild
    // pointer (standin_wild_address, no memory there), as a kernel computing a bad address does.
    if (standin_scenario == 6 && standin_invokes > 0) {
        memset((void *)standin_wild_address, v, eval_bytes(output));
        return kTfLiteOk;
    }
#endif
    memset(output->data.data, v, eval_bytes(output));
    return kTfLiteOk;
}

void *standin_kernel_init(TfLiteContext *, const char *, size_t)
{
    return nullptr;
}

// MicroMutableOpResolver's role: one registration per builtin code the model uses.
class StandinOpResolver : public tflite::MicroOpResolver {
public:
    const tflite::TFLMRegistration *FindOp(int32_t builtin_code) const override
    {
        for (int i = 0; i < count_; ++i)
            if (registrations_[i].builtin_code == builtin_code) return &registrations_[i];
        if (count_ == kMax) return nullptr;
        tflite::TFLMRegistration &r = registrations_[count_++];
        r = {standin_kernel_init, nullptr, nullptr, standin_kernel_invoke, nullptr, builtin_code, nullptr};
        return &r;
    }

private:
    static constexpr int kMax = 32;
    mutable tflite::TFLMRegistration registrations_[kMax] = {};
    mutable int count_ = 0;
};

// Scenario 3/4: a recursion whose frames run past __StackLimit into the arena's tail, and return.
// Each frame writes 3 of its 8 local words (the others keep the paint, as a frame's unused
// locals do), unless standin_recursion_fill_all is set.
__attribute__((noinline)) uint32_t standin_recurse(uint32_t n)
{
    volatile uint32_t pad[8];
    const int fill = standin_recursion_fill_all ? 8 : 3;
    for (int i = 0; i < fill; ++i) pad[i] = 0x5A5A5A5Au;
    uint32_t sp;
#if defined(__riscv)
    __asm__ volatile("mv %0, sp" : "=r"(sp));
#else
    __asm__ volatile("mov %0, sp" : "=r"(sp));
#endif
    const bool deeper = standin_recursion_depth ? n + 1 < standin_recursion_depth
                                                : sp > STANDIN_STACK_LIMIT - standin_stack_overrun_bytes;
    uint32_t r = deeper ? standin_recurse(n + 1) : 0;
    return r + pad[n % 3];
}

}  // namespace

extern "C" void *__dso_handle;
void *__dso_handle = nullptr;
// Function statics register their destructors; this firmware never exits.
extern "C" int __cxa_atexit(void (*)(void *), void *, void *)
{
    return 0;
}
extern "C" void __cxa_pure_virtual(void)
{
    while (1) {
    }
}
void operator delete(void *) noexcept {}
void operator delete(void *, size_t) noexcept {}

// main's parts, inlined into it (always_inline): main's frame, and so the stack the scenarios
// overrun, stays what it was as one function, and the interpreters stay main's statics
// (main::interpreter, main::second: the tests find them by those names).
#define STANDIN_MAIN_PART static inline __attribute__((always_inline))

// The UART, standin_boot (where GDB sets the scenario), the banner; scenario 4's vector table.
STANDIN_MAIN_PART void start(void)
{
#if defined(__riscv)
    standin_rv32_start();
#else
    UART0_BAUDDIV = 16u;
    UART0_CTRL = 1u; /* TX enable */
#endif
    standin_boot();
    uart_puts("tflm stand-in (NOT TensorFlow Lite Micro): scenario ");
    standin_uart_putc((char)('0' + standin_scenario % 10));
    uart_puts("\n");
#if !defined(__riscv)
    if (standin_scenario == 4) SCB_VTOR = (uint32_t)standin_vectors_saving_sp;
#endif
}

// Invokes forever, each inference completed counted; a failed Invoke stops in invoke_failed.
STANDIN_MAIN_PART void invoke_forever(tflite::MicroInterpreter &interpreter)
{
    for (;;) {
        if (interpreter.Invoke() != kTfLiteOk) {
            for (;;) invoke_failed();
        }
        inference_done((int)++standin_invokes);
    }
}

#ifdef STANDIN_PER_INFERENCE
// An arena and an interpreter taken from the heap for each inference, and freed after it.
STANDIN_MAIN_PART void allocate_per_inference(const tflite::MicroOpResolver &resolver, size_t arena_bytes)
{
    for (;;) {
        uint8_t *raw = static_cast<uint8_t *>(malloc(arena_bytes + 15u));
        void *where = malloc(sizeof(tflite::MicroInterpreter));
        if (!raw || !where) allocation_failed();
        uint8_t *arena = (uint8_t *)(((uintptr_t)raw + 15u) & ~(uintptr_t)15u);
        standin_arena_at = (uintptr_t)arena;
        g_interpreter =
            new (where) tflite::MicroInterpreter(tflite::GetModel(demo_model_data), resolver, arena, arena_bytes);
        if (g_interpreter->AllocateTensors() != kTfLiteOk) allocation_failed();
        if (g_interpreter->Invoke() != kTfLiteOk) {
            for (;;) invoke_failed();
        }
        inference_done((int)++standin_invokes);
        g_interpreter->~MicroInterpreter();
        free(where);
        free(raw);
        if (!standin_results) standin_results = static_cast<volatile uint8_t *>(malloc(64));
        between_inferences((int)standin_invokes);
    }
}
#endif

#if defined(STANDIN_HEAP) || defined(STANDIN_EXTRAM)
// The arena and the interpreter taken from the heap (STANDIN_HEAP) or external RAM (STANDIN_EXTRAM),
// the interpreter's pointer kept where the application keeps it.
STANDIN_MAIN_PART tflite::MicroInterpreter *heap_interpreter(const tflite::MicroOpResolver &resolver,
                                                             size_t arena_bytes)
{
    uint8_t *heap_arena = static_cast<uint8_t *>(standin_heap_alloc(arena_bytes));
    void *where = standin_heap_alloc(sizeof(tflite::MicroInterpreter));
    if (!heap_arena || !where) allocation_failed();
    tflite::MicroInterpreter *made =
        new (where) tflite::MicroInterpreter(tflite::GetModel(demo_model_data), resolver, heap_arena, arena_bytes);
#ifdef STANDIN_HEAP
    g_interpreter = made;
#else
    standin_app.slots[1].interpreter = made;
#endif
    return made;
}
#endif

// Scenario 5's second interpreter's allocator, which the application creates in two-arena mode
// (MicroAllocator::Create(persistent, size, non_persistent, size)).
STANDIN_MAIN_PART tflite::MicroAllocator *two_arena_allocator(void)
{
    size_t p = standin_persistent_bytes, np = standin_non_persistent_bytes;
    if (p > sizeof(standin_persistent_arena)) p = sizeof(standin_persistent_arena);
    if (np > sizeof(standin_non_persistent_arena)) np = sizeof(standin_non_persistent_arena);
#if STANDIN_ONE_POINTER  // TFLM before 2022-04 has no two-arena mode: two arenas of its one kind
    (void)np;
    tflite::MicroAllocator *two = tflite::MicroAllocator::Create(standin_persistent_arena, p);
#else
    tflite::MicroAllocator *two =
        tflite::MicroAllocator::Create(standin_persistent_arena, p, standin_non_persistent_arena, np);
#endif
    if (!two) allocation_failed();
    return two;
}

// Scenario 3/4: an inference, then the recursion into the arena's tail, then an Invoke that follows
// TFLM's pointers from the tail the stack overwrote.
STANDIN_MAIN_PART void overrun_the_stack(tflite::MicroInterpreter &interpreter)
{
    if (interpreter.Invoke() == kTfLiteOk) inference_done((int)++standin_invokes);
    standin_sink = (int8_t)standin_recurse(0);
    uart_puts("recursion returned\n");
    interpreter.Invoke();  // follows TFLM's pointers from the tail the stack overwrote
    uart_puts("invoke after the recursion returned\n");
    allocation_failed();
}

int main(void)
{
    start();
    size_t arena_bytes = standin_arena_bytes;
    if (arena_bytes > sizeof(tensor_arena)) arena_bytes = sizeof(tensor_arena);

#ifdef STANDIN_WITH_AGENT
    // The variant with the arenascope agent (tflm_standin_agent_fw.elf): the descriptor, the stack
    // painted band; the arena is published only once AllocateTensors succeeded, as an application
    // publishes it after allocation (docs/agent.md), so a failed allocation leaves none.
    arenascope_init(&__StackLimit, &__StackTop, nullptr, nullptr);
#endif
    static StandinOpResolver resolver;
#ifdef STANDIN_PER_INFERENCE
    allocate_per_inference(resolver, arena_bytes);
#endif
#if defined(STANDIN_HEAP) || defined(STANDIN_EXTRAM)
    tflite::MicroInterpreter &interpreter = *heap_interpreter(resolver, arena_bytes);
#else
    static tflite::MicroInterpreter interpreter(tflite::GetModel(demo_model_data), resolver, tensor_arena, arena_bytes);
#endif
    const TfLiteStatus status = interpreter.AllocateTensors();
#ifdef STANDIN_WITH_AGENT
    if (status == kTfLiteOk) {
        arenascope_arena_t *arena = arenascope_arena_add(tensor_arena, (uint32_t)arena_bytes, 16, nullptr, 0);
        arenascope_arena_set_model(arena, demo_model_data, demo_model_bytes);
    }
#endif

    if (standin_scenario == 2) {
        // The status ignored: input(0) reads input_tensors_[0], a null array when AllocateTensors
        // failed, so it returns the word at address 0 (the vector table's initial SP).
        interpreter.input(0)->data.int8[0] = 0;
        invoke_forever(interpreter);
    }
    if (status != kTfLiteOk) allocation_failed();
    uart_puts("AllocateTensors ok\n");
    if (standin_scenario == 5) {
        // Several interpreters: the second one over an allocator the application creates in
        // two-arena mode.
        tflite::MicroAllocator *two = two_arena_allocator();
        static tflite::MicroInterpreter second(tflite::GetModel(demo_model_data), resolver, two);
        if (second.AllocateTensors() != kTfLiteOk) allocation_failed();
        uart_puts("second interpreter (two arenas): AllocateTensors ok\n");
        for (;;) {
            if (interpreter.Invoke() != kTfLiteOk || second.Invoke() != kTfLiteOk) {
                for (;;) invoke_failed();
            }
            inference_done((int)++standin_invokes);
        }
    }
    if (standin_scenario == 3 || standin_scenario == 4) overrun_the_stack(interpreter);
    invoke_forever(interpreter);
}
