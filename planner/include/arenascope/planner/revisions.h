// arenascope planner: the TFLM revisions the replay models (arenascope-plan --tflm REVISION).
//
// The planner replays one TFLM's allocation sequence byte for byte. Older TFLM differs in the
// sizes of its allocator objects, in some kernels' OpData, in the order FinishModelAllocation
// makes its requests, in which null pointers it checks and in the wording of a few messages.
// Every such fact is in ONE table, revisions.cpp, each naming the TFLM file (at that commit) it
// comes from; the rest of the planner reads a TflmRevision's fields and never compares ids.
// The ids ("2026-08", ...) are a contract: the GDB plugin passes them, and `--tflm list`
// prints them with their commit so that other tools can check they agree.
#pragma once

#include <string>
#include <vector>

namespace arenascope::planner {

// One C++ object's size on both targets (abi.h TypeSize, without including it here).
struct RevisionSize {
    long long arm_size, arm_align;    // arm-none-eabi-g++ -mcpu=cortex-m4 -mthumb
    long long host_size, host_align;  // x86-64 g++
};

// A kernel's request whose size differs from 2026-08's: in the pass `pass` ("parse" for the
// builtin data, "init" for Init's OpData), the request named `what` (the name kernels*.cpp
// gives it, e.g. "OpDataFullyConnected") has these sizes.
struct KernelSizeFact {
    const char *op;    // the operator, e.g. "FULLY_CONNECTED"
    const char *pass;  // "parse" or "init"
    const char *what;  // the request's type name in kernels*.cpp
    RevisionSize size;
    std::string source;  // TFLM file(s) at that commit, and how it was checked
};

struct TflmRevision {
    const char *id;           // "2026-08", "2023-02", "2022-09", "2022-07", "2022-03"
    const char *commit;       // tflite-micro commit, 40 hex digits
    const char *date;         // its commit date, YYYY-MM-DD
    const char *description;  // who ships it, what is notable
    bool current;             // the revision every rule in the planner was written from (2026-08)

    // The arena allocator: its class name and size (a placement new at the arena's end).
    const char *arena_allocator_name;  // "SingleArenaBufferAllocator" or "SimpleMemoryAllocator"
    const char *arena_allocator_source;
    RevisionSize arena_allocator;
    RevisionSize micro_allocator;
    RevisionSize greedy_planner;
    const char *objects_source;  // where the object sizes come from

    // Allocation-sequence differences.
    // MicroAllocator::FinishModelAllocation allocates the ScratchBufferHandles and every
    // subgraph's variable tensors in one loop over the subgraphs, BEFORE CommitStaticMemoryPlan
    // (the handles once per subgraph, each time for all requests); else the handles once, and
    // the variables inside CommitStaticMemoryPlan after CreateAllocationInfo's temporaries.
    bool variables_before_planning;
    // ... and in that loop the ScratchBufferHandles are allocated once per subgraph (before
    // 2022-09: 547f8aeab and older); else once, before the loop (59b39f6cb).
    bool handles_per_subgraph;
    // FULLY_CONNECTED's Prepare keeps per-channel multipliers and shifts (fully_connected_common.cc).
    bool fc_per_channel_buffers;
    // FULLY_CONNECTED's, CONV_2D's and DEPTHWISE_CONV_2D's Prepare request a scratch buffer
    // for an INT4 filter (filter_buffer_index); without it an INT4 filter is not modelled.
    bool int4_filter_scratch;
    // RESHAPE's Prepare copies the output dims to a persistent buffer when the output shape
    // holds a -1 (kernel_util.cc CreateWritableTensorDimsWithCopy).
    bool reshape_dims_copy;
    // A variable tensor with an offline offset is planned in the head (not given tail bytes);
    // before 58aa9833f AllocateVariables puts every variable in the tail and the planner skips
    // them, which the planner does not model (such a model is reported as not exact).
    bool offline_variables;
    const char *sequence_source;

    // Null checks and messages.
    // MicroAllocator::AllocateTempTfLiteTensor / AllocatePersistentTfLiteTensor check the
    // allocator's null ("Failed to allocate temp. memory for tensor ..."); else they pass it to
    // InitializeTfLiteTensorFromFlatbuffer, whose TFLITE_DCHECK(result != nullptr) aborts.
    bool tensor_null_checked;
    // PrepareSubgraphs' line for a failed Prepare: "Node %s (number %u) failed ..." or the
    // older "(number %df)", which prints the operator's number followed by an 'f'.
    const char *node_number_suffix;  // "" or "f"
    const char *messages_source;

    // The kernels whose arena use was checked against this revision's source: with `current`,
    // all the planner models; else only these (others are reported as not modelled, so the
    // JSON's arena.exact is false and unmodelled_kernels names them).
    std::vector<std::string> checked_kernels;
    std::vector<KernelSizeFact> kernel_sizes;

    // Whether `op`'s rules hold for this revision.
    bool kernel_checked(const std::string &op) const;
    // The size of a kernel's request in this revision, or nullptr where it is 2026-08's.
    const KernelSizeFact *kernel_size(const std::string &op, const std::string &pass, const std::string &what) const;
};

// Every revision, newest first; the first is the default.
const std::vector<TflmRevision> &tflm_revisions();
const TflmRevision &default_tflm_revision();
// The revision with this id ("auto" is not one: the caller decides what it assumes). Throws
// std::invalid_argument naming the ids for anything else.
const TflmRevision &tflm_revision(const std::string &id);
// "2026-08, 2023-02, 2022-07, 2022-03"
std::string tflm_revision_ids();
// One JSON object per line: {"id", "commit", "date", "description", "default"} (--tflm list).
std::string tflm_revision_list_jsonl();

}  // namespace arenascope::planner
