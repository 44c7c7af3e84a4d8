// Reading a .tflite flatbuffer into arenascope::planner::Model.
//
// The whole buffer is checked with flatbuffers::Verifier (bounds, alignment, nesting depth,
// table count) against the project's schema subset before anything is read; then every index
// the planner will follow (tensor indices in operators and subgraph inputs/outputs, opcode and
// buffer indices, called subgraphs) is range-checked here, so the planner never indexes out
// of bounds on a hostile file.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "arenascope/planner/limits.h"
#include "arenascope/planner/model.h"
#include "tflite_subset_generated.h"

namespace arenascope::planner {

namespace fb = arenascope::tflite;

namespace {

constexpr int kBuiltinIf = 118;
constexpr int kBuiltinWhile = 119;
constexpr int kBuiltinCallOnce = 129;
constexpr int kBuiltinCustom = 32;
// Operator.builtin_options (the union's value) sits in vtable slot 12 (field id 4).
constexpr flatbuffers::voffset_t kVtBuiltinOptions = 12;
constexpr const char *kOfflinePlanName = "OfflineMemoryAllocation";

[[noreturn]] void fail(const std::string &what)
{
    throw ModelError(what);
}

[[noreturn]] void plan_fail(const std::string &what)
{
    throw OfflinePlanError(what);
}

std::vector<int32_t> ints(const flatbuffers::Vector<int32_t> *v)
{
    if (!v) return {};
    return std::vector<int32_t>(v->begin(), v->end());
}

void check_tensor_refs(const std::vector<int32_t> &refs, size_t tensor_count, bool allow_omitted,
                       const std::string &where)
{
    for (int32_t t : refs) {
        if (allow_omitted && t == -1) continue;
        if (t < 0 || static_cast<size_t>(t) >= tensor_count)
            fail(where + " refers to tensor " + std::to_string(t) + ", but the subgraph has " +
                 std::to_string(tensor_count) + " tensors");
    }
}

// The subgraph indices an IF / WHILE / CALL_ONCE operator invokes, from its builtin options
// (IfOptions {then, else}, WhileOptions {cond, body}, CallOnceOptions {init}: int fields at
// vtable slots 4 and 6). The options table is verified here because the schema subset does
// not describe the union.
std::vector<int> called_subgraphs(const fb::Operator *op, int opcode, const uint8_t *data, size_t size,
                                  const std::string &where)
{
    if (opcode != kBuiltinIf && opcode != kBuiltinWhile && opcode != kBuiltinCallOnce) return {};
    flatbuffers::Verifier verifier(data, size);
    // Generated tables derive privately from flatbuffers::Table at the same address.
    const auto *table = reinterpret_cast<const flatbuffers::Table *>(op);
    if (!table->VerifyOffset(verifier, kVtBuiltinOptions)) fail(where + ": its builtin options are out of bounds");
    auto options = table->GetPointer<const flatbuffers::Table *>(kVtBuiltinOptions);
    if (!options) fail(where + " (" + builtin_name(opcode) + ") has no builtin options naming its subgraphs");
    if (!options->VerifyTableStart(verifier) || !options->VerifyField<int32_t>(verifier, 4, 4) ||
        !options->VerifyField<int32_t>(verifier, 6, 4))
        fail(where + ": its builtin options table is malformed");
    std::vector<int> result{options->GetField<int32_t>(4, 0)};
    if (opcode != kBuiltinCallOnce) result.push_back(options->GetField<int32_t>(6, 0));
    return result;
}

// The option tables the kernel rules read, by BuiltinOptions union type (schema.fbs): each
// field's width in bytes (1: byte, bool and byte enums; 4: int) and default, in field-id order.
struct OptionField {
    int width;
    int32_t fallback;
};
const std::vector<OptionField> *option_layout(int type)
{
    // Conv2DOptions: padding, stride_w, stride_h, fused_activation_function, dilation_w_factor = 1,
    // dilation_h_factor = 1, quantized_bias_type.
    static const std::vector<OptionField> conv{{1, 0}, {4, 0}, {4, 0}, {1, 0}, {4, 1}, {4, 1}, {1, 0}};
    // DepthwiseConv2DOptions: padding, stride_w, stride_h, depth_multiplier, fused_activation_function,
    // dilation_w_factor = 1, dilation_h_factor = 1.
    static const std::vector<OptionField> depthwise{{1, 0}, {4, 0}, {4, 0}, {4, 0}, {1, 0}, {4, 1}, {4, 1}};
    // Pool2DOptions: padding, stride_w, stride_h, filter_width, filter_height, fused_activation_function.
    static const std::vector<OptionField> pool{{1, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {1, 0}};
    // SVDFOptions: rank, fused_activation_function, asymmetric_quantize_inputs.
    static const std::vector<OptionField> svdf{{4, 0}, {1, 0}, {1, 0}};
    // FullyConnectedOptions: fused_activation_function, weights_format, keep_num_dims,
    // asymmetric_quantize_inputs, quantized_bias_type.
    static const std::vector<OptionField> fully_connected{{1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}};
    // TransposeConvOptions: padding, stride_w, stride_h, fused_activation_function, quantized_bias_type.
    static const std::vector<OptionField> transpose_conv{{1, 0}, {4, 0}, {4, 0}, {1, 0}, {1, 0}};
    // BatchMatMulOptions: adj_x, adj_y, asymmetric_quantize_inputs (bools).
    static const std::vector<OptionField> batch_matmul{{1, 0}, {1, 0}, {1, 0}};
    switch (type) {
    case 1: return &conv;
    case 2: return &depthwise;
    case 5: return &pool;
    case 6: return &svdf;
    case 8: return &fully_connected;
    case 49: return &transpose_conv;
    case 101: return &batch_matmul;
    default: return nullptr;
    }
}

// Operator.builtin_options read with option_layout; verified here for the same reason as
// called_subgraphs.
std::vector<int32_t> builtin_options(const fb::Operator *op, const uint8_t *data, size_t size, const std::string &where)
{
    const std::vector<OptionField> *layout = option_layout(op->builtin_options_type());
    if (!layout) return {};
    flatbuffers::Verifier verifier(data, size);
    const auto *table = reinterpret_cast<const flatbuffers::Table *>(op);
    if (!table->VerifyOffset(verifier, kVtBuiltinOptions)) fail(where + ": its builtin options are out of bounds");
    auto options = table->GetPointer<const flatbuffers::Table *>(kVtBuiltinOptions);
    if (!options) return {};
    if (!options->VerifyTableStart(verifier)) fail(where + ": its builtin options table is malformed");
    std::vector<int32_t> values;
    for (size_t k = 0; k < layout->size(); ++k) {
        const auto vt = static_cast<flatbuffers::voffset_t>(4 + 2 * k);
        const OptionField f = (*layout)[k];
        const bool ok = f.width == 1 ? options->VerifyField<int8_t>(verifier, vt, 1)
                                     : options->VerifyField<int32_t>(verifier, vt, 4);
        if (!ok) fail(where + ": its builtin options table is malformed (field " + std::to_string(k) + ")");
        values.push_back(f.width == 1 ? options->GetField<int8_t>(vt, static_cast<int8_t>(f.fallback))
                                      : options->GetField<int32_t>(vt, f.fallback));
    }
    return values;
}

// The flatbuffer checked as a model: its identifier, its size and every offset in it.
const fb::Model *verified_model(const uint8_t *data, size_t size)
{
    if (size < 8) fail("file too short to be a .tflite model (" + std::to_string(size) + " bytes)");
    if (!fb::ModelBufferHasIdentifier(data))
        fail("not a TensorFlow Lite model: file identifier is not \"TFL3\" (bytes 4..7)");
    if (size > std::numeric_limits<flatbuffers::uoffset_t>::max())
        fail("file too large for a flatbuffer (" + std::to_string(size) + " bytes)");
    // flatbuffers' default of 1,000,000 tables would reject a model of some 300,000 operators as
    // corrupt; the planner's own limits (limits.h) are checked right after, by name.
    flatbuffers::Verifier verifier(data, size, 64, kMaxTables);
    if (!fb::VerifyModelBuffer(verifier))
        fail("the flatbuffer is corrupt or truncated (flatbuffers verifier rejected it): "
             "offsets, vectors or strings point outside the file's " +
             std::to_string(size) + " bytes");
    return fb::GetModel(data);
}

// The planner's own limits (limits.h): subgraphs, and tensors and operators in all.
void check_limits(const fb::Model *fm)
{
    const auto *subgraphs = fm->subgraphs();
    if (!subgraphs || subgraphs->size() == 0) fail("the model has no subgraphs");
    if (subgraphs->size() > kMaxSubgraphs)
        fail("the model has " + std::to_string(subgraphs->size()) +
             " subgraphs, more than arenascope-plan's limit of " + std::to_string(kMaxSubgraphs) +
             " (docs/arena-budget.md, Limits and scale)");
    int64_t all_tensors = 0, all_operators = 0;
    for (const fb::SubGraph *fsg : *subgraphs) {
        all_tensors += fsg->tensors() ? fsg->tensors()->size() : 0;
        all_operators += fsg->operators() ? fsg->operators()->size() : 0;
    }
    if (all_tensors > kMaxTensors)
        fail("the model has " + std::to_string(all_tensors) + " tensors in all, more than arenascope-plan's limit of " +
             std::to_string(kMaxTensors) + " (docs/arena-budget.md, Limits and scale)");
    if (all_operators > kMaxOperators)
        fail("the model has " + std::to_string(all_operators) +
             " operators in all, more than arenascope-plan's limit of " + std::to_string(kMaxOperators) +
             " (docs/arena-budget.md, Limits and scale)");
}

// Tensor t of a subgraph (`where` names it), with its size as TFLM computes it.
Tensor read_tensor(const fb::Model *fm, const fb::Tensor *ft, size_t t, const std::string &where)
{
    const size_t buffer_count = fm->buffers() ? fm->buffers()->size() : 0;
    Tensor tensor;
    tensor.index = static_cast<int>(t);
    if (ft->name()) tensor.name = ft->name()->str();
    tensor.shape = ints(ft->shape());
    tensor.type = ft->type();
    tensor.buffer = ft->buffer();
    tensor.is_variable = ft->is_variable();
    if (const auto *q = ft->quantization())
        if (q->scale() && q->scale()->size() > 0 && q->zero_point() && q->zero_point()->size() > 0)
            tensor.quant_channels = static_cast<int>(q->scale()->size());
    if (tensor.buffer >= buffer_count && !(tensor.buffer == 0 && buffer_count == 0))
        fail(where + " refers to buffer " + std::to_string(tensor.buffer) + ", but the model has " +
             std::to_string(buffer_count) + " buffers");
    if (buffer_count) {
        const fb::Buffer *fbuf = fm->buffers()->Get(tensor.buffer);
        // TFLM points a tensor at its flatbuffer data when the buffer has bytes
        // (micro_allocator.cc, InitializeTfLiteEvalTensorFromFlatbuffer); offset > 1 marks
        // data stored after the flatbuffer (large-model format).
        tensor.has_data = (fbuf->data() && fbuf->data()->size() > 0) || fbuf->offset() > 1;
    }
    // TfLiteEvalTensorByteLength (memory_helpers.cc): element count (1 for a scalar)
    // times TfLiteTypeSizeOf.
    int64_t elements = 1;
    for (int32_t d : tensor.shape) {
        if (d < 0)
            fail(where + " ('" + tensor.name + "') has a dynamic or negative dimension (" + std::to_string(d) +
                 "); TFLM needs static shapes");
        elements *= d;
        if (elements > std::numeric_limits<int32_t>::max())
            fail(where + " ('" + tensor.name + "') has more than 2^31-1 elements; TFLM counts them in an int");
    }
    const int esize = type_size(tensor.type);
    tensor.bytes = esize ? elements * esize : -1;
    // GreedyMemoryPlanner keeps sizes and offsets in int (greedy_memory_planner.h).
    if (tensor.bytes > std::numeric_limits<int32_t>::max())
        fail(where + " ('" + tensor.name + "') needs " + std::to_string(tensor.bytes) +
             " bytes; TFLM's planner holds sizes in an int (at most 2^31-1 bytes)");
    return tensor;
}

// Operator i of a subgraph (`where` names it) of tensor_count tensors.
Operator read_operator(const fb::Model *fm, const fb::Operator *fop, size_t i, const std::string &where,
                       size_t tensor_count, const uint8_t *data, size_t size)
{
    const size_t opcode_count = fm->operator_codes() ? fm->operator_codes()->size() : 0;
    const auto *subgraphs = fm->subgraphs();
    Operator op;
    op.index = static_cast<int>(i);
    if (fop->opcode_index() >= opcode_count)
        fail(where + " uses opcode " + std::to_string(fop->opcode_index()) + ", but the model has " +
             std::to_string(opcode_count) + " operator codes");
    const fb::OperatorCode *code = fm->operator_codes()->Get(fop->opcode_index());
    // The effective code is the larger of the two fields (schema.fbs, OperatorCode comment;
    // tensorflow/lite/schema/schema_utils.cc GetBuiltinCode).
    op.opcode = std::max<int>(code->deprecated_builtin_code(), code->builtin_code());
    op.op_name = builtin_name(op.opcode);
    if (op.opcode == kBuiltinCustom && code->custom_code()) op.op_name = code->custom_code()->str();
    op.inputs = ints(fop->inputs());
    op.outputs = ints(fop->outputs());
    op.intermediates = ints(fop->intermediates());
    if (fop->custom_options()) op.custom_options.assign(fop->custom_options()->begin(), fop->custom_options()->end());
    check_tensor_refs(op.inputs, tensor_count, true, where + " (" + op.op_name + ") inputs");
    check_tensor_refs(op.outputs, tensor_count, false, where + " (" + op.op_name + ") outputs");
    check_tensor_refs(op.intermediates, tensor_count, false, where + " (" + op.op_name + ") intermediates");
    op.called_subgraphs = called_subgraphs(fop, op.opcode, data, size, where);
    op.options = builtin_options(fop, data, size, where);
    if (!op.options.empty()) op.options_type = fop->builtin_options_type();
    for (int callee : op.called_subgraphs)
        if (callee < 0 || static_cast<size_t>(callee) >= subgraphs->size())
            fail(where + " (" + op.op_name + ") calls subgraph " + std::to_string(callee) + ", but the model has " +
                 std::to_string(subgraphs->size()) + " subgraphs");
    return op;
}

// The model's offline plan (metadata 'OfflineMemoryAllocation') into model.offline_offsets, and
// its metadata names. offline_plan false: the names only.
void read_offline_plan(const fb::Model *fm, bool offline_plan, Model &model)
{
    const size_t buffer_count = fm->buffers() ? fm->buffers()->size() : 0;
    size_t total_tensors = 0;
    for (const auto &sg : model.subgraphs) total_tensors += sg.tensors.size();
    if (fm->metadata()) {
        for (const fb::Metadata *md : *fm->metadata()) {
            const std::string name = md->name() ? md->name()->str() : std::string();
            model.metadata_names.push_back(name);
            if (name != kOfflinePlanName || !offline_plan) continue;
            // micro_allocation_info.cc GetOfflinePlannedOffsets: uint32 words [version,
            // subgraph count, tensor count n, n x int32 offset (-1 = online)]. It reads every
            // entry so named, in order, without stopping: each must hold the right count, and the
            // last one's offsets are the plan.
            model.offline_offsets.clear();
            if (md->buffer() >= buffer_count) plan_fail("metadata '" + name + "' refers to a missing buffer");
            const auto *bytes = fm->buffers()->Get(md->buffer())->data();
            const size_t words = bytes ? bytes->size() / 4 : 0;
            if (words < 3) plan_fail("metadata 'OfflineMemoryAllocation' is shorter than its 3-word header");
            auto word = [&](size_t k) {
                uint32_t w;
                std::memcpy(&w, bytes->data() + 4 * k, 4);
                return flatbuffers::EndianScalar(w);
            };
            const size_t n = word(2);
            if (n != total_tensors)
                plan_fail("metadata 'OfflineMemoryAllocation' lists " + std::to_string(n) +
                          (n > 0x7fffffffu ? " (" + std::to_string(static_cast<int32_t>(word(2))) +
                                                 " as a signed word: a corrupt header)"
                                           : std::string()) +
                          " offsets but the model has " + std::to_string(total_tensors) +
                          " tensors (TFLM rejects this model)");
            if (words < 3 + n) plan_fail("metadata 'OfflineMemoryAllocation' is truncated");
            for (size_t k = 0; k < n; ++k) {
                const int32_t offset = static_cast<int32_t>(word(3 + k));
                // Only -1 (kOnlinePlannedBuffer) means "plan online"; TFLM would place any other
                // negative offset before the arena.
                if (offset < -1)
                    plan_fail("metadata 'OfflineMemoryAllocation' gives tensor " + std::to_string(k) + " the offset " +
                              std::to_string(offset) + "; offsets are bytes from the arena start, or -1 for online");
                model.offline_offsets.push_back(offset);
            }
        }
    }
}

}  // namespace

Model read_model(const uint8_t *data, size_t size, bool offline_plan)
{
    const fb::Model *fm = verified_model(data, size);

    Model model;
    model.file_bytes = size;
    check_limits(fm);
    const auto *subgraphs = fm->subgraphs();
    for (flatbuffers::uoffset_t s = 0; s < subgraphs->size(); ++s) {
        const fb::SubGraph *fsg = subgraphs->Get(s);
        const std::string sg_where = "subgraph " + std::to_string(s);
        Subgraph sg;
        if (fsg->name()) sg.name = fsg->name()->str();
        const size_t tensor_count = fsg->tensors() ? fsg->tensors()->size() : 0;
        for (size_t t = 0; t < tensor_count; ++t) {
            const fb::Tensor *ft = fsg->tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
            sg.tensors.push_back(read_tensor(fm, ft, t, sg_where + " tensor " + std::to_string(t)));
        }
        sg.inputs = ints(fsg->inputs());
        sg.outputs = ints(fsg->outputs());
        check_tensor_refs(sg.inputs, tensor_count, false, sg_where + " inputs");
        check_tensor_refs(sg.outputs, tensor_count, false, sg_where + " outputs");

        const size_t op_count = fsg->operators() ? fsg->operators()->size() : 0;
        for (size_t i = 0; i < op_count; ++i) {
            const fb::Operator *fop = fsg->operators()->Get(static_cast<flatbuffers::uoffset_t>(i));
            sg.operators.push_back(
                read_operator(fm, fop, i, sg_where + " operator " + std::to_string(i), tensor_count, data, size));
        }
        model.subgraphs.push_back(std::move(sg));
    }

    read_offline_plan(fm, offline_plan, model);
    return model;
}

std::vector<uint8_t> read_model_bytes(const std::string &path)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) fail(path + ": no such model file");
    if (!std::filesystem::is_regular_file(status)) fail(path + ": not a regular file (a directory or a device?)");
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) fail(path + ": cannot get the file size: " + ec.message());
    // A flatbuffer addresses at most 2 GiB; larger .tflite files keep weights outside it, which
    // TFLM does not read.
    if (size > 0x7fffffffULL)
        fail(path + ": " + std::to_string(size) + " bytes: larger than a flatbuffer can be (2 GiB)");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path + ": cannot open: " + std::strerror(errno));
    // flatbuffers reads scalars in place: operator new aligns the bytes for any scalar (16).
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    in.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(size));
    if (static_cast<uintmax_t>(in.gcount()) != size) fail(path + ": cannot read the whole file");
    return bytes;
}

Model read_model_file(const std::string &path)
{
    const std::vector<uint8_t> bytes = read_model_bytes(path);
    try {
        return read_model(bytes.data(), bytes.size());
    } catch (const OfflinePlanError &e) {
        throw OfflinePlanError(path + ": " + e.what());
    } catch (const ModelError &e) {
        throw ModelError(path + ": " + e.what());
    }
}

}  // namespace arenascope::planner
