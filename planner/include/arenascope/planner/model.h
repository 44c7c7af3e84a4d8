// arenascope planner: the model as the planner sees it.
//
// read_model() turns the bytes of a .tflite file (flatbuffer, identifier "TFL3") into this
// plain structure after verifying the whole buffer with flatbuffers' Verifier; a malformed,
// truncated or hostile file raises ModelError with a message that says what is wrong and where
// (subgraph, tensor, operator index). Nothing else in the planner touches flatbuffers.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace arenascope::planner {

struct ModelError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The model's own offline plan (metadata "OfflineMemoryAllocation") is unreadable: the wrong
// count, truncated, a missing buffer, an offset below -1. --write-offline-plan replaces such a
// plan; every other ModelError is the model's.
struct OfflinePlanError : ModelError {
    using ModelError::ModelError;
};

struct Tensor {
    int index = 0;  // index in its subgraph's tensor table
    std::string name;
    std::vector<int32_t> shape;  // empty = scalar (one element), as TFLM's ElementCount
    int type = 0;                // TensorType code (schema.fbs)
    uint32_t buffer = 0;         // index into the model's buffers
    bool has_data = false;       // buffer holds bytes: a constant, never planned in the arena
    bool is_variable = false;    // state tensor: TFLM puts it in the persistent tail
    // Element count x TfLiteTypeSizeOf(type), bytes; -1 if TFLM has no size for the type
    // (string, resource, variant, int4...), which makes TFLM's AllocateTensors fail.
    int64_t bytes = 0;
    // Quantization channels TFLM copies when it makes a TfLiteTensor of this tensor: the scale
    // count when both scale and zero_point are non-empty (micro_allocator.cc
    // PopulateTfLiteTensorFromFlatbuffer), else 0.
    int quant_channels = 0;
};

struct Operator {
    int index = 0;
    int opcode = 0;               // BuiltinOperator code (max of the two code fields)
    std::string op_name;          // "CONV_2D", or the custom code for CUSTOM
    std::vector<int32_t> inputs;  // -1 = omitted optional input
    std::vector<int32_t> outputs;
    std::vector<int32_t> intermediates;
    std::vector<int> called_subgraphs;    // IF then/else, WHILE cond/body, CALL_ONCE init
    std::vector<uint8_t> custom_options;  // a custom operator's options (flexbuffer), unverified
    // The builtin options' scalar fields by field id, defaults applied, for the option tables the
    // kernel rules read (reader.cpp option_layout: Conv2D, DepthwiseConv2D, Pool2D, SVDF,
    // FullyConnected, TransposeConv, BatchMatMul); empty when the operator has none of them (TFLM's Parse* then keeps its
    // zero-initialized params).
    std::vector<int32_t> options;
    int options_type = 0;  // the BuiltinOptions union type of `options` (1 Conv2DOptions, ...)
};

struct Subgraph {
    std::string name;
    std::vector<Tensor> tensors;
    std::vector<Operator> operators;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
};

struct Model {
    std::vector<Subgraph> subgraphs;
    std::vector<std::string> metadata_names;
    // "OfflineMemoryAllocation" metadata: one offset per tensor of all subgraphs together,
    // -1 = planned online. Empty when the model has no offline plan. With several entries so
    // named, the last one's, as TFLM (each is checked).
    std::vector<int32_t> offline_offsets;
    size_t file_bytes = 0;
};

// Verify and read a model held in memory. Throws ModelError (OfflinePlanError for an unreadable
// offline plan). offline_plan = false: leave the
// "OfflineMemoryAllocation" metadata unread (offline_offsets empty), for a rewrite that replaces
// a plan too broken to read.
Model read_model(const uint8_t *data, size_t size, bool offline_plan = true);
// Read a model file. Throws ModelError (also for a missing or unreadable file).
Model read_model_file(const std::string &path);
// The bytes of a model file, unverified (read_model verifies them): ModelError for a missing,
// unreadable or over-2-GiB file, naming the path.
std::vector<uint8_t> read_model_bytes(const std::string &path);

// TensorType name ("INT8", "FLOAT32", ...) or "TYPE_<n>".
std::string type_name(int type);
// TfLiteTypeSizeOf for a TensorType code (tensorflow/lite/kernels/kernel_util.cc via
// tensorflow/lite/micro/memory_helpers.cc TfLiteTypeSizeOf); 0 when TFLM has no size.
int type_size(int type);
// BuiltinOperator name or "BUILTIN_<n>".
std::string builtin_name(int code);

}  // namespace arenascope::planner
