// What TFLM 90b983c2 does in an arena of a given size (see outcome.h). Paths are relative to
// tensorflow/lite/micro/ unless they start with tensorflow/ or signal/.
#include "arenascope/planner/outcome.h"

#include <algorithm>
#include <cstring>

namespace arenascope::planner {

const char *outcome_name(Outcome::Kind k)
{
    switch (k) {
    case Outcome::Kind::Ok: return "ok";
    case Outcome::Kind::Error: return "error";
    case Outcome::Kind::Crash: return "crash";
    case Outcome::Kind::Hang: return "hang";
    case Outcome::Kind::Unknown: return "unknown";
    }
    return "?";
}

namespace {

using K = Outcome::Kind;
using Site = Step::Site;

// MicroPrintf's %u and %d of a size_t: on a Cortex-M size_t is 32 bits; on x86-64 the vararg
// read as an (unsigned) int is the low 32 bits.
std::string u32(int64_t v)
{
    return std::to_string(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}
std::string d32(int64_t v)
{
    return std::to_string(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))));
}

const char *request_kind(Step::Kind k)
{
    switch (k) {
    case Step::Kind::Persistent: return "persistent";
    case Step::Kind::Temp: return "temp";
    case Step::Kind::ResizeHead: return "resize";
    case Step::Kind::PlannerArena: return "planner arrays";
    case Step::Kind::ReserveHead: return "head reservation";
    case Step::Kind::ResetTemp: break;
    }
    return "?";
}

// GreedyMemoryPlanner::Init(unsigned char*, int scratch_buffer_size) gets the size_t space as an
// int (GCC: modulo 2^32); max_buffer_count_ = scratch_buffer_size / per_buffer_size() divides it
// back as a size_t (per_buffer_size() is size_t) and stores the quotient in an int
// (greedy_memory_planner.cc/.h). A space that wrapped below zero becomes a huge count.
int64_t max_buffer_count(int64_t space, const Abi &abi)
{
    const uint64_t mask = abi.pointer == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * abi.pointer)) - 1;
    const auto as_int = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(space) & mask));
    const uint64_t as_size = static_cast<uint64_t>(static_cast<int64_t>(as_int)) & mask;
    return static_cast<int32_t>(static_cast<uint32_t>(as_size / 40));
}

// The allocator's own line for a failed request (arena_allocator/single_arena_buffer_allocator.cc:
// AllocatePersistentBuffer, AllocateTemp, ResizeBuffer), "" where it prints none.
std::string allocator_line(const Step &s, const Attempt &a)
{
    switch (s.kind) {
    case Step::Kind::Persistent:
        return "Failed to allocate tail memory. Requested: " + u32(s.bytes) + ", available " + u32(a.available) +
               ", missing: " + u32(a.missing);
    case Step::Kind::Temp:
        if (a.wrapped) return "";  // tail_ - temp_ wrapped: it hands the memory out
        return "Failed to allocate temp memory. Requested: " + u32(s.bytes) + ", available " + u32(a.available) +
               ", missing: " + u32(s.bytes - a.available);
    case Step::Kind::ResizeHead:
    case Step::Kind::ReserveHead:
        return "Failed to resize buffer. Requested: " + u32(s.bytes) + ", available " + u32(a.available) +
               ", missing: " + u32(s.bytes - a.available);
    case Step::Kind::PlannerArena:
    case Step::Kind::ResetTemp: break;
    }
    return "";
}

// How a kernel's Prepare checks node->user_data, the OpData its Init allocated (reference
// kernels; the check is the first thing Prepare does unless after_temps).
struct UserDataCheck {
    const char *op;
    bool dcheck;       // TFLITE_DCHECK (abort) or TF_LITE_ENSURE (kTfLiteError)
    bool after_temps;  // the check follows the kernel's first temporary TfLiteTensors
    const char *source;
    const char *ensure_line;  // TF_LITE_ENSURE's message
};
constexpr UserDataCheck kUserDataChecks[] = {
    {"FULLY_CONNECTED", true, false, "fully_connected.cc FullyConnectedPrepare", nullptr},
    {"CONV_2D", true, false, "kernels/conv_common.cc ConvPrepare", nullptr},
    {"DEPTHWISE_CONV_2D", true, false, "kernels/depthwise_conv_common.cc DepthwiseConvPrepare", nullptr},
    {"AVERAGE_POOL_2D", true, false, "kernels/pooling_common.cc PoolingPrepare", nullptr},
    {"MAX_POOL_2D", true, false, "kernels/pooling_common.cc PoolingPrepare", nullptr},
    {"ADD", true, false, "kernels/add_common.cc AddPrepare", nullptr},
    {"MUL", true, false, "kernels/mul_common.cc MulPrepare", nullptr},
    {"DIV", true, false, "kernels/div.cc DivPrepare", nullptr},
    {"QUANTIZE", true, false, "kernels/quantize_common.cc PrepareQuantizeReference", nullptr},
    {"STRIDED_SLICE", true, false, "kernels/strided_slice_common.cc StridedSlicePrepare", nullptr},
    {"CONCATENATION", true, false, "kernels/concatenation.cc ConcatenationPrepare", nullptr},
    {"UNIDIRECTIONAL_SEQUENCE_LSTM", true, false,
     "kernels/unidirectional_sequence_lstm.cc UnidirectionalSequenceLstmPrepare", nullptr},
    {"SVDF", true, true, "kernels/svdf_common.cc PrepareSvdf", nullptr},
    {"SOFTMAX", false, true, "kernels/softmax_common.cc SoftmaxPrepare",
     "tensorflow/lite/micro/kernels/softmax_common.cc:156 node->user_data != nullptr was not true."},
};
const UserDataCheck *user_data_check(const std::string &op)
{
    for (const UserDataCheck &c : kUserDataChecks)
        if (op == c.op) return &c;
    return nullptr;  // the signal kernels' Prepare uses user_data unchecked; others: not read
}

// A crash from a store through a null pointer: certain on a host, board-dependent on a Cortex-M.
std::string null_store(const Abi &abi)
{
    return abi.pointer == 8 ? "a SIGSEGV on x86-64"
                            : "a fault on a Cortex-M where address 0 is flash or unmapped (where it is RAM, as on QEMU "
                              "mps2-an386, the store lands there and corrupts it)";
}

struct Walk {
    const Model &model;
    const Abi &abi;
    const std::vector<Step> &steps;
    ArenaAtSize r;
    ArenaState st;
    std::vector<std::pair<int, int>> init_failed;  // (subgraph, operator) whose Init returned null
    bool handles_null = false;

    const Operator &op_of(const Step &s) const { return model.subgraphs[s.subgraph].operators[s.op]; }
    bool init_failed_for(const Step &s) const
    {
        return std::find(init_failed.begin(), init_failed.end(), std::make_pair(s.subgraph, s.op)) != init_failed.end();
    }
    std::string node_line(const Step &s) const
    {  // micro_interpreter_graph.cc PrepareSubgraphs
        return "Node " + op_of(s).op_name + " (number " + std::to_string(s.op) + abi.tflm->node_number_suffix +
               ") failed to prepare with status 1";
    }
    void log(std::string line)
    {
        if (!line.empty()) r.outcome.log.push_back(std::move(line));
    }
    ArenaAtSize stop(size_t i, K kind, std::string how)
    {
        r.outcome.kind = kind;
        r.outcome.how = std::move(how);
        r.outcome.stop = i;
        r.state = st;
        return r;
    }
    // A request TFLM makes after the one that failed, before it stops (its message, its offset).
    void also(size_t i)
    {
        const Attempt a = apply_step(steps[i], st);
        if (a.fits && steps[i].kind == Step::Kind::Persistent) r.offsets[i] = a.at;
        if (!a.fits) log(allocator_line(steps[i], a));
    }

    // The operator whose Init returned null reaches Prepare's check of node->user_data.
    ArenaAtSize user_data(size_t i, const Step &s)
    {
        const std::string &name = op_of(s).op_name;
        const UserDataCheck *c = user_data_check(name);
        const std::string who = name + " (operator " + std::to_string(s.op) + ")";
        if (!c)
            return stop(i, K::Unknown,
                        who +
                            "'s Init returned null (its AllocatePersistentBuffer failed; InitSubgraphs does not check, "
                            "micro_interpreter_graph.cc) and its Prepare uses node->user_data without a check");
        if (!c->dcheck) {
            log(c->ensure_line);
            log(node_line(s));
            return stop(
                i, K::Error,
                who + "'s Init returned null (InitSubgraphs does not check); " + c->source +
                    " TF_LITE_ENSURE(node->user_data != nullptr) fails and AllocateTensors returns kTfLiteError");
        }
        const std::string why = who +
                                "'s Init returned null (InitSubgraphs does not check, micro_interpreter_graph.cc); " +
                                c->source + " TFLITE_DCHECK(node->user_data != nullptr) fails: ";
        return aborted(i, why);
    }

    // A failed TFLITE_DCHECK (`why` says which) at step i: TFLITE_ABORT, abort() on a host, and
    // AbortImpl's "HALTED" and endless loop on a Cortex-M (kernels/op_macros.h).
    ArenaAtSize aborted(size_t i, const std::string &why)
    {
        if (abi.pointer == 8) return stop(i, K::Crash, why + "TFLITE_ABORT is abort() (kernels/op_macros.h): SIGABRT");
        log("HALTED");
        return stop(i, K::Hang,
                    why +
                        "TFLITE_ABORT is AbortImpl with TFLM's Cortex-M -DTF_LITE_MCU_DEBUG_LOG (kernels/op_macros.h): "
                        "it prints HALTED and loops forever");
    }

    // TFLM before 2023-02's MicroAllocator::AllocateTempTfLiteTensor and
    // AllocatePersistentTfLiteTensor do not check the allocator's null: they pass it to
    // InitializeTfLiteTensorFromFlatbuffer, whose TFLITE_DCHECK(result != nullptr) aborts
    // (revisions.cpp tensor_null_checked, messages_source).
    ArenaAtSize unchecked_tensor(size_t i, const Step &s)
    {
        const std::string why =
            std::string(s.site == Site::TempTensor ? "AllocateTempTfLiteTensor" : "AllocatePersistentTfLiteTensor") +
            " does not check the null it gets for the TfLiteTensor (TFLM " + abi.tflm->id +
            ", micro_allocator.cc) and InitializeTfLiteTensorFromFlatbuffer's "
            "TFLITE_DCHECK(result != nullptr) fails: ";
        return aborted(i, why);
    }

    // A failed request of a kernel's Prepare; returns true when TFLM goes on.
    bool prepare_failure(size_t i, const Step &s, ArenaAtSize &out)
    {
        if (s.kind == Step::Kind::Temp) return temp_failure(i, s, out);
        return persistent_prepare_failure(i, s, out);
    }

    // A temporary of a kernel's Prepare (AllocateTempTfLiteTensor, AllocateTempBuffer) is refused.
    bool temp_failure(size_t i, const Step &s, ArenaAtSize &out)
    {
        const Operator &op = op_of(s);
        const std::string who = op.op_name + " (operator " + std::to_string(s.op) + ")";
        const std::string ensure = "<kernel source>:<line> <tensor> != nullptr was not true.";
        if (s.site == Site::TempTensor && !abi.tflm->tensor_null_checked) {
            out = unchecked_tensor(i, s);
            return false;
        }
        if (s.site == Site::TempTensor)  // micro_allocator.cc AllocateTempTfLiteTensor
            log("Failed to allocate temp. memory for tensor " + d32(s.tensor) + ", subgraph " + d32(s.subgraph));
        else if (s.site == Site::TempQuantization || s.site == Site::TempZeroPoints) {
            // micro_allocator.cc InitializeTfLiteTensorFromFlatbuffer, AllocateTempTfLiteTensor
            log(s.site == Site::TempQuantization ? "Unable to allocate TfLiteAffineQuantization."
                                                 : "Unable to allocate quantization->zero_point.");
            log("Failed to populate a temp TfLiteTensor struct from flatbuffer data!");
        } else {
            out = stop(i, K::Unknown,
                       who + "'s AllocateTempBuffer failed: what the kernel does with the null is not modelled");
            return false;
        }
        if (op.op_name == "STRIDED_SLICE") {
            // strided_slice_common.cc StridedSliceContext: NumDimensions(input) with no null check.
            out =
                stop(i, abi.pointer == 8 ? K::Crash : K::Unknown,
                     who +
                         "'s StridedSliceContext does not check the null TfLiteTensor it gets and reads its dims "
                         "(kernels/strided_slice_common.cc): " +
                         (abi.pointer == 8 ? std::string("a SIGSEGV on x86-64")
                                           : "on a Cortex-M it reads near address 0, and what follows is not decided"));
            return false;
        }
        log(ensure);
        log(node_line(s));
        out = stop(i, K::Error,
                   who + "'s Prepare gets a null TfLiteTensor, its TF_LITE_ENSURE(... != nullptr) fails, and "
                         "PrepareSubgraphs returns kTfLiteError (micro_interpreter_graph.cc), temporaries not reset");
        return false;
    }

    // A persistent buffer of Prepare (context->AllocatePersistentBuffer returns null).
    bool persistent_prepare_failure(size_t i, const Step &s, ArenaAtSize &out)
    {
        const Operator &op = op_of(s);
        const std::string who = op.op_name + " (operator " + std::to_string(s.op) + ")";
        const bool channels = s.what.find("per-channel output") != std::string::npos;
        if ((op.op_name == "CONV_2D" || op.op_name == "DEPTHWISE_CONV_2D") && channels) {
            const Tensor *in =
                op.inputs.empty() || op.inputs[0] < 0 ? nullptr : &model.subgraphs[s.subgraph].tensors[op.inputs[0]];
            if (in && in->type == 0) return true;  // FLOAT32: CalculateOpDataConv never writes them
        }
        if (channels &&
            (op.op_name == "FULLY_CONNECTED" || op.op_name == "CONV_2D" || op.op_name == "DEPTHWISE_CONV_2D")) {
            // The multipliers' request is followed by the shifts' before either is written.
            size_t last = i;
            if (i + 1 < steps.size() && steps[i + 1].op == s.op && steps[i + 1].subgraph == s.subgraph &&
                steps[i + 1].site == Site::KernelPersistent && steps[i + 1].phase == Phase::Prepare)
                also(last = i + 1);
            out =
                stop(last, K::Crash,
                     who +
                         "'s Prepare does not check the null per-channel buffer it gets and stores the multipliers and "
                         "shifts through it (" +
                         std::string(op.op_name == "FULLY_CONNECTED"
                                         ? "kernels/fully_connected_common.cc CalculateOpDataFullyConnected"
                                         : "kernels/conv_common.cc / depthwise_conv_common.cc, "
                                           "PopulateConvolutionQuantizationParams") +
                         "): " + null_store(abi));
            return false;
        }
        if (op.op_name == "SOFTMAX") {  // softmax_common.cc InitializeLutForInt16
            const bool first = s.what.find("exp lookup") != std::string::npos;
            log(first ? "tensorflow/lite/micro/kernels/softmax_common.cc:39 raw_exp_lut != nullptr was not true."
                      : "tensorflow/lite/micro/kernels/softmax_common.cc:43 one_over_one_plus_x_lut != nullptr was not "
                        "true.");
            log(node_line(s));
            out = stop(i, K::Error,
                       who + "'s lookup table is null, its TF_LITE_ENSURE fails (kernels/softmax_common.cc) and "
                             "PrepareSubgraphs returns kTfLiteError");
            return false;
        }
        if (op.op_name == "RESHAPE") {
            out = stop(i, K::Crash,
                       who +
                           "'s CreateWritableTensorDimsWithCopy does not check the null dims buffer it gets and stores "
                           "the dims' size through it (kernels/kernel_util.cc): " +
                           null_store(abi));
            return false;
        }
        out =
            stop(i, K::Unknown, who + "'s Prepare got a null persistent buffer: what it does with it is not modelled");
        return false;
    }

    // The first step TFLM fails at, and each later one it goes on past. Returns true to go on.
    bool failure(size_t i, const Step &s, const Attempt &a, ArenaAtSize &out)
    {
        if (a.wrapped && s.kind == Step::Kind::Temp) {
            out = stop(
                i, K::Unknown,
                "a persistent request moved tail_ below temp_ (AllocatePersistentBuffer checks only against head_), "
                "so AllocateTemp's size_t tail_ - temp_ wraps and it hands this temporary out over the tail: TFLM "
                "goes on with the tail's data overwritten (arena_allocator/single_arena_buffer_allocator.cc)");
            return false;
        }
        switch (s.site) {
        case Site::ArenaAllocator:
        case Site::PlannerObject:
        case Site::MicroAllocatorObject:
        case Site::BuiltinDataAllocator:
        case Site::BuiltinData: return constructor_failure(i, s, out);
        case Site::ScratchRequests:
        case Site::SubgraphAllocations:
        case Site::EvalTensors:
        case Site::NodeAndRegistrations: return start_failure(i, s, out);
        case Site::KernelPersistent:
            if (s.phase == Phase::Init) {  // the kernel's Init returns null; InitSubgraphs stores it, unchecked
                init_failed.emplace_back(s.subgraph, s.op);
                return true;
            }
            return prepare_failure(i, s, out);
        case Site::TempTensor:
        case Site::TempQuantization:
        case Site::TempZeroPoints:
        case Site::TempBuffer: return prepare_failure(i, s, out);
        case Site::ScratchHandles:  // AllocateScratchBufferHandles stores the null and returns kTfLiteOk
            handles_null = true;
            return true;
        case Site::PlanningInfo:  // micro_allocation_info.cc CreateAllocationInfo
            log("Failed to allocate memory for memory planning, " + d32(s.bytes) + " bytes required");
            out = stop(i, K::Error,
                       "CreateAllocationInfo fails, so CommitStaticMemoryPlan and FinishModelAllocation return "
                       "kTfLiteError and so does AllocateTensors (micro_allocator.cc, micro_interpreter.cc)");
            return false;
        case Site::Variable:  // micro_allocator.cc AllocateVariables
            log("Failed to allocate variable tensor of size " + d32(s.bytes));
            out =
                stop(i, K::Error,
                     abi.tflm->variables_before_planning
                         ? "AllocateVariables fails, so FinishModelAllocation returns kTfLiteError before it plans, "
                           "and so does AllocateTensors (micro_allocator.cc)"
                         : "AllocateVariables fails, so CommitStaticMemoryPlan returns kTfLiteError with the planning "
                           "temporaries in place, and so does AllocateTensors (micro_allocator.cc)");
            return false;
        case Site::PlannerArrays: return planner(i, s, a, out);
        case Site::Head:
            out =
                stop(i, K::Error,
                     "ReserveNonPersistentOverlayMemory cannot give the plan's head, so CommitStaticMemoryPlan returns "
                     "kTfLiteError and so does AllocateTensors (micro_allocator.cc)");
            return false;
        case Site::IoArray:
        case Site::IoTensor:
        case Site::IoQuantization:
        case Site::IoZeroPoints: return io_failure(i, s, out);
        case Site::PrepareEnd:
        case Site::PlanningEnd: break;
        }
        out = stop(i, K::Unknown, "not modelled");
        return false;
    }

    // An object TFLM constructs with placement new on what it gets, unchecked.
    bool constructor_failure(size_t i, const Step &s, ArenaAtSize &out)
    {
        const std::string placement_new =
            " does not check the null it gets and constructs the object through it (placement new at address 0): ";
        switch (s.site) {
        case Site::ArenaAllocator:
            out = stop(i, K::Crash,
                       "SingleArenaBufferAllocator::Create" + placement_new + null_store(abi) +
                           " (arena_allocator/single_arena_buffer_allocator.cc), in the MicroInterpreter "
                           "constructor");
            return false;
        case Site::PlannerObject:
            out = stop(i, K::Crash,
                       "CreateMemoryPlanner" + placement_new + null_store(abi) +
                           " (micro_allocator.cc), in the MicroInterpreter constructor");
            return false;
        case Site::MicroAllocatorObject:
            out = stop(i, K::Crash,
                       "MicroAllocator::Create" + placement_new + null_store(abi) +
                           " (micro_allocator.cc), in the MicroInterpreter constructor");
            return false;
        case Site::BuiltinDataAllocator:
            out = stop(i, K::Crash, "StartModelAllocation" + placement_new + null_store(abi) + " (micro_allocator.cc)");
            return false;
        case Site::BuiltinData:
            out = stop(
                i, K::Crash,
                "the Parse function's SafeBuiltinDataAllocator::Allocate does new (ptr) T() with the null it gets, "
                "zeroing the options at address 0 before its TF_LITE_ENSURE(params != nullptr) "
                "(tensorflow/lite/core/api/flatbuffer_conversions.h AllocatePOD, flatbuffer_conversions.cc): " +
                    null_store(abi));
            return false;
        default: break;
        }
        out = stop(i, K::Unknown, "not modelled");
        return false;
    }

    // An input or output tensor of subgraph 0 (micro_interpreter.cc AllocateTensors, micro_allocator.cc).
    bool io_failure(size_t i, const Step &s, ArenaAtSize &out)
    {
        if (s.site == Site::IoTensor && !abi.tflm->tensor_null_checked) {
            out = unchecked_tensor(i, s);
            return false;
        }
        const bool input = s.what.rfind("input", 0) == 0;
        const std::string io = input ? "input" : "output";
        if (s.site == Site::IoArray)
            log("Failed to allocate memory for context->" + io + "_tensors_, " + d32(s.bytes) + " bytes required");
        else {
            if (s.site == Site::IoTensor) log("Failed to allocate memory for persistent TfLiteTensor");
            if (s.site == Site::IoQuantization) log("Unable to allocate TfLiteAffineQuantization.");
            if (s.site == Site::IoZeroPoints) log("Unable to allocate quantization->zero_point.");
            if (s.site != Site::IoTensor)
                log("Failed to populate a persistent TfLiteTensor struct from flatbuffer data!");
            log("Failed to initialize " + io + " tensor " + d32(s.io));
        }
        out = stop(i, K::Error,
                   "MicroInterpreter::AllocateTensors returns kTfLiteError after the plan is committed, its " + io +
                       " tensors not set (micro_interpreter.cc)");
        return false;
    }

    // StartModelAllocation's own arrays.
    bool start_failure(size_t i, const Step &s, ArenaAtSize &out)
    {
        if (s.site == Site::SubgraphAllocations) log("Failed to allocate memory for model metadata.");
        if (s.site == Site::EvalTensors)
            log("Failed to allocate memory for context->eval_tensors, " + d32(s.bytes) + " bytes required");
        if (s.site == Site::NodeAndRegistrations) log("Failed to allocate memory for node_and_registrations.");
        log("Failed starting model allocation.");
        out = stop(i, K::Error,
                   "StartModelAllocation returns null (micro_allocator.cc) and AllocateTensors returns kTfLiteError "
                   "(micro_interpreter.cc)");
        return false;
    }

    bool planner(size_t i, const Step &s, const Attempt &a, ArenaAtSize &out)
    {
        const int64_t max = max_buffer_count(a.available, abi);
        if (!a.wrapped) {  // greedy_memory_planner.cc AddBuffer
            log("Too many buffers (max is " + d32(max) + ")");
            out = stop(
                i, K::Error,
                "GreedyMemoryPlanner::Init makes room for " + std::to_string(max) +
                    " buffers in the free space, AddBuffer fails at the next one, and CommitStaticMemoryPlan returns "
                    "kTfLiteError with temp_ at the tail (greedy_memory_planner.cc, micro_allocator.cc)");
            return false;
        }
        const std::string why = "a persistent request (a variable tensor's or an earlier one) moved tail_ below temp_, "
                                "so GetAvailableMemory's "
                                "size_t difference wraps and AllocateTemp hands out a space of " +
                                u32(a.available) + " bytes from offset " + std::to_string(a.at) +
                                "; GreedyMemoryPlanner::Init's int and size_t conversions make "
                                "max_buffer_count_ " +
                                std::to_string(max);
        if (s.count == 0) {
            out =
                stop(i, K::Unknown,
                     why + ", and with no buffer to plan TFLM goes on (micro_allocator.cc, greedy_memory_planner.cc)");
            return false;
        }
        if (max < s.count) {
            log("Too many buffers (max is " + d32(max) + ")");
            out = stop(i, K::Error,
                       why +
                           (max > 0 ? ", AddBuffer writes that many 16-byte requirements over the tail, then fails"
                                    : ", so the first AddBuffer fails") +
                           " and CommitStaticMemoryPlan returns kTfLiteError (greedy_memory_planner.cc)");
            return false;
        }
        const uint64_t mask = abi.pointer == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * abi.pointer)) - 1;
        const uint64_t far = (static_cast<uint64_t>(a.at) + 16 * static_cast<uint64_t>(max)) & mask;
        out = stop(
            i, K::Crash,
            why + ": AddBuffer writes the " + std::to_string(s.count) +
                " requirements over the tail and CalculateOffsetsIfNeeded then writes its sorted arrays at offset " +
                std::to_string(far) + " from the arena start (16 x max_buffer_count_ further" +
                (abi.pointer == 4 ? ", modulo 2^32" : "") +
                "), a fault where nothing is mapped there (greedy_memory_planner.cc, micro_allocator.cc)");
        return false;
    }
};

}  // namespace

ArenaAtSize replay_at_size(const Model &model, const Abi &abi, const std::vector<Step> &steps, int64_t arena_bytes)
{
    Walk w{model, abi, steps, {}, {0, 0, arena_bytes}, {}, false};
    w.r.arena_bytes = arena_bytes;
    w.r.offsets.assign(steps.size(), -1);
    for (size_t i = 0; i < steps.size(); ++i) {
        const Step &s = steps[i];
        if (s.phase == Phase::Init && s.op >= 0 && w.init_failed_for(s)) continue;  // its Init returned already
        if (s.phase == Phase::Prepare && s.op >= 0 && w.init_failed_for(s)) {
            const UserDataCheck *c = user_data_check(w.op_of(s).op_name);
            if (!c || !c->after_temps || s.kind != Step::Kind::Temp) return w.user_data(i, s);
        }
        const Attempt a = apply_step(s, w.st);
        if (a.fits) {
            if (s.kind == Step::Kind::Persistent) w.r.offsets[i] = a.at;
            if (w.handles_null && s.site == Site::PlannerArrays)
                return w.stop(
                    i, K::Crash,
                    "AllocateScratchBufferHandles does not check the null it got for the ScratchBufferHandles "
                    "(micro_allocator.cc), and CommitPlan stores each scratch buffer's address through it, at "
                    "address 0 + " +
                        std::to_string(abi.pointer) + " x its index: " + null_store(abi));
            continue;
        }
        if (!s.fatal) {  // FinishPrepareNodeAllocations: PrepareSubgraphs ignores the status (it still prints)
            w.log(allocator_line(s, a));
            continue;
        }
        if (!w.r.failed) {
            w.r.failed = true;
            Failure &f = w.r.failure;
            f.step = i;
            f.kind = request_kind(s.kind);
            f.bytes = s.kind == Step::Kind::PlannerArena ? s.count * 40 : s.bytes;
            f.align = s.align;
            f.available = a.available;
            f.missing = a.missing;
            f.message = allocator_line(s, a);
            if (s.kind == Step::Kind::PlannerArena) {  // AddBuffer's line, where it is reached (see planner())
                const int64_t max = max_buffer_count(a.available, abi);
                if (!a.wrapped || (s.count > 0 && max < s.count))
                    f.message = "Too many buffers (max is " + d32(max) + ")";
            }
        }
        if (s.kind != Step::Kind::PlannerArena) w.log(allocator_line(s, a));
        ArenaAtSize out;
        if (!w.failure(i, s, a, out)) return out;
    }
    w.r.fits = !w.r.failed;
    w.r.tail_bytes = arena_bytes - w.st.tail;
    w.r.head_bytes = std::max(w.st.head, w.st.temp);
    return w.stop(steps.empty() ? 0 : steps.size() - 1, K::Ok,
                  w.r.failed ? "TFLM goes on past the failed requests (their null buffers are never written) and "
                               "AllocateTensors returns kTfLiteOk"
                             : "every request fits: AllocateTensors returns kTfLiteOk");
}

}  // namespace arenascope::planner
