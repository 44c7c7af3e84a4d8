// arenascope planner: what TFLM does in an arena of a given size (arenascope-plan --arena-size).
//
// The replay (arena.h) says whether every request fits. When one does not, TFLM 90b983c2 does
// not always return kTfLiteError: some call sites do not check the null they get (a placement
// new through NULL, a kernel storing through a null buffer), a kernel's Init that returns null
// is only caught by a TFLITE_DCHECK in its Prepare (abort: a hang on a board), and where a
// persistent request has moved tail_ below temp_ the allocator's size_t arithmetic wraps. This
// walks TFLM's sequence from the arena start as TFLM does, past the failures TFLM does not stop
// at, to where it returns, crashes or hangs, with what it prints on the way. Every rule cites
// its TFLM source in outcome.cpp. Assumes a build without NDEBUG (TFLITE_DCHECK active) and
// without TF_LITE_STRIP_ERROR_STRINGS, as the figures in ../shared/tflm-figures were built; on
// cortex-m, TFLM's Cortex-M makefiles' -DTF_LITE_MCU_DEBUG_LOG (TFLITE_ABORT is AbortImpl).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arenascope/planner/abi.h"
#include "arenascope/planner/arena.h"
#include "arenascope/planner/model.h"

namespace arenascope::planner {

struct Outcome {
    enum class Kind {
        Ok,       // AllocateTensors returns kTfLiteOk
        Error,    // it returns kTfLiteError, the allocator state frozen (nothing is rolled back)
        Crash,    // a fault inside TFLM (a write through NULL or far out of the arena, abort() on a host)
        Hang,     // TFLITE_ABORT on a board: AbortImpl loops forever
        Unknown,  // TFLM goes on with memory it corrupted, or the source does not decide
    };
    Kind kind = Kind::Ok;
    std::string how;               // the mechanism in one sentence, with its TFLM source
    std::vector<std::string> log;  // what TFLM prints (MicroPrintf lines) until it stops, in order;
                                   // <...> stands for what the build's __FILE__ / __LINE__ give
    size_t stop = 0;               // the step where it stops (returns, crashes, hangs, is lost)
};
const char *outcome_name(Outcome::Kind k);  // "ok", "error", "crash", "hang", "unknown"

// The first request that does not fit.
struct Failure {
    size_t step = 0;
    std::string kind;   // "persistent", "temp", "resize", "planner arrays", "head reservation"
    int64_t bytes = 0;  // asked (planner arrays: buffers x 40, the space the planner needs)
    int64_t align = 1;
    int64_t available = 0;  // as TFLM's message computes it (planner arrays: the space it finds)
    int64_t missing = 0;
    std::string message;  // TFLM's line for it; empty when it prints none (its arithmetic wraps)
};

struct ArenaAtSize {
    int64_t arena_bytes = 0;
    bool fits = false;    // every request fits: AllocateTensors succeeds (as Replay::ok)
    bool failed = false;  // !fits: `failure` is the first request that does not fit
    Failure failure;
    ArenaState state;              // the allocator where TFLM stops (fits: after AllocateTensors)
    std::vector<int64_t> offsets;  // per step: where a persistent request landed before TFLM stopped, else -1
    Outcome outcome;
    int64_t tail_bytes = 0;  // fits: the persistent tail at this size (GetPersistentUsedBytes)
    int64_t head_bytes = 0;  // fits: the non-persistent head (GetNonPersistentUsedBytes)
};

// TFLM's AllocateTensors (and the MicroInterpreter constructor before it) in an arena of
// `arena_bytes` starting 16-byte aligned; `steps` are allocation_steps(...) of `model` for `abi`.
ArenaAtSize replay_at_size(const Model &model, const Abi &abi, const std::vector<Step> &steps, int64_t arena_bytes);

}  // namespace arenascope::planner
