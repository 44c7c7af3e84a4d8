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
#include <functional>
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

namespace {
// A Model table with fields past the ones the rewrite copies cannot be rewritten.
void check_model_fields(const flatbuffers::Table *table)
{
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
}

// Buffer.offset > 1: the data after the flatbuffer, counted from the file's start (files over
// 2 GiB; 1 means none). TFLM 90b983c2 does not read it (micro/ uses Buffer.data only), and the
// block would move it: such a model is refused, not patched.
void check_buffers(const fb::Model *fm)
{
    const auto *old_buffers = fm->buffers();
    const uint32_t buffer_count = old_buffers ? old_buffers->size() : 0;
    for (uint32_t i = 0; i < buffer_count; ++i)
        if (reinterpret_cast<const flatbuffers::Table *>(old_buffers->Get(i))->GetField<uint64_t>(slot(1), 0) > 1)
            throw ModelError("buffer " + std::to_string(i) +
                             " keeps its data outside the flatbuffer (Buffer.offset), which TFLM does not read: "
                             "not rewritten");
}

// The positions in the old file of the metadata entries kept (every one but an old offline plan).
// The plan's words become the buffer after the old list: a metadata entry that refers to a buffer
// past it would then refer to them. TFLM reads only its offline plan's entry, but other readers
// (the TFLite runtime's min_runtime_version) read theirs.
std::vector<size_t> kept_metadata_of(const fb::Model *fm, const uint8_t *data)
{
    const uint32_t buffer_count = fm->buffers() ? fm->buffers()->size() : 0;
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
                kept_metadata.push_back(static_cast<size_t>(reinterpret_cast<const uint8_t *>(md) - data));
            }
    if (fm->metadata_buffer())
        for (const int32_t index : *fm->metadata_buffer())
            if (index >= 0) check_metadata_buffer("Model.metadata_buffer", static_cast<uint32_t>(index));
    return kept_metadata;
}

// Where each object of the block goes (block offsets). Layout: Model vtable and table; buffers
// vector; metadata vector; the plan's Buffer; the new Metadata; its name; the plan's words
// (16-byte aligned). Offsets point forward only.
struct Layout {
    size_t model_vt, model, buffers, empty_vt, empty, metadata, buffer_vt, buffer, meta_vt, meta, name, words, plan;
};

Layout reserve_layout(Block &blk, uint32_t plan_buffer, size_t kept_metadata, size_t offsets)
{
    Layout at{};
    at.model_vt = blk.reserve(2 * (2 + kModelFields), 2);
    at.model = blk.reserve(4 + 4 * kModelFields, 4);
    at.buffers = blk.reserve(4 + 4 * (plan_buffer + 1), 4);
    at.empty_vt = blk.reserve(4, 2), at.empty = blk.reserve(4, 4);  // the sentinel, if needed
    at.metadata = blk.reserve(4 + 4 * (kept_metadata + 1), 4);
    at.buffer_vt = blk.reserve(6, 2), at.buffer = blk.reserve(8, 4);
    at.meta_vt = blk.reserve(8, 2), at.meta = blk.reserve(12, 4);
    at.name = blk.reserve(4 + std::strlen(kName) + 1, 4);
    at.words = 3 + offsets;
    at.plan = blk.reserve(16 + 4 * at.words, 16) + 16;  // the words start 16-byte aligned
    return at;
}

// A uoffset at block offset `at` to the absolute position `target_abs` in the new file (block
// offsets count from kInsertAt, old objects from their old position + the block's size).
void ref(Block &blk, size_t at, size_t target_abs)
{
    blk.u32(at, static_cast<uint32_t>(target_abs - (kInsertAt + at)));
}

// The Model: every field of the old one, in the same slots; old_abs(p): where the old object at p
// is in the new file.
void write_model_table(Block &blk, const Layout &at, const flatbuffers::Table *table,
                       const std::function<size_t(const uint8_t *)> &old_abs)
{
    blk.u16(at.model_vt, static_cast<uint16_t>(2 * (2 + kModelFields)));
    blk.u16(at.model_vt + 2, static_cast<uint16_t>(4 + 4 * kModelFields));
    blk.u32(at.model, static_cast<uint32_t>(at.model - at.model_vt));  // soffset: the vtable is before
    for (int f = 0; f < kModelFields; ++f) {
        const size_t field_at = at.model + 4 + 4 * f;
        blk.u16(at.model_vt + 4 + 2 * f, static_cast<uint16_t>(4 + 4 * f));
        if (f == kFieldVersion)
            blk.u32(field_at, table->GetField<uint32_t>(slot(f), 0));
        else if (f == kFieldBuffers)
            ref(blk, field_at, kInsertAt + at.buffers);
        else if (f == kFieldMetadata)
            ref(blk, field_at, kInsertAt + at.metadata);
        else if (const uint8_t *target = table->GetPointer<const uint8_t *>(slot(f)))
            ref(blk, field_at, old_abs(target));
        else
            blk.u16(at.model_vt + 4 + 2 * f, 0);  // absent in the old Model: absent here
    }
}

// The plan's Buffer {data}, its Metadata {name, buffer}, the name and the plan's words.
void write_plan_objects(Block &blk, const Layout &at, uint32_t plan_buffer, uint32_t subgraphs,
                        const std::vector<int32_t> &offsets)
{
    blk.u16(at.buffer_vt, 6), blk.u16(at.buffer_vt + 2, 8), blk.u16(at.buffer_vt + 4, 4);  // Buffer {data}
    blk.u32(at.buffer, static_cast<uint32_t>(at.buffer - at.buffer_vt));
    ref(blk, at.buffer + 4, kInsertAt + at.plan - 4);

    blk.u16(at.meta_vt, 8), blk.u16(at.meta_vt + 2, 12), blk.u16(at.meta_vt + 4, 4), blk.u16(at.meta_vt + 6, 8);
    blk.u32(at.meta, static_cast<uint32_t>(at.meta - at.meta_vt));  // Metadata {name, buffer}
    ref(blk, at.meta + 4, kInsertAt + at.name);
    blk.u32(at.meta + 8, plan_buffer);

    blk.u32(at.name, static_cast<uint32_t>(std::strlen(kName)));
    std::memcpy(&blk.bytes[at.name + 4], kName, std::strlen(kName));

    blk.u32(at.plan - 4, static_cast<uint32_t>(4 * at.words));
    blk.u32(at.plan, kFormatVersion);
    blk.u32(at.plan + 4, subgraphs);
    blk.u32(at.plan + 8, static_cast<uint32_t>(offsets.size()));
    for (size_t i = 0; i < offsets.size(); ++i) blk.u32(at.plan + 12 + 4 * i, static_cast<uint32_t>(offsets[i]));
}

// What TFLM will read: it must verify, with the verifier that checked the old, and hold the same
// model.
void check_read_back(const Model &model, const std::vector<uint8_t> &out)
{
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
}
}  // namespace

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
    check_model_fields(table);
    auto where = [&](const void *p) { return static_cast<size_t>(static_cast<const uint8_t *>(p) - data); };

    const auto *old_buffers = fm->buffers();
    const uint32_t buffer_count = old_buffers ? old_buffers->size() : 0;
    // Buffer 0 is the empty sentinel every tensor without data refers to (schema.fbs, Model.buffers);
    // a model with no buffers at all gets one, or its tensors would refer to the plan's words.
    const uint32_t sentinel = buffer_count == 0 ? 1 : 0;
    const uint32_t plan_buffer = buffer_count + sentinel;
    check_buffers(fm);
    const std::vector<size_t> kept_metadata = kept_metadata_of(fm, data);

    Block blk;
    const Layout at = reserve_layout(blk, plan_buffer, kept_metadata.size(), offsets.size());
    // The old file's first 8 bytes end the block, at the file position `shift`: where the old
    // file's byte 0 goes.
    blk.bytes.resize(align_up(blk.bytes.size() + kInsertAt, kBlockAlign), 0);
    const size_t shift = blk.bytes.size();
    std::memcpy(&blk.bytes[shift - kInsertAt], data, kInsertAt);
    if (size + shift > 0x7fffffffULL)
        throw ModelError("the model with its offline plan would exceed a flatbuffer's 2 GiB");
    auto old_abs = [&](size_t old_pos) { return old_pos + shift; };

    write_model_table(blk, at, table, [&](const uint8_t *target) { return old_abs(where(target)); });

    blk.u32(at.buffers, plan_buffer + 1);
    if (sentinel) {
        blk.u16(at.empty_vt, 4), blk.u16(at.empty_vt + 2, 4);  // Buffer {}: no field
        blk.u32(at.empty, static_cast<uint32_t>(at.empty - at.empty_vt));
        ref(blk, at.buffers + 4, kInsertAt + at.empty);
    }
    for (uint32_t i = 0; i < buffer_count; ++i) ref(blk, at.buffers + 4 + 4 * i, old_abs(where(old_buffers->Get(i))));
    ref(blk, at.buffers + 4 + 4 * plan_buffer, kInsertAt + at.buffer);

    blk.u32(at.metadata, static_cast<uint32_t>(kept_metadata.size() + 1));
    for (size_t i = 0; i < kept_metadata.size(); ++i) ref(blk, at.metadata + 4 + 4 * i, old_abs(kept_metadata[i]));
    ref(blk, at.metadata + 4 + 4 * kept_metadata.size(), kInsertAt + at.meta);

    write_plan_objects(blk, at, plan_buffer, static_cast<uint32_t>(model.subgraphs.size()), offsets);

    std::vector<uint8_t> out;
    out.reserve(size + shift);
    out.insert(out.end(), data, data + kInsertAt);
    out.insert(out.end(), blk.bytes.begin(), blk.bytes.end());
    out.insert(out.end(), data + kInsertAt, data + size);
    const uint32_t root = static_cast<uint32_t>(kInsertAt + at.model);
    std::memcpy(out.data(), &root, 4);
    check_read_back(model, out);
    return out;
}

}  // namespace arenascope::planner
