// What TFLM's CMSIS-NN kernels allocate in the arena (see kernels.h).
#include "kernel_rules.h"

namespace arenascope::planner::rules {

bool cmsis_nn_kernel(Kernel &, bool &, bool &)
{
    return false;
}

}  // namespace arenascope::planner::rules
