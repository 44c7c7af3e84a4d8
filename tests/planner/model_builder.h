// Builds small synthetic .tflite models for the planner tests with flatbuffers' builder and the
// project's schema subset (the fields the planner reads; real TFLite readers accept them too).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tflite_subset_generated.h"

namespace test_models {

namespace fb = arenascope::tflite;

struct T {
    std::vector<int32_t> shape;
    int type = 9;  // INT8
    bool constant = false;
    bool variable = false;
    std::string name = {};
    // Optional, for operator tests: a constant's int32 values (its buffer; else 4 bytes of 1s)
    // and per-tensor or per-channel quantization (scale per channel, every zero point
    // zero_point).
    std::vector<int32_t> values = {};
    std::vector<float> scale = {};
    int64_t zero_point = 0;
};
// One scalar field of a builtin options table: field id, width in bytes (1 or 4), value.
struct Field {
    int id;
    int width;
    int32_t value;
};
struct Op {
    int opcode;  // BuiltinOperator
    std::vector<int32_t> inputs, outputs;
    std::vector<int32_t> subgraphs = {};  // IF then/else, WHILE cond/body, CALL_ONCE init
    // Optional, for operator tests: a custom operator's custom_code (opcode 32), its custom
    // options (a flexbuffer), and a builtin options table of union type options_type whose
    // fields are the bytes of option_bytes (bools), by field id, and the int32 fields of
    // option_ints {field id, value}.
    std::string custom_code = {};
    std::vector<uint8_t> custom_options = {};
    int options_type = 0;
    std::vector<uint8_t> option_bytes = {};
    std::vector<std::pair<int, int32_t>> option_ints = {};
    std::vector<Field> options = {};  // options_type's fields written as given, defaults included
};
struct SG {
    std::vector<T> tensors;
    std::vector<Op> ops;
    std::vector<int32_t> inputs, outputs;
};

// The Model's fields the planner does not read, for the offline-plan writer's tests: signatures
// (SignatureDef: key, input and output tensor maps {name, tensor index}, subgraph index) and
// external buffers ({id, group, offset, length}; one group "weights" when there are any).
struct TensorMapSpec {
    std::string name;
    uint32_t tensor;
};
struct SignatureSpec {
    std::string key;
    std::vector<TensorMapSpec> inputs, outputs;
    uint32_t subgraph = 0;
};
struct ExternalBufferSpec {
    uint32_t id;
    uint64_t offset, length;
};
// A metadata entry as given: its buffer index is not checked (it may name no buffer).
struct MetadataSpec {
    std::string name;
    uint32_t buffer;
};
struct ModelExtras {
    std::vector<SignatureSpec> signatures = {};
    std::vector<ExternalBufferSpec> external_buffers = {};
    // More "OfflineMemoryAllocation" entries after build()'s `offline` (each its own buffer).
    std::vector<std::vector<int32_t>> more_offline_plans = {};
    std::vector<MetadataSpec> metadata = {};  // after the plans
};

// Serialize; offline = "OfflineMemoryAllocation" offsets (empty: none).
inline std::vector<uint8_t> build(const std::vector<SG> &subgraphs, const std::vector<int32_t> &offline = {},
                                  const ModelExtras &extras = {})
{
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers{fb::CreateBuffer(b)};
    std::vector<std::pair<int, std::string>> opcodes;
    auto opcode_index = [&](int code, const std::string &custom = {}) {
        for (size_t i = 0; i < opcodes.size(); ++i)
            if (opcodes[i].first == code && opcodes[i].second == custom) return static_cast<uint32_t>(i);
        opcodes.emplace_back(code, custom);
        return static_cast<uint32_t>(opcodes.size() - 1);
    };
    std::vector<flatbuffers::Offset<fb::SubGraph>> sgs;
    for (const SG &sg : subgraphs) {
        std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
        for (const T &t : sg.tensors) {
            uint32_t buffer = 0;
            if (t.constant) {
                std::vector<uint8_t> bytes(4, 1);
                if (!t.values.empty()) {
                    const auto *raw = reinterpret_cast<const uint8_t *>(t.values.data());
                    bytes.assign(raw, raw + 4 * t.values.size());
                }
                buffers.push_back(fb::CreateBuffer(b, b.CreateVector(bytes)));
                buffer = static_cast<uint32_t>(buffers.size() - 1);
            }
            flatbuffers::Offset<fb::QuantizationParameters> quant = 0;
            if (!t.scale.empty())
                quant = fb::CreateQuantizationParameters(
                    b, 0, 0, b.CreateVector(t.scale),
                    b.CreateVector(std::vector<int64_t>(t.scale.size(), t.zero_point)));

            tensors.push_back(fb::CreateTensor(b, b.CreateVector(t.shape), static_cast<int8_t>(t.type), buffer,
                                               b.CreateString(t.name), quant, t.variable));
        }
        std::vector<flatbuffers::Offset<fb::Operator>> ops;
        for (const Op &op : sg.ops) {
            flatbuffers::uoffset_t options = 0;
            if (!op.option_bytes.empty() || !op.option_ints.empty()) {
                const auto start = b.StartTable();
                for (const auto &[field, value] : op.option_ints)
                    b.AddElement<int32_t>(static_cast<flatbuffers::voffset_t>(4 + 2 * field), value, 0);
                for (size_t f = 0; f < op.option_bytes.size(); ++f)
                    b.AddElement<uint8_t>(static_cast<flatbuffers::voffset_t>(4 + 2 * f), op.option_bytes[f], 0);
                options = b.EndTable(start);
            } else if (!op.options.empty()) {
                const auto start = b.StartTable();
                for (const Field &f : op.options) {
                    const auto vt = static_cast<flatbuffers::voffset_t>(4 + 2 * f.id);
                    if (f.width == 1)
                        b.AddElement<int8_t>(vt, static_cast<int8_t>(f.value));
                    else
                        b.AddElement<int32_t>(vt, f.value);
                }
                options = b.EndTable(start);
            }
            flatbuffers::Offset<flatbuffers::Vector<uint8_t>> custom = 0;
            if (!op.custom_options.empty()) custom = b.CreateVector(op.custom_options);
            if (!op.subgraphs.empty()) {
                const auto start = b.StartTable();
                b.AddElement<int32_t>(4, op.subgraphs[0], -1);
                if (op.subgraphs.size() > 1) b.AddElement<int32_t>(6, op.subgraphs[1], -1);
                options = b.EndTable(start);
            }
            auto in = b.CreateVector(op.inputs);
            auto out = b.CreateVector(op.outputs);
            const auto start = b.StartTable();
            b.AddElement<uint32_t>(4, opcode_index(op.opcode, op.custom_code), 0);
            b.AddOffset(6, in);
            b.AddOffset(8, out);
            if (options) {
                b.AddElement<uint8_t>(10, static_cast<uint8_t>(op.options_type ? op.options_type : 1), 0);
                b.AddOffset(12, flatbuffers::Offset<void>(options));
            }
            if (!custom.IsNull()) b.AddOffset(14, custom);
            ops.push_back(flatbuffers::Offset<fb::Operator>(b.EndTable(start)));
        }
        sgs.push_back(fb::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(sg.inputs),
                                         b.CreateVector(sg.outputs), b.CreateVector(ops), b.CreateString("sg")));
    }
    std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
    for (const auto &[c, custom] : opcodes)
        codes.push_back(fb::CreateOperatorCode(b, static_cast<int8_t>(c < 127 ? c : 127),
                                               custom.empty() ? 0 : b.CreateString(custom), 1, c));
    std::vector<flatbuffers::Offset<fb::Metadata>> metadata;
    std::vector<std::vector<int32_t>> plans;
    if (!offline.empty()) plans.push_back(offline);
    plans.insert(plans.end(), extras.more_offline_plans.begin(), extras.more_offline_plans.end());
    for (const std::vector<int32_t> &plan : plans) {
        std::vector<int32_t> words{1, static_cast<int32_t>(subgraphs.size()), static_cast<int32_t>(plan.size())};
        words.insert(words.end(), plan.begin(), plan.end());
        const auto *raw = reinterpret_cast<const uint8_t *>(words.data());
        buffers.push_back(fb::CreateBuffer(b, b.CreateVector(raw, words.size() * 4)));
        metadata.push_back(fb::CreateMetadata(b, b.CreateString("OfflineMemoryAllocation"),
                                              static_cast<uint32_t>(buffers.size() - 1)));
    }
    for (const MetadataSpec &m : extras.metadata)
        metadata.push_back(fb::CreateMetadata(b, b.CreateString(m.name), m.buffer));
    std::vector<flatbuffers::Offset<fb::SignatureDef>> signatures;
    auto tensor_maps = [&](const std::vector<TensorMapSpec> &maps) {
        std::vector<flatbuffers::Offset<fb::TensorMap>> out;
        for (const TensorMapSpec &m : maps) out.push_back(fb::CreateTensorMap(b, b.CreateString(m.name), m.tensor));
        return b.CreateVector(out);
    };
    for (const SignatureSpec &sig : extras.signatures) {
        const auto in = tensor_maps(sig.inputs), out = tensor_maps(sig.outputs);
        signatures.push_back(fb::CreateSignatureDef(b, in, out, b.CreateString(sig.key), sig.subgraph));
    }
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::ExternalBufferGroup>>> groups = 0;
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::ExternalBuffer>>> external = 0;
    if (!extras.external_buffers.empty()) {
        std::vector<flatbuffers::Offset<fb::ExternalBuffer>> list;
        for (const ExternalBufferSpec &e : extras.external_buffers)
            list.push_back(fb::CreateExternalBuffer(b, e.id, 0, e.offset, e.length));
        groups = b.CreateVector(std::vector<flatbuffers::Offset<fb::ExternalBufferGroup>>{
            fb::CreateExternalBufferGroup(b, b.CreateString("weights"))});
        external = b.CreateVector(list);
    }
    auto model = fb::CreateModel(b, 3, b.CreateVector(codes), b.CreateVector(sgs), b.CreateString("test"),
                                 b.CreateVector(buffers), 0, b.CreateVector(metadata),
                                 signatures.empty() ? 0 : b.CreateVector(signatures), groups, external);
    fb::FinishModelBuffer(b, model);
    return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

// Writes a model's bytes to `path`; false when the file cannot be written whole.
inline bool save(const std::string &path, const std::vector<uint8_t> &bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out.flush());
}

}  // namespace test_models
