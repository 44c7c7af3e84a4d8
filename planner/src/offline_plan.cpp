// Writing an offline plan into a .tflite without rebuilding it (offline_plan.h).
//
// A flatbuffer is a root offset and a file identifier ("TFL3", bytes 4..7) followed by objects
// that refer to each other by offsets relative to where the offset is stored. A block inserted
// right after the identifier moves every object by the same amount, so every offset among them
// stays right and no byte of them changes; only the root offset does. The block ends with a copy
// of the old file's first 8 bytes, so the whole old file lies unchanged at the block's length
// from the start: an offset among old objects that reaches into those 8 bytes (a table's vtable
// there, which no converter writes but a hostile file may) still finds the same bytes. The block
// holds a new Model table that copies the old one's fields, pointing forward to the old objects,
// except `buffers` (the old ones plus the plan's) and `metadata` (the old entries but any offline
// plan, plus the new one). The old Model table and its two vectors stay, unreferenced. The block
// is a multiple of 64 bytes, so every object keeps its alignment (Buffer.data is force_align 16).
// Buffer.offset (the data of a buffer kept after the flatbuffer, in files over 2 GiB) counts from
// the file's start, the one absolute position in the format: models that use it are refused.
#include <cstring>
#include <stdexcept>

#include "arenascope/planner/offline_plan.h"
#include "tflite_subset_generated.h"

namespace arenascope::planner {

namespace fb = arenascope::tflite;

namespace {

constexpr const char *kName = "OfflineMemoryAllocation";
constexpr uint32_t kFormatVersion = 1;
// Model's fields (schema.fbs): 0 version (uint), then offsets: 1 operator_codes, 2 subgraphs,
// 3 description, 4 buffers, 5 metadata_buffer, 6 metadata, 7 signature_defs, copied into the new
// Model; 8 external_buffer_groups and 9 external_buffers, refused (their data sits at offsets from
// the file's start, which the block moves). The project's schema declares all ten, so the verifier
// has checked each before it is copied; the static_asserts tie these numbers to it.
constexpr int kFieldVersion = 0, kFieldBuffers = 4, kFieldMetadata = 6, kModelFields = 8, kKnownFields = 10;

constexpr flatbuffers::voffset_t slot(int field)
{
    return static_cast<flatbuffers::voffset_t>(4 + 2 * field);
}
static_assert(fb::Model::VT_VERSION == slot(kFieldVersion) && fb::Model::VT_BUFFERS == slot(kFieldBuffers) &&
                  fb::Model::VT_METADATA == slot(kFieldMetadata) &&
                  fb::Model::VT_SIGNATURE_DEFS == slot(kModelFields - 1) &&
                  fb::Model::VT_EXTERNAL_BUFFERS == slot(kKnownFields - 1),
              "the Model's field ids are those of planner/schema/tflite_subset.fbs");
constexpr size_t kInsertAt = 8;  // after the root offset and the identifier
constexpr size_t kBlockAlign = 64;

size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

// The block under construction: bytes at positions relative to its start, which is kInsertAt in
// the file; alignments are of the file position.
struct Block {
    std::vector<uint8_t> bytes;
    size_t reserve(size_t n, size_t align)
    {
        const size_t at = align_up(kInsertAt + bytes.size(), align) - kInsertAt;
        bytes.resize(at + n, 0);
        return at;
    }
    void u16(size_t at, uint16_t v) { std::memcpy(&bytes[at], &v, 2); }
    void u32(size_t at, uint32_t v) { std::memcpy(&bytes[at], &v, 4); }
};

// The model as the planner and TFLM see it, less its offline plan, is the same in both. The
// header copy at the block's end keeps every old object's bytes and offsets; this check stays as
// the last word on the written model.
bool same_model(const Model &a, const Model &b)
{
    if (a.subgraphs.size() != b.subgraphs.size()) return false;
    for (size_t s = 0; s < a.subgraphs.size(); ++s) {
        const Subgraph &x = a.subgraphs[s], &y = b.subgraphs[s];
        if (x.inputs != y.inputs || x.outputs != y.outputs || x.tensors.size() != y.tensors.size() ||
            x.operators.size() != y.operators.size())
            return false;
        for (size_t t = 0; t < x.tensors.size(); ++t) {
            const Tensor &p = x.tensors[t], &q = y.tensors[t];
            if (p.name != q.name || p.shape != q.shape || p.type != q.type || p.buffer != q.buffer ||
                p.has_data != q.has_data || p.is_variable != q.is_variable || p.bytes != q.bytes ||
                p.quant_channels != q.quant_channels)
                return false;
        }
        for (size_t o = 0; o < x.operators.size(); ++o) {
            const Operator &p = x.operators[o], &q = y.operators[o];
            if (p.opcode != q.opcode || p.op_name != q.op_name || p.inputs != q.inputs || p.outputs != q.outputs ||
                p.intermediates != q.intermediates || p.called_subgraphs != q.called_subgraphs ||
                p.custom_options != q.custom_options || p.options != q.options || p.options_type != q.options_type)
                return false;
        }
    }
    return true;
}

}  // namespace

std::vector<int32_t> offline_offsets(const Model &model, const Lifetimes &lifetimes, const Plan &plan)
{
    std::vector<size_t> first_of(model.subgraphs.size() + 1, 0);
    for (size_t s = 0; s < model.subgraphs.size(); ++s)
        first_of[s + 1] = first_of[s] + model.subgraphs[s].tensors.size();
    std::vector<int32_t> out(first_of.back(), -1);
    for (const Buffer &b : lifetimes.buffers)
        if (b.tensor >= 0) out[first_of[b.subgraph] + b.tensor] = static_cast<int32_t>(plan.offsets[b.id]);
    return out;
}

std::vector<uint8_t> with_offline_plan(const uint8_t *data, size_t size, const std::vector<int32_t> &offsets)
{
    // Verifies every object the copy points to; the old plan, replaced, need not be readable.
    const Model model = read_model(data, size, false);
    size_t tensors = 0;
    for (const Subgraph &sg : model.subgraphs) tensors += sg.tensors.size();
    if (offsets.size() != tensors)
        throw ModelError("an offline plan of " + std::to_string(offsets.size()) + " offsets for a model of " +
                         std::to_string(tensors) + " tensors");

    const fb::Model *fm = fb::GetModel(data);
    const auto *table = reinterpret_cast<const flatbuffers::Table *>(fm);
    const uint8_t *vtable = table->GetVTable();
    const int fields = (flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable) - 4) / 2;
    for (int f = kModelFields; f < fields; ++f) {
        if (!flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable + slot(f))) continue;
        if (f < kKnownFields)
            throw ModelError(std::string("it keeps tensor data outside the flatbuffer (Model.") +
                             (f == kKnownFields - 1 ? "external_buffers" : "external_buffer_groups") +
                             "), at offsets from the file's start that the offline plan's block would move: "
                             "not rewritten");
        throw ModelError("its Model table has field " + std::to_string(f) +
                         ", newer than the TFLite schema arenascope knows: not rewritten");
    }
    auto where = [&](const void *p) { return static_cast<size_t>(static_cast<const uint8_t *>(p) - data); };

    const auto *old_buffers = fm->buffers();
    const uint32_t buffer_count = old_buffers ? old_buffers->size() : 0;
    // Buffer 0 is the empty sentinel every tensor without data refers to (schema.fbs, Model.buffers);
    // a model with no buffers at all gets one, or its tensors would refer to the plan's words.
    const uint32_t sentinel = buffer_count == 0 ? 1 : 0;
    const uint32_t plan_buffer = buffer_count + sentinel;
    // Buffer.offset > 1: the data after the flatbuffer, counted from the file's start (files over
    // 2 GiB; 1 means none). TFLM 90b983c2 does not read it (micro/ uses Buffer.data only), and the
    // block would move it: such a model is refused, not patched.
    for (uint32_t i = 0; i < buffer_count; ++i)
        if (reinterpret_cast<const flatbuffers::Table *>(old_buffers->Get(i))->GetField<uint64_t>(slot(1), 0) > 1)
            throw ModelError("buffer " + std::to_string(i) +
                             " keeps its data outside the flatbuffer (Buffer.offset), which TFLM does not read: "
                             "not rewritten");
    // The plan's words become buffer `plan_buffer` (below): a metadata entry that refers to a
    // buffer past the old list would then refer to them. TFLM reads only its offline plan's entry,
    // but other readers (the TFLite runtime's min_runtime_version) read theirs.
    auto check_metadata_buffer = [&](const std::string &what, uint32_t index) {
        if (index >= buffer_count)
            throw ModelError(what + " refers to buffer " + std::to_string(index) + ", but the model has " +
                             std::to_string(buffer_count) +
                             " buffers; the offline plan's buffer would take that "
                             "index: not rewritten");
    };
    std::vector<size_t> kept_metadata;
    if (fm->metadata())
        for (const fb::Metadata *md : *fm->metadata())
            if (!md->name() || md->name()->str() != kName) {
                check_metadata_buffer("metadata '" + (md->name() ? md->name()->str() : std::string()) + "'",
                                      md->buffer());
                kept_metadata.push_back(where(md));
            }
    if (fm->metadata_buffer())
        for (const int32_t index : *fm->metadata_buffer())
            if (index >= 0) check_metadata_buffer("Model.metadata_buffer", static_cast<uint32_t>(index));

    // Layout: Model vtable and table; buffers vector; metadata vector; the plan's Buffer; the new
    // Metadata; its name; the plan's words (16-byte aligned). Offsets point forward only.
    Block blk;
    const size_t model_vt = blk.reserve(2 * (2 + kModelFields), 2);
    const size_t model_at = blk.reserve(4 + 4 * kModelFields, 4);
    const size_t buffers_at = blk.reserve(4 + 4 * (plan_buffer + 1), 4);
    const size_t empty_vt = blk.reserve(4, 2), empty_at = blk.reserve(4, 4);  // the sentinel, if needed
    const size_t metadata_at = blk.reserve(4 + 4 * (kept_metadata.size() + 1), 4);
    const size_t buffer_vt = blk.reserve(6, 2), buffer_at = blk.reserve(8, 4);
    const size_t meta_vt = blk.reserve(8, 2), meta_at = blk.reserve(12, 4);
    const size_t name_at = blk.reserve(4 + std::strlen(kName) + 1, 4);
    const size_t words = 3 + offsets.size();
    const size_t plan_at = blk.reserve(16 + 4 * words, 16) + 16;  // the words start 16-byte aligned
    // The old file's first 8 bytes end the block, at the file position `shift`: where the old
    // file's byte 0 goes.
    blk.bytes.resize(align_up(blk.bytes.size() + kInsertAt, kBlockAlign), 0);
    const size_t shift = blk.bytes.size();
    std::memcpy(&blk.bytes[shift - kInsertAt], data, kInsertAt);
    if (size + shift > 0x7fffffffULL)
        throw ModelError("the model with its offline plan would exceed a flatbuffer's 2 GiB");

    // Absolute positions in the new file: block offsets from kInsertAt, old objects + shift.
    auto ref = [&](size_t at, size_t target_abs) {  // a uoffset at block offset `at`
        blk.u32(at, static_cast<uint32_t>(target_abs - (kInsertAt + at)));
    };
    auto old_abs = [&](size_t old_pos) { return old_pos + shift; };

    // The Model: every field of the old one, in the same slots.
    blk.u16(model_vt, static_cast<uint16_t>(2 * (2 + kModelFields)));
    blk.u16(model_vt + 2, static_cast<uint16_t>(4 + 4 * kModelFields));
    blk.u32(model_at, static_cast<uint32_t>(model_at - model_vt));  // soffset: the vtable is before
    for (int f = 0; f < kModelFields; ++f) {
        const size_t field_at = model_at + 4 + 4 * f;
        blk.u16(model_vt + 4 + 2 * f, static_cast<uint16_t>(4 + 4 * f));
        if (f == kFieldVersion)
            blk.u32(field_at, table->GetField<uint32_t>(slot(f), 0));
        else if (f == kFieldBuffers)
            ref(field_at, kInsertAt + buffers_at);
        else if (f == kFieldMetadata)
            ref(field_at, kInsertAt + metadata_at);
        else if (const uint8_t *target = table->GetPointer<const uint8_t *>(slot(f)))
            ref(field_at, old_abs(where(target)));
        else
            blk.u16(model_vt + 4 + 2 * f, 0);  // absent in the old Model: absent here
    }

    blk.u32(buffers_at, plan_buffer + 1);
    if (sentinel) {
        blk.u16(empty_vt, 4), blk.u16(empty_vt + 2, 4);  // Buffer {}: no field
        blk.u32(empty_at, static_cast<uint32_t>(empty_at - empty_vt));
        ref(buffers_at + 4, kInsertAt + empty_at);
    }
    for (uint32_t i = 0; i < buffer_count; ++i) ref(buffers_at + 4 + 4 * i, old_abs(where(old_buffers->Get(i))));
    ref(buffers_at + 4 + 4 * plan_buffer, kInsertAt + buffer_at);

    blk.u32(metadata_at, static_cast<uint32_t>(kept_metadata.size() + 1));
    for (size_t i = 0; i < kept_metadata.size(); ++i) ref(metadata_at + 4 + 4 * i, old_abs(kept_metadata[i]));
    ref(metadata_at + 4 + 4 * kept_metadata.size(), kInsertAt + meta_at);

    blk.u16(buffer_vt, 6), blk.u16(buffer_vt + 2, 8), blk.u16(buffer_vt + 4, 4);  // Buffer {data}
    blk.u32(buffer_at, static_cast<uint32_t>(buffer_at - buffer_vt));
    ref(buffer_at + 4, kInsertAt + plan_at - 4);

    blk.u16(meta_vt, 8), blk.u16(meta_vt + 2, 12), blk.u16(meta_vt + 4, 4), blk.u16(meta_vt + 6, 8);
    blk.u32(meta_at, static_cast<uint32_t>(meta_at - meta_vt));  // Metadata {name, buffer}
    ref(meta_at + 4, kInsertAt + name_at);
    blk.u32(meta_at + 8, plan_buffer);

    blk.u32(name_at, static_cast<uint32_t>(std::strlen(kName)));
    std::memcpy(&blk.bytes[name_at + 4], kName, std::strlen(kName));

    blk.u32(plan_at - 4, static_cast<uint32_t>(4 * words));
    blk.u32(plan_at, kFormatVersion);
    blk.u32(plan_at + 4, static_cast<uint32_t>(model.subgraphs.size()));
    blk.u32(plan_at + 8, static_cast<uint32_t>(offsets.size()));
    for (size_t i = 0; i < offsets.size(); ++i) blk.u32(plan_at + 12 + 4 * i, static_cast<uint32_t>(offsets[i]));

    std::vector<uint8_t> out;
    out.reserve(size + shift);
    out.insert(out.end(), data, data + kInsertAt);
    out.insert(out.end(), blk.bytes.begin(), blk.bytes.end());
    out.insert(out.end(), data + kInsertAt, data + size);
    const uint32_t root = static_cast<uint32_t>(kInsertAt + model_at);
    std::memcpy(out.data(), &root, 4);
    // What TFLM will read: it must verify, with the verifier that checked the old, and hold the
    // same model.
    Model back;
    try {
        back = read_model(out.data(), out.size(), false);
    } catch (const ModelError &e) {
        throw ModelError(std::string("the model with the offline plan does not verify (") + e.what() +
                         "): nothing written");
    }
    if (!same_model(model, back))
        throw std::logic_error("arenascope-plan bug: the model with the offline plan does not read back as the "
                               "same model");
    return out;
}

}  // namespace arenascope::planner
