// Scratch-buffer requests of TFLM's reference kernels (see kernels.h).
#include "arenascope/planner/kernels.h"

#include <flatbuffers/flexbuffers.h>

namespace arenascope::planner {

namespace {

// The kernels whose Prepare calls RequestScratchBufferInArena, from `git grep
// RequestScratchBufferInArena` over tensorflow/lite/micro/kernels/*.cc and signal/micro/kernels
// (tflite-micro 90b983c2, 2026-08-20; optimized variants excluded). Every other TFLM kernel
// requests none. Those listed here and not modelled below make the plan approximate.
bool requests_scratch_unmodelled(const std::string& op) {
  static const char* kUnmodelled[] = {
      "ADD_N",                                                // add_n.cc
      "MIRROR_PAD",                                           // mirror_pad.cc
      "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD",  // reduce_common.cc
      "TRANSPOSE_CONV",                                       // transpose_conv.cc
      "TFLite_Detection_PostProcess",                         // detection_postprocess.cc
      "ethos-u",                                              // ethos_u/ethosu.cc
  };
  for (const char* n : kUnmodelled)
    if (op == n) return true;
  return false;
}

constexpr int kTypeInt4 = 17;
constexpr int kBuiltinCustom = 32;

constexpr int kTypeInt8 = 9;

const Tensor* input(const Subgraph& sg, const Operator& op, size_t k) {
  if (k >= op.inputs.size() || op.inputs[k] < 0) return nullptr;
  return &sg.tensors[op.inputs[k]];
}

// SVDF (kernels/svdf_common.cc PrepareSvdf): scratch_tensor_index = batch x num_filters x
// 4 bytes (int32 for int8, float for float32); int8 also scratch_output_tensor_index =
// batch x num_units x int32. batch = input dim 0, num_filters = weights_feature dim 0,
// num_units = num_filters / rank = output dim 1.
bool svdf(const Subgraph& sg, const Operator& op, int s, std::vector<ScratchRequest>& out) {
  const Tensor* in = input(sg, op, 0);
  const Tensor* wf = input(sg, op, 1);
  if (!in || !wf || in->shape.size() != 2 || wf->shape.size() != 2 || op.outputs.size() != 1) return false;
  const Tensor& o = sg.tensors[op.outputs[0]];
  if (o.shape.size() != 2) return false;
  const int64_t batch = in->shape[0], filters = wf->shape[0], units = o.shape[1];
  out.push_back({s, op.index, batch * filters * 4, "SVDF scratch"});
  if (in->type == kTypeInt8) out.push_back({s, op.index, batch * units * 4, "SVDF output scratch"});
  return true;
}

// UNIDIRECTIONAL_SEQUENCE_LSTM (kernels/unidirectional_sequence_lstm.cc Prepare): four
// buffers of batch x n_cell x sizeof(cell state type); cell state = input 19 [batch, n_cell].
bool lstm(const Subgraph& sg, const Operator& op, int s, std::vector<ScratchRequest>& out) {
  const Tensor* cell = input(sg, op, 19);
  if (!cell || cell->shape.size() != 2 || type_size(cell->type) == 0) return false;
  const int64_t bytes = int64_t{cell->shape[0]} * cell->shape[1] * type_size(cell->type);
  for (int k = 0; k < 4; ++k) out.push_back({s, op.index, bytes, "LSTM gate scratch"});
  return true;
}

// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED (conv_common.cc, depthwise_conv_common.cc,
// fully_connected.cc): an INT4 filter is unpacked into a scratch buffer of one byte per
// filter element (filter_buffer_index).
void int4_filter(const Subgraph& sg, const Operator& op, int s, std::vector<ScratchRequest>& out) {
  const Tensor* filter = input(sg, op, 1);
  if (!filter || filter->type != kTypeInt4) return;
  int64_t elements = 1;
  for (int32_t d : filter->shape) elements *= d;
  out.push_back({s, op.index, elements, op.op_name + " INT4 filter"});
}

// conv_common.cc, depthwise_conv_common.cc, fully_connected.cc Prepare: "Hybrid models are
// not supported on TFLite Micro." (float32 input with an int8/int4 filter).
void hybrid(const Subgraph& sg, const Operator& op, int s, std::vector<std::string>& out) {
  if (op.op_name != "CONV_2D" && op.op_name != "DEPTHWISE_CONV_2D" && op.op_name != "FULLY_CONNECTED") return;
  const Tensor* in = input(sg, op, 0);
  const Tensor* filter = input(sg, op, 1);
  if (in && filter && in->type == 0 && (filter->type == kTypeInt8 || filter->type == kTypeInt4))
    out.push_back("subgraph " + std::to_string(s) + " operator " + std::to_string(op.index) + " (" + op.op_name +
                  ") is hybrid (FLOAT32 input, " + type_name(filter->type) +
                  " filter): \"Hybrid models are not supported on TFLite Micro\"; convert with full integer quantization");
}

// SignalRfft (signal/micro/kernels/rfft.cc RfftInit / RfftPrepare): fft_length x sizeof(T),
// T the input type (int16, int32 or float32). fft_length is element 1 of the flexbuffer map in
// the custom options (FlexbufferWrapper::ElementAsInt32(kFftLengthIndex = 1): the map's values
// in key order, 'T' then 'fft_length').
bool rfft(const Subgraph& sg, const Operator& op, int s, std::vector<ScratchRequest>& out) {
  const Tensor* in = input(sg, op, 0);
  const auto& opts = op.custom_options;
  if (!in || type_size(in->type) == 0 || opts.empty()) return false;
  std::vector<uint8_t> reuse;
  if (!flexbuffers::VerifyBuffer(opts.data(), opts.size(), &reuse)) return false;
  const flexbuffers::Reference root = flexbuffers::GetRoot(opts.data(), opts.size());
  if (!root.IsMap()) return false;
  const flexbuffers::Vector values = root.AsMap().Values();
  if (values.size() < 2 || !values[1].IsIntOrUint()) return false;
  const int64_t fft_length = values[1].AsInt64();
  if (fft_length <= 0 || fft_length > (int64_t{1} << 24)) return false;
  out.push_back({s, op.index, fft_length * type_size(in->type), "SignalRfft work area (fft_length x input type)"});
  return true;
}

}  // namespace

ScratchPrediction predict_scratch(const Model& model) {
  ScratchPrediction p;
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    const Subgraph& sg = model.subgraphs[s];
    for (const Operator& op : sg.operators) {
      hybrid(sg, op, static_cast<int>(s), p.rejected);
      bool modelled = true;
      if (op.op_name == "SVDF") modelled = svdf(sg, op, static_cast<int>(s), p.requests);
      else if (op.op_name == "UNIDIRECTIONAL_SEQUENCE_LSTM") modelled = lstm(sg, op, static_cast<int>(s), p.requests);
      else if (op.op_name == "CONV_2D" || op.op_name == "DEPTHWISE_CONV_2D" || op.op_name == "FULLY_CONNECTED")
        int4_filter(sg, op, static_cast<int>(s), p.requests);
      else if (op.op_name == "SignalRfft") modelled = rfft(sg, op, static_cast<int>(s), p.requests);
      else if (requests_scratch_unmodelled(op.op_name)) modelled = false;
      // A custom operator that is not one of TFLM's signal kernels: its source is unknown.
      else if (op.opcode == kBuiltinCustom && op.op_name.rfind("Signal", 0) != 0) modelled = false;
      if (!modelled)
        p.unmodelled.push_back("subgraph " + std::to_string(s) + " operator " + std::to_string(op.index) + " (" +
                               op.op_name + ")");
    }
  }
  return p;
}

}  // namespace arenascope::planner
