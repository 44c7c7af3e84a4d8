// Sizes of TFLM's types per ABI (see abi.h). Layouts, from TFLM 90b983c2's definitions (the
// allocator objects' sizes per TFLM revision are revisions.cpp's):
//   TfLiteEvalTensor {TfLitePtrUnion data; TfLiteIntArray* dims; TfLiteType type}        (common.h)
//   TfLiteNode {inputs, outputs, intermediates, user_data, builtin_data, custom_initial_data
//     pointers; int custom_initial_data_size} + NodeAndRegistration's TFLMRegistration*
//                                                           (common.h, micro_allocator.h)
//   TfLiteTensor (TF_LITE_STATIC_MEMORY) {TfLiteType; TfLitePtrUnion data; TfLiteIntArray* dims;
//     TfLiteQuantizationParams {float; int32}; TfLiteAllocationType; size_t bytes; bool
//     is_variable; TfLiteQuantization {TfLiteQuantizationType; void*}; ...}          (common.h)
//   TfLiteAffineQuantization {TfLiteFloatArray* scale; TfLiteIntArray* zero_point; int32}
//   SubgraphAllocations {NodeAndRegistration*; TfLiteEvalTensor*}       (micro_allocator.h)
//   ScratchBufferHandle {uint8_t* data}; internal::ScratchBufferRequest {size_t bytes; int
//     node_idx; int subgraph_idx}                                       (micro_allocator.h)
//   AllocationInfo {size_t bytes; void** output_ptr; int first_created; int last_used;
//     int32_t offline_offset; bool needs_allocating}              (micro_allocation_info.h)
//   SingleArenaBufferAllocator: two interface vtable pointers, buffer_head_, buffer_tail_,
//     head_, tail_, temp_, int temp_buffer_count_, intptr_t temp_buffer_ptr_check_sum_
//                                 (arena_allocator/single_arena_buffer_allocator.h)
//   GreedyMemoryPlanner: vtable, 5 array pointers, int max_buffer_count_, buffer_count_,
//     bool need_to_calculate_offsets_          (memory_planner/greedy_memory_planner.h)
//   MicroAllocator: vtable, 3 object pointers, builtin_data_allocator_, bool model_is_allocating_,
//     size_t max_head_buffer_usage_, scratch_buffer_request_count_, uint8_t* scratch_buffer_head_
//                                                                       (micro_allocator.h)
//   MicroBuiltinDataAllocator: vtable + IPersistentBufferAllocator* (micro_allocator.cc)
// The figures below were checked by compiling sizeof/alignof probes against those headers with
// arm-none-eabi-g++ -mcpu=cortex-m4, riscv64-unknown-elf-g++ -march=rv32imac -mabi=ilp32 and x86-64
// g++ (-DTF_LITE_STATIC_MEMORY), for TFLM 90b983c2 and the four older revisions (revisions.cpp):
// docs/integrating-tflm.md "RISC-V and Xtensa: the arena's ABI" has the table. On rv32 only the
// types holding an enum differ from Arm's: TfLiteTensor (40 B: TfLiteType, TfLiteAllocationType
// and TfLiteQuantizationType are 4 bytes) and the builtin params structs, which hold no pointer
// and so are the host's sizes; every OpData and allocator object is Arm's.
#include "arenascope/planner/abi.h"

#include <stdexcept>

namespace arenascope::planner {

Abi abi_named(const std::string &name)
{
    return abi_named(name, default_tflm_revision());
}

Abi abi_named(const std::string &name, const TflmRevision &tflm)
{
    Abi a;
    a.tflm = &tflm;
    a.name = name;
    if (name == "cortex-m" || name == "riscv32" || name == "xtensa") {
        // ILP32. cortex-m: arm-none-eabi's 1-byte enums. riscv32 and xtensa: 4-byte enums (RISC-V's
        // psABI: riscv64-unknown-elf-gcc, ESP-IDF's riscv32-esp-elf-gcc; xtensa-esp32-elf-gcc has no
        // -fshort-enums either), which only TfLiteTensor among these types holds. Measured for
        // riscv32; xtensa takes the same data model (not measured: no compiler here).
        const bool short_enums = name == "cortex-m";
        a.pointer = 4;
        a.enum_size = short_enums ? 1 : 4;
        a.eval_tensor = {12, 4};
        a.node_and_registration = {32, 4};
        a.tflite_tensor = {short_enums ? 32 : 40, 4};
        a.affine_quantization = {12, 4};
        a.subgraph_allocations = {8, 4};
        a.scratch_buffer_handle = {4, 4};
        a.scratch_buffer_request = {12, 4};
        a.allocation_info = {24, 4};
        // arena_allocator, greedy_planner, micro_allocator: the revision's (revisions.cpp), the
        // same on every ILP32 target.
        a.arena_allocator = {tflm.arena_allocator.arm_size, tflm.arena_allocator.arm_align};
        a.greedy_planner = {tflm.greedy_planner.arm_size, tflm.greedy_planner.arm_align};
        a.micro_allocator = {tflm.micro_allocator.arm_size, tflm.micro_allocator.arm_align};
        a.builtin_data_allocator = {8, 4};
    } else if (name == "host") {
        a.pointer = 8;
        a.enum_size = 4;
        a.eval_tensor = {24, 8};
        a.node_and_registration = {64, 8};
        a.tflite_tensor = {64, 8};
        a.affine_quantization = {24, 8};
        a.subgraph_allocations = {16, 8};
        a.scratch_buffer_handle = {8, 8};
        a.scratch_buffer_request = {16, 8};
        a.allocation_info = {32, 8};
        a.arena_allocator = {tflm.arena_allocator.host_size, tflm.arena_allocator.host_align};
        a.greedy_planner = {tflm.greedy_planner.host_size, tflm.greedy_planner.host_align};
        a.micro_allocator = {tflm.micro_allocator.host_size, tflm.micro_allocator.host_align};
        a.builtin_data_allocator = {16, 8};
    } else {
        throw std::invalid_argument("unknown target '" + name + "': use " + kTargets);
    }
    return a;
}

}  // namespace arenascope::planner
