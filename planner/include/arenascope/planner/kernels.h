// arenascope planner: the scratch buffers kernels request in Prepare.
//
// Scratch requests (RequestScratchBufferInArena) are not in the model file; they come from the
// kernel's Prepare. Each modelled kernel's rule is transcribed from TFLM's reference kernel
// source (tensorflow/lite/micro/kernels/*.cc, named at each rule in kernels.cpp); optimized
// kernel variants (CMSIS-NN, Xtensa) request other sizes and are not modelled.
#pragma once

#include <string>
#include <vector>

#include "arenascope/planner/model.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

struct ScratchPrediction {
  std::vector<ScratchRequest> requests;  // in TFLM's request order (operator order)
  // Operators whose kernel may request scratch that is not modelled, "subgraph 0 operator 3 (X)".
  std::vector<std::string> unmodelled;
  // What the kernels' Prepare would reject, e.g. a hybrid CONV_2D (float input, int8 filter).
  std::vector<std::string> rejected;
};

// Scratch requests of the reference kernels, in the order TFLM's Prepare pass makes them
// (subgraph 0's operators first, then the other subgraphs, each in operator order:
// MicroInterpreterGraph::PrepareSubgraphs).
ScratchPrediction predict_scratch(const Model& model);

}  // namespace arenascope::planner
