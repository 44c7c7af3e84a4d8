// The TFLM revisions the planner models (revisions.h): every per-revision fact, each with its
// source. Paths are relative to tensorflow/lite/micro/ at the revision's commit unless they start
// with tensorflow/. Cortex-M sizes were read with gdb (`p sizeof(...)`) from firmware built from
// each commit with arm-none-eabi-gcc 12.2 -mcpu=cortex-m4 -mthumb -DTF_LITE_STATIC_MEMORY, and
// where a type has no DWARF name, from the addresses of the objects at the arena's end; host
// sizes from sizeof probes compiled with x86-64 g++ -std=c++17 -DTF_LITE_STATIC_MEMORY against
// the commit's headers. The allocation sequence and messages were read in the sources named.
#include "arenascope/planner/revisions.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace arenascope::planner {

namespace {

// The reference kernels whose rules were checked against the older revisions' source: the
// same temporaries, persistent buffers and scratch requests as 2026-08 in their Init and
// Prepare (kernels/<name>.cc and <name>_common.cc at each commit, compared with 90b983c2's:
// what differs are checks that reject a model, not requests), their OpData and builtin data
// sizes from sizeof probes (arm-none-eabi-g++ -mcpu=cortex-m4 and x86-64 g++ against the
// commit's headers), the differences being the flags and kernel_sizes below:
//   FULLY_CONNECTED  fully_connected.cc, fully_connected_common.cc
//   CONV_2D, DEPTHWISE_CONV_2D  conv.cc, conv_common.cc, depthwise_conv.cc,
//                    depthwise_conv_common.cc (OpDataConv 56 B at 58aa9833f as at 90b983c2)
//   AVERAGE_POOL_2D, MAX_POOL_2D  pooling.cc, pooling_common.cc (OpDataPooling 32 B,
//                    TfLitePoolParams 40 B)
//   ADD, MUL         add.cc, add_common.cc, mul.cc, mul_common.cc (OpDataAdd 60 B, OpDataMul
//                    36 B, TfLiteAddParams 2 B, TfLiteMulParams 1 B)
//   QUANTIZE, DEQUANTIZE  quantize*.cc, dequantize*.cc (OpDataQuantizeReference,
//                    DequantizeOpData 32 B)
//   RESHAPE          reshape.cc (TfLiteReshapeParams 36 B; no dims copy: reshape_dims_copy)
//   SOFTMAX          softmax.cc, softmax_common.cc (SoftmaxParams 56 B); not at 5b3670d82,
//                    whose int16 lookup tables are allocated in another order and size
const std::vector<std::string> kChecked = {
    "FULLY_CONNECTED", "CONV_2D",    "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD", "MUL",
    "QUANTIZE",        "DEQUANTIZE", "RESHAPE",           "SOFTMAX"};

// The kernel sizes that differ from 2026-08's in the 2022 revisions (547f8aeab, 59b39f6cb,
// 5b3670d82: the same structs), `at` naming the commit they were read at.
std::vector<KernelSizeFact> kernel_sizes_2022(const std::string &at)
{
    // One struct, OpDataConv, serves both convolutions' Init.
    auto op_data_conv = [&](const char *op) -> KernelSizeFact {
        return {op,
                "init",
                "OpDataConv",
                {52, 4, 64, 8},
                "kernels/conv.h " + at + " (no filter_buffer_index): sizeof probes"};
    };
    return {
        {"CONV_2D",
         "parse",
         "TfLiteConvParams",
         {24, 4, 24, 4},
         "tensorflow/lite/c/builtin_op_data.h " + at + " (no quantized_bias_type): sizeof probes"},
        op_data_conv("CONV_2D"),
        op_data_conv("DEPTHWISE_CONV_2D"),
        {"FULLY_CONNECTED",
         "parse",
         "TfLiteFullyConnectedParams",
         {4, 1, 12, 4},
         "tensorflow/lite/c/builtin_op_data.h " + at + ": gdb sizeof 4, host 12"},
        {"FULLY_CONNECTED",
         "init",
         "OpDataFullyConnected",
         {32, 4, 32, 4},
         "kernels/fully_connected.h " + at + " (8 int32): gdb sizeof 32, host 32"},
    };
}

// 90b983c2 (2026-08-20): the revision every rule is written from.
TflmRevision revision_2026_08()
{
    TflmRevision now;
    now.id = "2026-08";
    now.commit = "90b983c2b3f1480642e040bbd2ddb37b998f3424";
    now.date = "2026-08-20";
    now.description = "upstream tflite-micro, August 2026: every rule of the planner is written from it (the default)";
    now.current = true;
    now.arena_allocator_name = "SingleArenaBufferAllocator";
    now.arena_allocator_source = "single_arena_buffer_allocator.cc SingleArenaBufferAllocator::Create";
    now.arena_allocator = {36, 4, 72, 8};
    now.micro_allocator = {36, 4, 72, 8};
    now.greedy_planner = {44, 4, 72, 8};
    now.objects_source = "arena_allocator/single_arena_buffer_allocator.h, micro_allocator.h, "
                         "memory_planner/greedy_memory_planner.h (sizeof probes, abi.cpp)";
    now.variables_before_planning = false;
    now.handles_per_subgraph = false;
    now.fc_per_channel_buffers = true;
    now.int4_filter_scratch = true;
    now.reshape_dims_copy = true;
    now.sequence_source = "micro_allocator.cc FinishModelAllocation, CommitStaticMemoryPlan";
    now.tensor_null_checked = true;
    now.node_number_suffix = "";
    now.messages_source = "micro_allocator.cc AllocateTempTfLiteTensor, AllocatePersistentTfLiteTensor; "
                          "micro_interpreter_graph.cc PrepareSubgraphs";
    now.offline_variables = true;
    return now;
}

// 58aa9833f (2023-02-13): SingleArenaBufferAllocator and MicroAllocator without an
// ErrorReporter, MicroGraph (not MicroInterpreterGraph).
TflmRevision revision_2023_02(const TflmRevision &now)
{
    TflmRevision y23 = now;
    y23.id = "2023-02";
    y23.commit = "58aa9833f077643ff2c7b5317204164ae7d81ddb";
    y23.date = "2023-02-13";
    y23.description = "upstream tflite-micro, February 2023, as Arduino's and Edge Impulse's TFLM ship it";
    y23.current = false;
    y23.objects_source = "arena_allocator/single_arena_buffer_allocator.h (36 B), micro_allocator.h (36 B), "
                         "memory_planner/greedy_memory_planner.h (44 B) at 58aa9833f: gdb sizeof, objects at arena "
                         "end E-36, E-80, E-116";
    y23.fc_per_channel_buffers = false;  // kernels/fully_connected_common.cc: no AllocatePersistentBuffer
    y23.int4_filter_scratch = true;      // kernels/fully_connected.cc, conv_common.cc, depthwise_conv_common.cc
    y23.reshape_dims_copy = false;       // kernels/reshape.cc ReshapeOutput: the dims changed in place
    y23.sequence_source = "micro_allocator.cc FinishModelAllocation / CommitStaticMemoryPlan at 58aa9833f (as "
                          "2026-08); kernels/fully_connected_common.cc (no per-channel buffers)";
    y23.tensor_null_checked = false;
    y23.node_number_suffix = "f";
    y23.messages_source = "micro_allocator.cc AllocateTempTfLiteTensor / AllocatePersistentTfLiteTensor (no null "
                          "check: InitializeTfLiteTensorFromFlatbuffer TFLITE_DCHECK(result != nullptr)), "
                          "kernels/op_macros.h AbortImpl (\"HALTED\"), micro_graph.cc PrepareSubgraphs (\"(number "
                          "%df)\") at 58aa9833f";
    y23.offline_variables = true;  // 58aa9833f is "Add support for offline planning of variable tensors"
    y23.checked_kernels = kChecked;
    y23.kernel_sizes = {
        {"CONV_2D",
         "parse",
         "TfLiteConvParams",
         {24, 4, 24, 4},
         "tensorflow/lite/core/c/builtin_op_data.h at 58aa9833f (no quantized_bias_type): sizeof probes"},
        {"FULLY_CONNECTED",
         "parse",
         "TfLiteFullyConnectedParams",
         {4, 1, 12, 4},
         "tensorflow/lite/core/c/builtin_op_data.h at 58aa9833f (no quantized_bias_type): gdb sizeof 4, host 12"},
        {"FULLY_CONNECTED",
         "init",
         "OpDataFullyConnected",
         {36, 4, 36, 4},
         "kernels/fully_connected.h at 58aa9833f (8 int32 + filter_buffer_index, no per-channel pointers): gdb "
         "sizeof 36, host 36"},
    };
    return y23;
}

// 547f8aeab (2022-07-06): SimpleMemoryAllocator in arena_allocator/, with both buffer
// interfaces and an ErrorReporter*; MicroAllocator with error_reporter_.
TflmRevision revision_2022_07(const TflmRevision &y23)
{
    TflmRevision j22 = y23;
    j22.id = "2022-07";
    j22.commit = "547f8aeab1b499db914f63aa16827d4d8e9a97e4";
    j22.date = "2022-07-06";
    j22.description = "upstream tflite-micro, July 2022 (SimpleMemoryAllocator in arena_allocator/, ErrorReporter)";
    j22.arena_allocator_name = "SimpleMemoryAllocator";
    j22.arena_allocator_source = "arena_allocator/simple_memory_allocator.cc SimpleMemoryAllocator::Create";
    j22.arena_allocator = {40, 4, 80, 8};
    j22.micro_allocator = {40, 4, 80, 8};
    j22.objects_source = "arena_allocator/simple_memory_allocator.h (40 B: two interface vptrs, error_reporter_), "
                         "micro_allocator.h (40 B: + error_reporter_), memory_planner/greedy_memory_planner.h (44 B) "
                         "at 547f8aeab: gdb sizeof, objects at arena end E-40, E-84, E-124";
    j22.variables_before_planning = true;
    j22.handles_per_subgraph = true;
    j22.int4_filter_scratch = false;  // kernels/fully_connected.cc, conv_common.cc, depthwise_conv_common.cc
    j22.sequence_source = "micro_allocator.cc FinishModelAllocation at 547f8aeab (handles and variables per "
                          "subgraph before CommitStaticMemoryPlan); kernels/fully_connected.cc, "
                          "fully_connected_common.cc (no per-channel buffers, no INT4 scratch)";
    j22.messages_source = "micro_allocator.cc AllocateTempTfLiteTensor / AllocatePersistentTfLiteTensor (no null "
                          "check: InitializeTfLiteTensorFromFlatbuffer TFLITE_DCHECK(result != nullptr)), "
                          "kernels/op_macros.h AbortImpl (\"HALTED\"), micro_graph.cc PrepareSubgraphs (\"(number "
                          "%df)\") at 547f8aeab";
    j22.offline_variables = false;  // micro_allocator.cc AllocateVariables: every variable in the tail
    j22.kernel_sizes = kernel_sizes_2022("at 547f8aeab");
    return j22;
}

// 59b39f6cb (2022-09-14): the SingleArenaBufferAllocator of 86abc0af9 (2022-07-07), still with
// an ErrorReporter* as MicroAllocator has (both removed by 95761fcfd, 2022-09-19); otherwise
// 2022-07's sequence and kernels, except that FinishModelAllocation allocates the handles
// once, before the loop over the subgraphs' variables.
TflmRevision revision_2022_09(const TflmRevision &j22)
{
    TflmRevision s22 = j22;
    s22.id = "2022-09";
    s22.commit = "59b39f6cb6df907aaccdbd43d08d2b3a1c0bc202";
    s22.date = "2022-09-14";
    s22.description = "upstream tflite-micro, September 2022 (SingleArenaBufferAllocator, still with an "
                      "ErrorReporter; Zephyr v3.6's module, Himax tflmtag2209)";
    s22.arena_allocator_name = "SingleArenaBufferAllocator";
    s22.arena_allocator_source = "arena_allocator/single_arena_buffer_allocator.cc SingleArenaBufferAllocator::Create";
    s22.objects_source = "arena_allocator/single_arena_buffer_allocator.h (40 B: two interface vptrs, "
                         "error_reporter_), micro_allocator.h (40 B: + error_reporter_), "
                         "memory_planner/greedy_memory_planner.h (44 B) at 59b39f6cb";
    s22.handles_per_subgraph = false;
    s22.sequence_source = "micro_allocator.cc FinishModelAllocation at 59b39f6cb (the handles once, then each "
                          "subgraph's variables, before CommitStaticMemoryPlan); kernels/fully_connected.cc, "
                          "fully_connected_common.cc, conv.h (no per-channel buffers, no INT4 scratch, OpDataConv "
                          "without filter_buffer_index)";
    s22.messages_source = "micro_allocator.cc AllocateTempTfLiteTensor / AllocatePersistentTfLiteTensor (no null "
                          "check), kernels/op_macros.h AbortImpl (\"HALTED\"), micro_graph.cc PrepareSubgraphs "
                          "(\"(number %df)\") at 59b39f6cb";
    s22.kernel_sizes = kernel_sizes_2022("at 547f8aeab, the same at 59b39f6cb (between them the checked kernels "
                                         "changed only their logging and registration functions: git diff "
                                         "547f8aeab 59b39f6cb -- tensorflow/lite/micro/kernels)");
    return s22;
}

// 5b3670d82 (2022-03-31): SimpleMemoryAllocator in micro/ with no base class (one vptr),
// MicroAllocator with one memory_allocator_.
TflmRevision revision_2022_03(const TflmRevision &j22)
{
    TflmRevision m22 = j22;
    m22.id = "2022-03";
    m22.commit = "5b3670d82018ea526665c16996264e555e9cc463";
    m22.date = "2022-03-31";
    m22.description = "upstream tflite-micro, March 2022 (SimpleMemoryAllocator in micro/, ErrorReporter)";
    m22.arena_allocator_source = "simple_memory_allocator.cc SimpleMemoryAllocator::Create";
    m22.arena_allocator = {36, 4, 72, 8};
    m22.micro_allocator = {36, 4, 72, 8};
    m22.objects_source = "simple_memory_allocator.h (36 B: no base class, error_reporter_), micro_allocator.h "
                         "(36 B: one memory_allocator_, error_reporter_), memory_planner/greedy_memory_planner.h "
                         "(44 B) at 5b3670d82: gdb sizeof, objects at arena end E-36, E-80, E-116";
    m22.sequence_source = "micro_allocator.cc FinishModelAllocation at 5b3670d82 (handles and variables per "
                          "subgraph before CommitStaticMemoryPlan); kernels/fully_connected.cc, "
                          "fully_connected_common.cc (no per-channel buffers, no INT4 scratch)";
    m22.messages_source = "micro_allocator.cc AllocateTempTfLiteTensor / AllocatePersistentTfLiteTensor (no null "
                          "check: InitializeTfLiteTensorFromFlatbuffer TFLITE_DCHECK(result != nullptr)), "
                          "kernels/op_macros.h AbortImpl (\"HALTED\"), micro_graph.cc PrepareSubgraphs (\"(number "
                          "%df)\") at 5b3670d82";
    m22.checked_kernels = kChecked;
    m22.checked_kernels.erase(std::find(m22.checked_kernels.begin(), m22.checked_kernels.end(), "SOFTMAX"));
    m22.kernel_sizes = kernel_sizes_2022("at 5b3670d82");
    return m22;
}

// Newest first, each older revision written as its differences from a newer one.
std::vector<TflmRevision> make_revisions()
{
    // (tests/plugin/test_tflm_profile.py reads the order from the push_backs.)
    std::vector<TflmRevision> r;
    const TflmRevision now = revision_2026_08();
    r.push_back(now);
    const TflmRevision y23 = revision_2023_02(now);
    r.push_back(y23);
    const TflmRevision j22 = revision_2022_07(y23);
    const TflmRevision s22 = revision_2022_09(j22);
    r.push_back(s22);
    r.push_back(j22);
    const TflmRevision m22 = revision_2022_03(j22);
    r.push_back(m22);
    return r;
}

}  // namespace

bool TflmRevision::kernel_checked(const std::string &op) const
{
    if (current) return true;
    for (const std::string &k : checked_kernels)
        if (k == op) return true;
    return false;
}

const KernelSizeFact *TflmRevision::kernel_size(const std::string &op, const std::string &pass,
                                                const std::string &what) const
{
    for (const KernelSizeFact &f : kernel_sizes)
        if (op == f.op && pass == f.pass && what == f.what) return &f;
    return nullptr;
}

const std::vector<TflmRevision> &tflm_revisions()
{
    static const std::vector<TflmRevision> revisions = make_revisions();
    return revisions;
}

const TflmRevision &default_tflm_revision()
{
    return tflm_revisions().front();
}

std::string tflm_revision_ids()
{
    std::string out;
    for (const TflmRevision &r : tflm_revisions()) out += (out.empty() ? "" : ", ") + std::string(r.id);
    return out;
}

const TflmRevision &tflm_revision(const std::string &id)
{
    for (const TflmRevision &r : tflm_revisions())
        if (id == r.id) return r;
    throw std::invalid_argument("unknown TFLM revision '" + id + "': use one of " + tflm_revision_ids() +
                                ", or auto (" + default_tflm_revision().id + ")");
}

std::string tflm_revision_list_jsonl()
{
    std::string out;
    for (const TflmRevision &r : tflm_revisions()) {
        const nlohmann::json line = {
            {"id", r.id},
            {"commit", r.commit},
            {"date", r.date},
            {"description", r.description},
            {"default", &r == &default_tflm_revision()},
            {"exact_kernels", r.current ? nlohmann::json("all modelled") : nlohmann::json(r.checked_kernels)}};
        out += line.dump() + "\n";
    }
    return out;
}

}  // namespace arenascope::planner
