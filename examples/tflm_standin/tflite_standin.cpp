/*
 * NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN: a firmware with TFLM 90b983c2's class and
 * member names for what arenascope's agentless mode reads, so that its post-mortem is tested in
 * CI where real TFLM cannot be built; it lays out the arena by re-enacting the allocation steps
 * arenascope-plan predicts.
 *
 * The bodies: the stand-in's own code. SingleArenaBufferAllocator follows TFLM's rules as
 * planner/src/arena.cpp's replay() states them (persistent: aligned down from tail_, fails below
 * head_; temp: aligned up from temp_, fails past tail_; ResizeBuffer at the arena start; the
 * planner's arrays in GetAvailableMemory, "Too many buffers"), printing TFLM's messages.
 * AllocateTensors walks arenascope-plan's steps (standin_plan.h) in order, constructs TFLM's
 * objects where their steps land (placement new) and fills the pointers TFLM fills. At the
 * first step that does not fit it prints the message and returns kTfLiteError, rolling nothing
 * back, as TFLM does.
 */
#include "tflite_standin.h"

#include <stdarg.h>
#include <string.h>

#include "standin_new.h"

#include "standin_plan.h"

extern "C" void standin_uart_putc(char c);

namespace tflite {

namespace {

constexpr size_t kArenaAlignment = 16;  // micro_arena_constants.h MicroArenaBufferAlignment

uint8_t *AlignPointerUp(uint8_t *p, size_t a)
{
    return (uint8_t *)(((uintptr_t)p + a - 1) / a * a);
}
uint8_t *AlignPointerDown(uint8_t *p, size_t a)
{
    return (uint8_t *)((uintptr_t)p / a * a);
}

void put_unsigned(uint32_t v, unsigned base)
{
    char buf[12];
    int i = 0;
    do {
        buf[i++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (i) standin_uart_putc(buf[--i]);
}

// MicroBuiltinDataAllocator is local to micro_allocator.cc in TFLM, as here.
#if STANDIN_ONE_POINTER
using PersistentAllocator = SingleArenaBufferAllocator;  // SimpleMemoryAllocator, no interfaces
#else
using PersistentAllocator = IPersistentBufferAllocator;
#endif

class MicroBuiltinDataAllocator : public TfLiteBridgeBuiltinDataAllocator {
public:
    explicit MicroBuiltinDataAllocator(PersistentAllocator *persistent_allocator)
        : persistent_allocator_(persistent_allocator)
    {}
    void *Allocate(size_t size, size_t alignment_hint) override
    {
        return persistent_allocator_->AllocatePersistentBuffer(size, alignment_hint);
    }
    void Deallocate(void *) override {}

private:
    PersistentAllocator *persistent_allocator_;
};

const TfLiteIntArray kZeroLengthIntArray = {0, {}};

}  // namespace

void MicroPrintf(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    for (const char *f = format; *f; ++f) {
        if (*f != '%' || !f[1]) {
            standin_uart_putc(*f);
            continue;
        }
        ++f;
        if (*f == 'u')
            put_unsigned(va_arg(ap, unsigned), 10);
        else if (*f == 'x')
            put_unsigned(va_arg(ap, unsigned), 16);
        else if (*f == 'd') {
            int v = va_arg(ap, int);
            if (v < 0) standin_uart_putc('-'), v = -v;
            put_unsigned((uint32_t)v, 10);
        } else if (*f == 's') {
            for (const char *s = va_arg(ap, const char *); *s; ++s) standin_uart_putc(*s);
        } else
            standin_uart_putc(*f);
    }
    va_end(ap);
    standin_uart_putc('\n');  // TFLM's MicroPrintf ends each message with a newline
}

// The model's bytes start the flatbuffer; TFLM's GetModel returns its root table. The stand-in
// keeps model_ at the buffer itself plus the root offset, so that it points into the array.
static const uint8_t *g_model_base;
const Model *GetModel(const void *buf)
{
    g_model_base = static_cast<const uint8_t *>(buf);
    uint32_t root;
    memcpy(&root, buf, 4);
    return reinterpret_cast<const Model *>(g_model_base + root);
}

// ---- SingleArenaBufferAllocator (arena_allocator/single_arena_buffer_allocator.cc's rules) ----

SingleArenaBufferAllocator::SingleArenaBufferAllocator(uint8_t *buffer, size_t buffer_size)
    : buffer_head_(buffer), buffer_tail_(buffer + buffer_size), head_(buffer), tail_(buffer + buffer_size),
      temp_(buffer)
{}

SingleArenaBufferAllocator::~SingleArenaBufferAllocator() {}

SingleArenaBufferAllocator *SingleArenaBufferAllocator::Create(uint8_t *buffer_head, size_t buffer_size)
{
    SingleArenaBufferAllocator tmp(buffer_head, buffer_size);
    uint8_t *at = tmp.AllocatePersistentBuffer(sizeof(SingleArenaBufferAllocator), alignof(SingleArenaBufferAllocator));
    return at ? new (at) SingleArenaBufferAllocator(tmp) : nullptr;
}

uint8_t *SingleArenaBufferAllocator::AllocatePersistentBuffer(size_t size, size_t alignment)
{
    uint8_t *const aligned_result = AlignPointerDown(tail_ - size, alignment);
    if (aligned_result < head_) {
        const size_t missing_memory = head_ - aligned_result;
        MicroPrintf("Failed to allocate tail memory. Requested: %u, available %u, missing: %u", size,
                    size - missing_memory, missing_memory);
        return nullptr;
    }
    tail_ = aligned_result;
    return aligned_result;
}

// Whether `size` bytes fit from `from` up to tail_, signed as replay() states it; if not, prints
// TFLM's message for it (`what`: "allocate temp memory", "resize buffer").
bool SingleArenaBufferAllocator::FitsBelowTail(const uint8_t *from, size_t size, const char *what) const
{
    const ptrdiff_t available_memory = tail_ - from;
    if (available_memory >= 0 && (size_t)available_memory >= size) return true;
    const size_t available = available_memory < 0 ? 0 : (size_t)available_memory;
    MicroPrintf("Failed to %s. Requested: %u, available %u, missing: %u", what, size, available, size - available);
    return false;
}

uint8_t *SingleArenaBufferAllocator::AllocateTemp(size_t size, size_t alignment)
{
    uint8_t *const aligned_result = AlignPointerUp(temp_, alignment);
    if (!FitsBelowTail(aligned_result, size, "allocate temp memory")) return nullptr;
    temp_ = aligned_result + size;
    temp_buffer_ptr_check_sum_ ^= reinterpret_cast<intptr_t>(aligned_result);
    temp_buffer_count_++;
    return aligned_result;
}

void SingleArenaBufferAllocator::DeallocateTemp(uint8_t *temp_buf)
{
    temp_buffer_ptr_check_sum_ ^= reinterpret_cast<intptr_t>(temp_buf);
    temp_buffer_count_--;
}

bool SingleArenaBufferAllocator::IsAllTempDeallocated()
{
    return temp_buffer_count_ == 0 && temp_buffer_ptr_check_sum_ == 0;
}

TfLiteStatus SingleArenaBufferAllocator::ResetTempAllocations()
{
    // The stand-in's kernels do not keep their temporaries, so every temp is deallocated here
    // (TFLM's kernels call DeallocateTempTfLiteTensor before FinishPrepareNodeAllocations).
    temp_buffer_count_ = 0;
    temp_buffer_ptr_check_sum_ = 0;
    temp_ = head_;
    return kTfLiteOk;
}

uint8_t *SingleArenaBufferAllocator::AllocateResizableBuffer(size_t size, size_t alignment)
{
    uint8_t *const expect_resizable_buf = AlignPointerUp(buffer_head_, alignment);
    return ResizeBuffer(expect_resizable_buf, size, alignment) == kTfLiteOk ? expect_resizable_buf : nullptr;
}

TfLiteStatus SingleArenaBufferAllocator::ResizeBuffer(uint8_t *resizable_buf, size_t size, size_t alignment)
{
    uint8_t *const expect_resizable_buf = AlignPointerUp(buffer_head_, alignment);
    if (head_ != temp_ || resizable_buf != expect_resizable_buf) {
        MicroPrintf("Internal error: either buffer is not resizable or ResetTempAllocations() is not called before "
                    "ResizeBuffer().");
        return kTfLiteError;
    }
    uint8_t *const aligned_result = AlignPointerUp(buffer_head_, alignment);
    if (!FitsBelowTail(aligned_result, size, "resize buffer")) return kTfLiteError;
    head_ = aligned_result + size;
    temp_ = head_;
    return kTfLiteOk;
}

TfLiteStatus SingleArenaBufferAllocator::DeallocateResizableBuffer(uint8_t *resizable_buf)
{
    return ResizeBuffer(resizable_buf, 0, 1);
}

TfLiteStatus SingleArenaBufferAllocator::ReserveNonPersistentOverlayMemory(size_t size, size_t alignment)
{
    uint8_t *expect_resizable_buf = AlignPointerUp(buffer_head_, alignment);
    return ResizeBuffer(expect_resizable_buf, size, alignment);
}

uint8_t *SingleArenaBufferAllocator::GetOverlayMemoryAddress() const
{
    return buffer_head_;
}
size_t SingleArenaBufferAllocator::GetNonPersistentUsedBytes() const
{
    return (head_ > temp_ ? head_ : temp_) - buffer_head_;
}
size_t SingleArenaBufferAllocator::GetPersistentUsedBytes() const
{
    return buffer_tail_ - tail_;
}
size_t SingleArenaBufferAllocator::GetUsedBytes() const
{
    return GetPersistentUsedBytes() + GetNonPersistentUsedBytes();
}

size_t SingleArenaBufferAllocator::GetAvailableMemory(size_t alignment) const
{
    uint8_t *const aligned_temp = AlignPointerUp(temp_, alignment);
    uint8_t *const aligned_tail = AlignPointerDown(tail_, alignment);
    return aligned_tail - aligned_temp;  // size_t: wraps when tail_ is below temp_, as in TFLM
}

#if !STANDIN_ONE_POINTER
// ---- Two-arena mode's allocators (arena_allocator/persistent_arena_buffer_allocator.cc and
// non_persistent_arena_buffer_allocator.cc's rules, as planner/src/two_arena.cpp states them) ----

PersistentArenaBufferAllocator::PersistentArenaBufferAllocator(uint8_t *buffer, size_t buffer_size)
    : buffer_head_(buffer), buffer_tail_(buffer + buffer_size), tail_temp_(buffer_tail_)
{}

PersistentArenaBufferAllocator::~PersistentArenaBufferAllocator() {}

uint8_t *PersistentArenaBufferAllocator::AllocatePersistentBuffer(size_t size, size_t alignment)
{
    uint8_t *const aligned_result = AlignPointerDown(tail_temp_ - size, alignment);
    if (aligned_result < buffer_head_) {
        const size_t missing_memory = buffer_head_ - aligned_result;
        MicroPrintf("Failed to allocate tail memory. Requested: %u, available %u, missing: %u", size,
                    size - missing_memory, missing_memory);
        return nullptr;
    }
    tail_temp_ = aligned_result;
    return aligned_result;
}

size_t PersistentArenaBufferAllocator::GetPersistentUsedBytes() const
{
    return buffer_tail_ - tail_temp_;
}

NonPersistentArenaBufferAllocator::NonPersistentArenaBufferAllocator(uint8_t *buffer, size_t buffer_size)
    : buffer_head_(buffer), buffer_tail_(buffer + buffer_size), head_temp_(buffer), next_temp_(buffer)
{}

NonPersistentArenaBufferAllocator::~NonPersistentArenaBufferAllocator() {}

uint8_t *NonPersistentArenaBufferAllocator::AllocateTemp(size_t size, size_t alignment)
{
    uint8_t *const aligned_result = AlignPointerUp(next_temp_, alignment);
    const size_t available_memory = buffer_tail_ - aligned_result;
    if (available_memory < size) {
        MicroPrintf("Failed to allocate temp memory. Requested: %u, available %u, missing: %u", size, available_memory,
                    size - available_memory);
        return nullptr;
    }
    next_temp_ = aligned_result + size;
    temp_buffer_ptr_check_sum_ ^= reinterpret_cast<intptr_t>(aligned_result);
    temp_buffer_count_++;
    return aligned_result;
}

void NonPersistentArenaBufferAllocator::DeallocateTemp(uint8_t *temp_buf)
{
    temp_buffer_ptr_check_sum_ ^= reinterpret_cast<intptr_t>(temp_buf);
    temp_buffer_count_--;
}

bool NonPersistentArenaBufferAllocator::IsAllTempDeallocated()
{
    return temp_buffer_count_ == 0 && temp_buffer_ptr_check_sum_ == 0;
}

TfLiteStatus NonPersistentArenaBufferAllocator::ResetTempAllocations()
{
    temp_buffer_count_ = 0;  // the stand-in's kernels keep no temporaries (as SingleArenaBufferAllocator's above)
    temp_buffer_ptr_check_sum_ = 0;
    next_temp_ = head_temp_;
    return kTfLiteOk;
}

uint8_t *NonPersistentArenaBufferAllocator::AllocateResizableBuffer(size_t size, size_t alignment)
{
    uint8_t *expected_resizable_buf = AlignPointerUp(buffer_head_, alignment);
    if (resizable_buffer_allocated_) {
        MicroPrintf("Cannot allocate a new resizable buffer when one is already allocated");
        return nullptr;
    }
    if (ResizeBuffer(expected_resizable_buf, size, alignment) == kTfLiteOk) {
        resizable_buffer_allocated_ = true;
        return expected_resizable_buf;
    }
    return nullptr;
}

TfLiteStatus NonPersistentArenaBufferAllocator::ResizeBuffer(uint8_t *resizable_buf, size_t size, size_t alignment)
{
    uint8_t *expect_resizable_buf = AlignPointerUp(buffer_head_, alignment);
    if (resizable_buf != expect_resizable_buf) {
        MicroPrintf("Internal error: buffer is not resizable");
        return kTfLiteError;
    }
    if (head_temp_ != next_temp_) {
        MicroPrintf("ResetTempAllocations() is not called before ResizeBuffer().");
        return kTfLiteError;
    }
    const size_t available_memory = buffer_tail_ - expect_resizable_buf;
    if (available_memory < size) {
        MicroPrintf("Failed to resize buffer. Requested: %u, available %u, missing: %u", size, available_memory,
                    size - available_memory);
        return kTfLiteError;
    }
    head_temp_ = expect_resizable_buf + size;
    next_temp_ = head_temp_;
    return kTfLiteOk;
}

TfLiteStatus NonPersistentArenaBufferAllocator::DeallocateResizableBuffer(uint8_t *resizable_buf)
{
    TfLiteStatus status = ResizeBuffer(resizable_buf, 0, 1);
    if (status == kTfLiteOk) resizable_buffer_allocated_ = false;
    return status;
}

uint8_t *NonPersistentArenaBufferAllocator::GetOverlayMemoryAddress() const
{
    return buffer_head_;
}

TfLiteStatus NonPersistentArenaBufferAllocator::ReserveNonPersistentOverlayMemory(size_t size, size_t alignment)
{
    uint8_t *expect_resizable_buf = AlignPointerUp(buffer_head_, alignment);
    return ResizeBuffer(expect_resizable_buf, size, alignment);
}

size_t NonPersistentArenaBufferAllocator::GetNonPersistentUsedBytes() const
{
    return next_temp_ - buffer_head_;
}

size_t NonPersistentArenaBufferAllocator::GetAvailableMemory(size_t alignment) const
{
    uint8_t *const aligned_temp = AlignPointerUp(next_temp_, alignment);
    uint8_t *const aligned_tail = AlignPointerDown(buffer_tail_, alignment);
    return aligned_tail - aligned_temp;
}

#endif  // !STANDIN_ONE_POINTER

// ---- GreedyMemoryPlanner: Init and AddBuffer as TFLM's; the offsets are the planner's ----

GreedyMemoryPlanner::GreedyMemoryPlanner()
    : max_buffer_count_(0), buffer_count_(0), requirements_(nullptr), buffer_sizes_sorted_(nullptr),
      buffer_ids_sorted_(nullptr), buffers_sorted_by_offset_(nullptr), next_free_entry_(0), first_entry_index_(0),
      buffer_offsets_(nullptr), need_to_calculate_offsets_(true)
{}

GreedyMemoryPlanner::~GreedyMemoryPlanner() {}

int GreedyMemoryPlanner::per_buffer_size()
{
    return sizeof(BufferRequirements) + sizeof(int) + sizeof(int) + sizeof(ListEntry) + sizeof(int);
}

TfLiteStatus GreedyMemoryPlanner::Init(unsigned char *scratch_buffer, int scratch_buffer_size)
{
    buffer_count_ = 0;
    max_buffer_count_ = scratch_buffer_size / per_buffer_size();
    unsigned char *next_free = scratch_buffer;
    requirements_ = reinterpret_cast<BufferRequirements *>(next_free);
    next_free += sizeof(BufferRequirements) * max_buffer_count_;
    buffer_sizes_sorted_ = reinterpret_cast<int *>(next_free);
    next_free += sizeof(int) * max_buffer_count_;
    buffer_ids_sorted_ = reinterpret_cast<int *>(next_free);
    next_free += sizeof(int) * max_buffer_count_;
    buffers_sorted_by_offset_ = reinterpret_cast<ListEntry *>(next_free);
    next_free += sizeof(ListEntry) * max_buffer_count_;
    buffer_offsets_ = reinterpret_cast<int *>(next_free);
    need_to_calculate_offsets_ = true;
    return kTfLiteOk;
}

TfLiteStatus GreedyMemoryPlanner::AddBuffer(int size, int first_time_used, int last_time_used)
{
    if (buffer_count_ >= max_buffer_count_) {
        MicroPrintf("Too many buffers (max is %d)", max_buffer_count_);
        return kTfLiteError;
    }
    BufferRequirements *current = &requirements_[buffer_count_];
    current->size = size;
    current->offline_offset = -1;
    current->first_time_used = first_time_used;
    current->last_time_used = last_time_used;
    buffer_offsets_[buffer_count_] = -1;
    ++buffer_count_;
    need_to_calculate_offsets_ = true;
    return kTfLiteOk;
}

void GreedyMemoryPlanner::SetPlannedOffset(int buffer_index, int offset)
{
    buffer_offsets_[buffer_index] = offset;
    need_to_calculate_offsets_ = false;
}

size_t GreedyMemoryPlanner::GetMaximumMemorySize()
{
    return STANDIN_HEAD_BYTES;
}
int GreedyMemoryPlanner::GetBufferCount()
{
    return buffer_count_;
}
TfLiteStatus GreedyMemoryPlanner::GetOffsetForBuffer(int buffer_index, int *offset)
{
    if (buffer_index < 0 || buffer_index >= buffer_count_) return kTfLiteError;
    *offset = buffer_offsets_[buffer_index];
    return kTfLiteOk;
}

// ---- MicroAllocator ----

#if STANDIN_ONE_POINTER
// TFLM before 2022-04-05 (45022bbbe): one allocator for the head and the tail; the code below
// names it by the roles it had later.
#define non_persistent_buffer_allocator_ memory_allocator_
#define persistent_buffer_allocator_ memory_allocator_
MicroAllocator::MicroAllocator(SingleArenaBufferAllocator *memory_allocator, MicroMemoryPlanner *memory_planner)
    : memory_allocator_(memory_allocator), builtin_data_allocator_(nullptr), memory_planner_(memory_planner),
      model_is_allocating_(false)
{}
#else
MicroAllocator::MicroAllocator(SingleArenaBufferAllocator *memory_allocator, MicroMemoryPlanner *memory_planner)
    : non_persistent_buffer_allocator_(memory_allocator), persistent_buffer_allocator_(memory_allocator),
      builtin_data_allocator_(nullptr), memory_planner_(memory_planner), model_is_allocating_(false)
{}

MicroAllocator::MicroAllocator(IPersistentBufferAllocator *persistent_buffer_allocator,
                               INonPersistentBufferAllocator *non_persistent_buffer_allocator,
                               MicroMemoryPlanner *memory_planner)
    : non_persistent_buffer_allocator_(non_persistent_buffer_allocator),
      persistent_buffer_allocator_(persistent_buffer_allocator), builtin_data_allocator_(nullptr),
      memory_planner_(memory_planner), model_is_allocating_(false)
{}

#endif

MicroAllocator::~MicroAllocator() {}

#if !STANDIN_ONE_POINTER
// MicroAllocator::Create(persistent, size, non_persistent, size): the PersistentArenaBufferAllocator
// at the top of the persistent buffer (its end aligned down to 16), the
// NonPersistentArenaBufferAllocator in the persistent buffer (the non-persistent buffer's start
// aligned up to 16), then the GreedyMemoryPlanner and the MicroAllocator, both persistent.
MicroAllocator *MicroAllocator::Create(uint8_t *persistent_tensor_arena, size_t persistent_arena_size,
                                       uint8_t *non_persistent_tensor_arena, size_t non_persistent_arena_size)
{
    uint8_t *aligned_tail = AlignPointerDown(persistent_tensor_arena + persistent_arena_size, kArenaAlignment);
    PersistentArenaBufferAllocator tmp(persistent_tensor_arena, aligned_tail - persistent_tensor_arena);
    uint8_t *at =
        tmp.AllocatePersistentBuffer(sizeof(PersistentArenaBufferAllocator), alignof(PersistentArenaBufferAllocator));
    if (!at) return nullptr;
    PersistentArenaBufferAllocator *persistent = new (at) PersistentArenaBufferAllocator(tmp);
    at = persistent->AllocatePersistentBuffer(sizeof(NonPersistentArenaBufferAllocator),
                                              alignof(NonPersistentArenaBufferAllocator));
    if (!at) return nullptr;
    uint8_t *aligned_head = AlignPointerUp(non_persistent_tensor_arena, kArenaAlignment);
    NonPersistentArenaBufferAllocator *non_persistent = new (at) NonPersistentArenaBufferAllocator(
        aligned_head, non_persistent_tensor_arena + non_persistent_arena_size - aligned_head);
    at = persistent->AllocatePersistentBuffer(sizeof(GreedyMemoryPlanner), alignof(GreedyMemoryPlanner));
    if (!at) return nullptr;
    GreedyMemoryPlanner *planner = new (at) GreedyMemoryPlanner();
    at = persistent->AllocatePersistentBuffer(sizeof(MicroAllocator), alignof(MicroAllocator));
    return at ? new (at) MicroAllocator(persistent, non_persistent, planner) : nullptr;
}
#endif

// MicroAllocator::Create(arena, size): the arena's start aligned up to 16 (not its end), then
// SingleArenaBufferAllocator::Create, the GreedyMemoryPlanner and the MicroAllocator, each in the
// tail: the constructor's three steps (standin_steps[0..2]).
MicroAllocator *MicroAllocator::Create(uint8_t *tensor_arena, size_t arena_size)
{
    uint8_t *aligned_arena = AlignPointerUp(tensor_arena, kArenaAlignment);
    size_t aligned_arena_size = tensor_arena + arena_size - aligned_arena;
    SingleArenaBufferAllocator *memory_allocator =
        SingleArenaBufferAllocator::Create(aligned_arena, aligned_arena_size);
    if (!memory_allocator) return nullptr;
    uint8_t *memory_planner_buffer =
        memory_allocator->AllocatePersistentBuffer(sizeof(GreedyMemoryPlanner), alignof(GreedyMemoryPlanner));
    if (!memory_planner_buffer) return nullptr;
    GreedyMemoryPlanner *memory_planner = new (memory_planner_buffer) GreedyMemoryPlanner();
    return Create(memory_allocator, memory_planner);
}

MicroAllocator *MicroAllocator::Create(SingleArenaBufferAllocator *memory_allocator, MicroMemoryPlanner *memory_planner)
{
    uint8_t *allocator_buffer =
        memory_allocator->AllocatePersistentBuffer(sizeof(MicroAllocator), alignof(MicroAllocator));
    return allocator_buffer ? new (allocator_buffer) MicroAllocator(memory_allocator, memory_planner) : nullptr;
}

size_t MicroAllocator::used_bytes() const
{
    return non_persistent_buffer_allocator_->GetNonPersistentUsedBytes() +
           persistent_buffer_allocator_->GetPersistentUsedBytes();
}

void *MicroAllocator::AllocatePersistentBuffer(size_t bytes)
{
    return persistent_buffer_allocator_->AllocatePersistentBuffer(bytes, kArenaAlignment);
}

TfLiteStatus MicroAllocator::AllocateVariables(TfLiteEvalTensor *eval_tensors, int index, uint8_t *at)
{
    eval_tensors[index].data.data = at;
    return kTfLiteOk;
}

SubgraphAllocations *MicroAllocator::StartModelAllocation(const Model *)
{
    if (model_is_allocating_) {
        MicroPrintf("MicroAllocator: Model allocation started before finishing previously allocated model");
        return nullptr;
    }
    model_is_allocating_ = true;
    return reinterpret_cast<SubgraphAllocations *>(1);  // the steps follow (StandinAllocate)
}

// What StandinAllocate tracks between steps: the interpreter it allocates for, the phase of
// AllocateTensors it is in, what it has built so far.
struct MicroAllocator::StandinCursor {
    MicroInterpreter &in;
    int phase = 1;  // the constructor's phase (0) has run
    SubgraphAllocations *subgraphs = nullptr;
    int node_filled[STANDIN_SUBGRAPH_COUNT] = {};  // nodes filled by the Parse pass so far
    TfLiteTensor *last_tensor = nullptr;           // for its quantization steps
    TfLiteAffineQuantization *last_quant = nullptr;
    int last_tensor_index = -1;
    int io_next = 0;
};

namespace {

void fill_eval_tensors(TfLiteEvalTensor *tensors, const standin_subgraph_t &sg)
{
    for (int t = 0; t < sg.tensor_count; ++t) {
        const standin_tensor_t &f = sg.tensors[t];
        TfLiteEvalTensor &e = tensors[t];
        e.data.data = f.placement == 1 && f.data >= 0 ? const_cast<uint8_t *>(g_model_base + f.data) : nullptr;
        e.dims = f.shape >= 0 ? reinterpret_cast<TfLiteIntArray *>(const_cast<uint8_t *>(g_model_base + f.shape))
                              : const_cast<TfLiteIntArray *>(&kZeroLengthIntArray);
        e.type = static_cast<TfLiteType>(f.type);
    }
}

void fill_io_tensor(TfLiteTensor *tensor, const TfLiteEvalTensor *eval, const standin_tensor_t &f)
{
    memset(tensor, 0, sizeof(*tensor));
    tensor->type = static_cast<TfLiteType>(f.type);
    tensor->is_variable = f.is_variable;
    tensor->allocation_type = f.placement == 1 ? kTfLiteMmapRo : kTfLiteArenaRw;
    tensor->bytes = f.bytes;
    if (eval) {
        tensor->data.data = eval->data.data;
        tensor->dims = eval->dims;
    }
    tensor->quantization.type = kTfLiteNoQuantization;
}

}  // namespace

}  // namespace tflite

// TFLM's TFLITE_ABORT with TF_LITE_MCU_DEBUG_LOG (tensorflow/lite/kernels/op_macros.h): prints
// "HALTED" and loops forever. A global function, as TFLM's inline one is.
__attribute__((noinline)) void AbortImpl()
{
    tflite::MicroPrintf("HALTED");
    while (1) {
    }
}

// How a failed step ends (README.md, "Scenarios"): 0 returns kTfLiteError (TFLM's status path);
// 1 aborts (TFLITE_ABORT: a failed TFLITE_DCHECK or TF_LITE_FATAL); 2 crashes, the code going on
// with the null pointer the failed request returned and reading 16 B before it (0xfffffff0: a
// precise BusFault on QEMU mps2-an386), as real TFLM does at some sizes (TOOLCHAIN-NOTES.md).
volatile uint32_t standin_on_failure = 0;
volatile uint32_t standin_sink_word;

namespace tflite {

__attribute__((noinline)) static uint32_t standin_follow_null(const uint8_t *p)
{
    return *reinterpret_cast<const volatile uint32_t *>(reinterpret_cast<uintptr_t>(p) - 16u);
}

// TFLM's actions between the phases of AllocateTensors, for phases [c.phase, to).
void MicroAllocator::StandinAdvance(StandinCursor &c, int to)
{
    MicroInterpreter &in = c.in;
    for (; c.phase < to; ++c.phase) {
        switch (c.phase) {
        case 1:  // StartModelAllocation returned: graph_.SetSubgraphAllocations(allocations)
            in.graph_.SetSubgraphAllocations(c.subgraphs);
            break;
        case 2:  // PrepareNodeAndRegistrationDataFromFlatbuffer done: every node filled
            for (int s = 0; s < (int)STANDIN_SUBGRAPH_COUNT; ++s)
                for (int i = c.node_filled[s]; i < standin_subgraphs[s].operator_count; ++i) {
                    NodeAndRegistration &n = c.subgraphs[s].node_and_registrations[i];
                    const standin_operator_t &op = standin_subgraphs[s].operators[i];
                    n.node.inputs = (TfLiteIntArray *)(g_model_base + op.inputs);
                    n.node.outputs = (TfLiteIntArray *)(g_model_base + op.outputs);
                    n.registration = in.op_resolver_.FindOp(op.builtin_code);
                    c.node_filled[s] = i + 1;
                }
            in.micro_context_.SetInterpreterState(MicroInterpreterContext::InterpreterState::kInit);
            break;
        case 3: in.micro_context_.SetInterpreterState(MicroInterpreterContext::InterpreterState::kPrepare); break;
        case 4:
            in.micro_context_.SetInterpreterState(MicroInterpreterContext::InterpreterState::kMemoryPlanning);
            break;
        case 5:  // FinishModelAllocation returned
            model_is_allocating_ = false;
            in.micro_context_.SetScratchBufferHandles(in.scratch_buffer_handles_);
            break;
        case 6:  // the io tensors done: Reset(), then tensors_allocated_
            in.tensors_allocated_ = true;
            in.micro_context_.SetInterpreterState(MicroInterpreterContext::InterpreterState::kInvoke);
            break;
        }
    }
}

// How step s fails (standin_on_failure): TFLM's message and kTfLiteError, an abort, or a crash.
TfLiteStatus MicroAllocator::StandinFailed(const StandinCursor &c, const standin_step_t &s)
{
    if (standin_on_failure == 1) AbortImpl();
    if (standin_on_failure == 2) standin_sink_word = standin_follow_null(nullptr);
    if (s.phase == 1) {  // StartModelAllocation returned nullptr
        MicroPrintf("Failed starting model allocation.\n");
        c.in.initialization_status_ = kTfLiteError;
    } else if (s.role == STANDIN_ROLE_INPUT_ARRAY || s.role == STANDIN_ROLE_OUTPUT_ARRAY) {
        MicroPrintf("Failed to allocate memory for context->%s_tensors_, %d bytes required",
                    s.role == STANDIN_ROLE_INPUT_ARRAY ? "input" : "output", s.bytes);
    } else if (s.role == STANDIN_ROLE_INPUT_TENSOR || s.role == STANDIN_ROLE_OUTPUT_TENSOR) {
        MicroPrintf("Failed to initialize %s tensor %d", s.role == STANDIN_ROLE_INPUT_TENSOR ? "input" : "output",
                    c.io_next);
    }
    return kTfLiteError;
}

// A persistent step (kind 0) of the main subgraph's io tensors, at p: the input or output array, a
// tensor in it, its quantization, its zero points.
void MicroAllocator::StandinPlaceIo(StandinCursor &c, const standin_step_t &s, uint8_t *p)
{
    MicroInterpreter &in = c.in;
    const standin_subgraph_t &main_sg = standin_subgraphs[0];
    switch (s.role) {
    case STANDIN_ROLE_INPUT_ARRAY:
    case STANDIN_ROLE_OUTPUT_ARRAY:
        memset(p, 0, s.bytes);
        (s.role == STANDIN_ROLE_INPUT_ARRAY ? in.input_tensors_ : in.output_tensors_) =
            reinterpret_cast<TfLiteTensor **>(p);
        c.io_next = 0;
        break;
    case STANDIN_ROLE_INPUT_TENSOR:
    case STANDIN_ROLE_OUTPUT_TENSOR: {
        const bool input = s.role == STANDIN_ROLE_INPUT_TENSOR;
        const int t = (input ? main_sg.inputs : main_sg.outputs)[c.io_next];
        TfLiteTensor *tensor = reinterpret_cast<TfLiteTensor *>(p);
        fill_io_tensor(tensor, c.subgraphs ? &c.subgraphs[0].tensors[t] : nullptr, main_sg.tensors[t]);
        (input ? in.input_tensors_ : in.output_tensors_)[c.io_next++] = tensor;
        c.last_tensor = tensor;
        c.last_tensor_index = t;
        break;
    }
    case STANDIN_ROLE_QUANTIZATION: {
        const standin_tensor_t &f = main_sg.tensors[c.last_tensor_index];
        c.last_quant = reinterpret_cast<TfLiteAffineQuantization *>(p);
        c.last_quant->scale = f.scale >= 0 ? (TfLiteFloatArray *)(g_model_base + f.scale) : nullptr;
        c.last_quant->zero_point = nullptr;
        c.last_quant->quantized_dimension = f.quantized_dimension;
        c.last_tensor->quantization.type = kTfLiteAffineQuantization;
        c.last_tensor->quantization.params = c.last_quant;
        if (c.last_quant->scale && c.last_quant->scale->size > 0)
            c.last_tensor->params.scale = c.last_quant->scale->data[0];
        break;
    }
    case STANDIN_ROLE_ZERO_POINTS: {
        const standin_tensor_t &f = main_sg.tensors[c.last_tensor_index];
        TfLiteIntArray *zp = reinterpret_cast<TfLiteIntArray *>(p);
        zp->size = f.zero_points;
        for (int k = 0; k < f.zero_points; ++k) {
            int64_t v = 0;
            if (f.zero_point_data >= 0) memcpy(&v, g_model_base + f.zero_point_data + 8 * k, 8);
            zp->data[k] = (int)v;
        }
        if (c.last_quant) c.last_quant->zero_point = zp;
        if (f.zero_points > 0) c.last_tensor->params.zero_point = zp->data[0];
        break;
    }
    default: break;
    }
}

// A persistent step (kind 0): its buffer from the tail (a builtin's data from the builtin data
// allocator), then what TFLM builds in it.
TfLiteStatus MicroAllocator::StandinPersistentStep(StandinCursor &c, const standin_step_t &s)
{
    MicroInterpreter &in = c.in;
    uint8_t *p = s.role == STANDIN_ROLE_BUILTIN_DATA
                     ? static_cast<uint8_t *>(builtin_data_allocator_->Allocate(s.bytes, s.align))
                     : persistent_buffer_allocator_->AllocatePersistentBuffer(s.bytes, s.align);
    if (!p) return StandinFailed(c, s);
    switch (s.role) {
    case STANDIN_ROLE_BUILTIN_ALLOCATOR:
        builtin_data_allocator_ = new (p) MicroBuiltinDataAllocator(persistent_buffer_allocator_);
        break;
    case STANDIN_ROLE_SUBGRAPH_ALLOCATIONS: c.subgraphs = new (p) SubgraphAllocations[STANDIN_SUBGRAPH_COUNT](); break;
    case STANDIN_ROLE_EVAL_TENSORS:
        c.subgraphs[s.subgraph].tensors = new (p) TfLiteEvalTensor[s.count]();
        fill_eval_tensors(c.subgraphs[s.subgraph].tensors, standin_subgraphs[s.subgraph]);
        break;
    case STANDIN_ROLE_NODES:
        c.subgraphs[s.subgraph].node_and_registrations = new (p) NodeAndRegistration[s.count]();
        break;
    case STANDIN_ROLE_BUILTIN_DATA: {
        memset(p, 0, s.bytes);
        // PrepareNodeAndRegistrationDataFromFlatbuffer: operator by operator.
        const standin_subgraph_t &sg = standin_subgraphs[s.subgraph];
        for (int k = c.node_filled[s.subgraph]; k <= s.op; ++k) {
            NodeAndRegistration &n = c.subgraphs[s.subgraph].node_and_registrations[k];
            n.node.inputs = (TfLiteIntArray *)(g_model_base + sg.operators[k].inputs);
            n.node.outputs = (TfLiteIntArray *)(g_model_base + sg.operators[k].outputs);
            n.registration = in.op_resolver_.FindOp(sg.operators[k].builtin_code);
        }
        c.node_filled[s.subgraph] = s.op + 1;
        c.subgraphs[s.subgraph].node_and_registrations[s.op].node.builtin_data = p;
        break;
    }
    case STANDIN_ROLE_USER_DATA:
        memset(p, 0, s.bytes);
        c.subgraphs[s.subgraph].node_and_registrations[s.op].node.user_data = p;
        break;
    case STANDIN_ROLE_SCRATCH_HANDLES: in.scratch_buffer_handles_ = new (p) ScratchBufferHandle[s.count](); break;
    case STANDIN_ROLE_VARIABLE:
        memset(p, 0, s.bytes);
        AllocateVariables(c.subgraphs[s.subgraph].tensors, s.tensor, p);
        break;
    case STANDIN_ROLE_INPUT_ARRAY:
    case STANDIN_ROLE_OUTPUT_ARRAY:
    case STANDIN_ROLE_INPUT_TENSOR:
    case STANDIN_ROLE_OUTPUT_TENSOR:
    case STANDIN_ROLE_QUANTIZATION:
    case STANDIN_ROLE_ZERO_POINTS: StandinPlaceIo(c, s, p); break;
    default: break;  // KERNEL_BUFFER: the kernel's own data, no pointer TFLM's walk follows
    }
    return kTfLiteOk;
}

// A step on the head (kinds 3 to 5): the resizable buffer, the planner's arrays in the free
// space, the head reserved and the plan committed in it.
TfLiteStatus MicroAllocator::StandinHeadStep(StandinCursor &c, const standin_step_t &s)
{
    // The head and temporaries: the one arena's allocator, or two-arena mode's non-persistent one.
    auto *arena = non_persistent_buffer_allocator_;
    switch (s.kind) {
    case STANDIN_STEP_3_RESIZE_HEAD: {
        TfLiteStatus ok;
        if (s.phase == 1) {  // InitScratchBufferData: AllocateResizableBuffer
            scratch_buffer_request_count_ = 0;
            scratch_buffer_head_ = arena->AllocateResizableBuffer(s.bytes, s.align);
            ok = scratch_buffer_head_ ? kTfLiteOk : kTfLiteError;
        } else if (s.bytes == 0) {  // CommitStaticMemoryPlan: DeallocateResizableBuffer
            ok = arena->DeallocateResizableBuffer(scratch_buffer_head_);
        } else {  // FinishPrepareNodeAllocations: ResizeBuffer (its status is ignored)
            ok = arena->ResizeBuffer(scratch_buffer_head_, s.bytes, s.align);
        }
        if (ok != kTfLiteOk && s.fatal) return StandinFailed(c, s);
        break;
    }
    case STANDIN_STEP_4_PLANNER_ARRAYS: {
        // CommitStaticMemoryPlan: the free space as one temp, the planner's arrays in it.
        GreedyMemoryPlanner *planner = static_cast<GreedyMemoryPlanner *>(memory_planner_);
        size_t remaining = arena->GetAvailableMemory(kArenaAlignment);
        uint8_t *planner_arena = arena->AllocateTemp(remaining, kArenaAlignment);
        if (!planner_arena) return StandinFailed(c, s);
        planner->Init(planner_arena, (int)remaining);
        for (int b = 0; b < s.count && b < (int)STANDIN_BUFFER_COUNT; ++b) {
            const standin_buffer_t &buf = standin_buffers[b];
            if (planner->AddBuffer(buf.size, buf.first, buf.last) != kTfLiteOk) return StandinFailed(c, s);
        }
        for (int b = 0; b < s.count && b < (int)STANDIN_BUFFER_COUNT; ++b)
            planner->SetPlannedOffset(b, standin_buffers[b].offset);
        break;
    }
    case STANDIN_STEP_5_RESERVE_HEAD: {
        if (arena->ReserveNonPersistentOverlayMemory(s.bytes, s.align) != kTfLiteOk) return StandinFailed(c, s);
        if ((size_t)s.bytes > max_head_buffer_usage_) max_head_buffer_usage_ = s.bytes;
        // CommitPlan: every planned tensor and scratch buffer at its offset in the head.
        uint8_t *head = arena->GetOverlayMemoryAddress();
        for (unsigned b = 0; b < STANDIN_BUFFER_COUNT; ++b) {
            const standin_buffer_t &buf = standin_buffers[b];
            if (buf.tensor >= 0)
                c.subgraphs[buf.subgraph].tensors[buf.tensor].data.data = head + buf.offset;
            else if (c.in.scratch_buffer_handles_)
                c.in.scratch_buffer_handles_[buf.scratch].data = head + buf.offset;
        }
        scratch_buffer_request_count_ = 0;
        for (unsigned b = 0; b < STANDIN_BUFFER_COUNT; ++b)
            scratch_buffer_request_count_ += standin_buffers[b].tensor < 0;
        break;
    }
    }
    return kTfLiteOk;
}

// MicroInterpreter::AllocateTensors re-enacted from the planner's steps (see the file comment).
TfLiteStatus MicroAllocator::StandinAllocate(MicroInterpreter &in)
{
    // The head and temporaries: the one arena's allocator, or two-arena mode's non-persistent one.
    auto *arena = non_persistent_buffer_allocator_;
    StandinCursor c{in};
    for (unsigned i = 3; i < STANDIN_STEP_COUNT; ++i) {
        const standin_step_t &s = standin_steps[i];
        if (s.phase > c.phase) StandinAdvance(c, s.phase);
        switch (s.kind) {
        case STANDIN_STEP_0_PERSISTENT:
            if (StandinPersistentStep(c, s) != kTfLiteOk) return kTfLiteError;
            break;
        case STANDIN_STEP_1_TEMP:
            if (!arena->AllocateTemp(s.bytes, s.align)) return StandinFailed(c, s);
            break;
        case STANDIN_STEP_2_RESET_TEMP: arena->ResetTempAllocations(); break;
        case STANDIN_STEP_3_RESIZE_HEAD:
        case STANDIN_STEP_4_PLANNER_ARRAYS:
        case STANDIN_STEP_5_RESERVE_HEAD:
            if (StandinHeadStep(c, s) != kTfLiteOk) return kTfLiteError;
            break;
        }
    }
    StandinAdvance(c, 7);
    return kTfLiteOk;
}

// ---- MicroInterpreterGraph, MicroInterpreterContext ----

MicroInterpreterGraph::MicroInterpreterGraph(TfLiteContext *context, const Model *model, MicroAllocator *allocator,
                                             MicroResourceVariables *resource_variables)
    : context_(context), model_(model), allocator_(allocator), current_subgraph_index_(0), current_operator_index_(0),
      resource_variables_(resource_variables), subgraphs_(nullptr)
{}

MicroInterpreterGraph::~MicroInterpreterGraph() {}

int MicroInterpreterGraph::NumSubgraphs()
{
    return STANDIN_SUBGRAPH_COUNT;
}

// MicroInterpreterGraph::InvokeSubgraph: each node's registration->invoke, through TFLM's pointers.
TfLiteStatus MicroInterpreterGraph::InvokeSubgraph(int subgraph_idx)
{
    int previous_subgraph_idx = current_subgraph_index_;
    current_subgraph_index_ = subgraph_idx;
    if (static_cast<size_t>(subgraph_idx) >= STANDIN_SUBGRAPH_COUNT) {
        MicroPrintf("Accessing subgraph %d but only %d subgraphs found", subgraph_idx, STANDIN_SUBGRAPH_COUNT);
        return kTfLiteError;
    }
    const uint32_t operators_size = standin_subgraphs[subgraph_idx].operator_count;
    for (current_operator_index_ = 0; current_operator_index_ < operators_size; ++current_operator_index_) {
        TfLiteNode *node = &(subgraph_allocations_[subgraph_idx].node_and_registrations[current_operator_index_].node);
        const TFLMRegistration *registration =
            subgraph_allocations_[subgraph_idx].node_and_registrations[current_operator_index_].registration;
        TfLiteStatus invoke_status = registration->invoke(context_, node);
        if (invoke_status != kTfLiteOk) {
            MicroPrintf("Node (number %d) failed to invoke with status %d", current_operator_index_, invoke_status);
            return kTfLiteError;
        }
    }
    current_subgraph_index_ = previous_subgraph_idx;
    return kTfLiteOk;
}

MicroInterpreterContext::MicroInterpreterContext(MicroAllocator *allocator, const Model *model,
                                                 MicroInterpreterGraph *graph)
    : allocator_(*allocator), graph_(*graph), model_(model), state_(InterpreterState::kInit)
{}

MicroInterpreterContext::~MicroInterpreterContext() {}

void *MicroInterpreterContext::AllocatePersistentBuffer(size_t bytes)
{
    return allocator_.AllocatePersistentBuffer(bytes);
}

TfLiteEvalTensor *MicroInterpreterContext::GetEvalTensor(int tensor_idx)
{
    return &graph_.GetAllocations()[graph_.GetCurrentSubgraphIndex()].tensors[tensor_idx];
}

void *MicroInterpreterContext::GetScratchBuffer(int buffer_idx)
{
    return scratch_buffer_handles_ ? scratch_buffer_handles_[buffer_idx].data : nullptr;
}

namespace {
TfLiteEvalTensor *ContextGetEvalTensor(const TfLiteContext *context, int tensor_idx)
{
    return static_cast<MicroInterpreterContext *>(context->impl_)->GetEvalTensor(tensor_idx);
}
void *ContextGetScratchBuffer(TfLiteContext *context, int buffer_idx)
{
    return static_cast<MicroInterpreterContext *>(context->impl_)->GetScratchBuffer(buffer_idx);
}
void *ContextAllocatePersistentBuffer(TfLiteContext *context, size_t bytes)
{
    return static_cast<MicroInterpreterContext *>(context->impl_)->AllocatePersistentBuffer(bytes);
}
}  // namespace

// ---- MicroInterpreter ----

MicroInterpreter::MicroInterpreter(const Model *model, const MicroOpResolver &op_resolver, uint8_t *tensor_arena,
                                   size_t tensor_arena_size)
    : model_(model), op_resolver_(op_resolver), allocator_(*MicroAllocator::Create(tensor_arena, tensor_arena_size)),
      graph_(&context_, model, &allocator_, nullptr), tensors_allocated_(false), initialization_status_(kTfLiteError),
      input_tensors_(nullptr), output_tensors_(nullptr), micro_context_(&allocator_, model_, &graph_)
{
    Init();
}

MicroInterpreter::MicroInterpreter(const Model *model, const MicroOpResolver &op_resolver, MicroAllocator *allocator)
    : model_(model), op_resolver_(op_resolver), allocator_(*allocator), graph_(&context_, model, allocator, nullptr),
      tensors_allocated_(false), initialization_status_(kTfLiteError), input_tensors_(nullptr),
      output_tensors_(nullptr), micro_context_(allocator, model_, &graph_)
{
    Init();
}

MicroInterpreter::~MicroInterpreter() {}

void MicroInterpreter::Init()
{
    context_.impl_ = static_cast<void *>(&micro_context_);
    context_.AllocatePersistentBuffer = ContextAllocatePersistentBuffer;
    context_.GetScratchBuffer = ContextGetScratchBuffer;
    context_.GetEvalTensor = ContextGetEvalTensor;
    context_.tensors_size = standin_subgraphs[0].tensor_count;
    initialization_status_ = kTfLiteOk;
}

TfLiteStatus MicroInterpreter::AllocateTensors()
{
    SubgraphAllocations *allocations = allocator_.StartModelAllocation(model_);
    if (allocations == nullptr) {
        MicroPrintf("Failed starting model allocation.\n");
        initialization_status_ = kTfLiteError;
        return kTfLiteError;
    }
    const TfLiteStatus status = allocator_.StandinAllocate(*this);
    // TFLM's AllocateTensors goes on after the allocator returns (micro_interpreter.cc), so it is
    // on the stack while the allocator runs: no tail call here either.
    asm volatile("" ::: "memory");
    return status;
}

TfLiteStatus MicroInterpreter::Invoke()
{
    if (initialization_status_ != kTfLiteOk) {
        MicroPrintf("Invoke() called after initialization failed\n");
        return kTfLiteError;
    }
    // Ensure tensors are allocated before the interpreter is invoked (as TFLM does).
    if (!tensors_allocated_) {
        TfLiteStatus status = AllocateTensors();
        if (status != kTfLiteOk) return status;
    }
    return graph_.InvokeSubgraph(0);
}

}  // namespace tflite

// Sizes the planner sizes the tail with (arenascope-plan --target cortex-m --tflm ERA, or --target
// riscv32 for the RV32 build; TFLM-INTERNALS.md; sizeof of real TFLM of each era and on RV32:
// docs/integrating-tflm.md). On RV32 only TfLiteTensor differs: its three enums are 4 bytes there.
#if defined(__arm__) || defined(__riscv)
#if STANDIN_ERA <= 202203
static_assert(sizeof(tflite::MicroAllocator) == 36, "MicroAllocator");  // 5b3670d82
static_assert(sizeof(tflite::SingleArenaBufferAllocator) == 36, "SimpleMemoryAllocator");
#elif STANDIN_ERA <= 202209
static_assert(sizeof(tflite::MicroAllocator) == 40, "MicroAllocator");  // 547f8aeab, 59b39f6cb
static_assert(sizeof(tflite::SingleArenaBufferAllocator) == 40, "SimpleMemoryAllocator or SingleArenaBufferAllocator");
#else
static_assert(sizeof(tflite::MicroAllocator) == 36, "MicroAllocator");
static_assert(sizeof(tflite::SingleArenaBufferAllocator) == 36, "SingleArenaBufferAllocator");
#endif
#if !STANDIN_ONE_POINTER
static_assert(sizeof(tflite::PersistentArenaBufferAllocator) == 16, "PersistentArenaBufferAllocator");
static_assert(sizeof(tflite::NonPersistentArenaBufferAllocator) == 32, "NonPersistentArenaBufferAllocator");
#endif
static_assert(sizeof(tflite::GreedyMemoryPlanner) == 44, "GreedyMemoryPlanner");
static_assert(sizeof(TfLiteEvalTensor) == 12, "TfLiteEvalTensor");
static_assert(sizeof(tflite::NodeAndRegistration) == 32, "NodeAndRegistration");
#if defined(__riscv)
static_assert(sizeof(TfLiteTensor) == 40, "TfLiteTensor (4-byte enums)");
#else
static_assert(sizeof(TfLiteTensor) == 32, "TfLiteTensor");
#endif
static_assert(sizeof(tflite::SubgraphAllocations) == 8, "SubgraphAllocations");
static_assert(sizeof(tflite::ScratchBufferHandle) == 4, "ScratchBufferHandle");
static_assert(sizeof(tflite::internal::ScratchBufferRequest) == 12, "ScratchBufferRequest");
static_assert(sizeof(TfLiteAffineQuantization) == 12, "TfLiteAffineQuantization");
#endif
