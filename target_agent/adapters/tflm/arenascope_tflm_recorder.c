/* The TFLM adapter's recorder: see arenascope_tflm_recorder.h. */
#include "arenascope_tflm_recorder.h"

void arenascope_tflm_recorder_init(arenascope_tflm_recorder_t *rec, arenascope_region_t *table, uint16_t capacity)
{
    rec->table = table;
    rec->capacity = capacity;
    rec->count = 0;
    rec->overflow = 0;
}

void arenascope_tflm_record_buffer(arenascope_tflm_recorder_t *rec, int32_t size_bytes, int32_t first_use,
                                   int32_t last_use, int32_t offline_offset)
{
    arenascope_region_t *r;
    /* One entry stays free for the tail. */
    if (rec->table == 0 || rec->count + 1u >= rec->capacity || rec->count >= 0xFFFEu) {
        rec->overflow = 1;
        return;
    }
    r = &rec->table[rec->count];
    r->offset_bytes = 0;
    r->size_bytes = size_bytes > 0 ? (uint32_t)size_bytes : 0u;
    r->id = rec->count; /* TFLM's planner buffer id */
    r->kind = ARENASCOPE_KIND_TENSOR;
    r->flags = offline_offset >= 0 ? ARENASCOPE_REGION_OFFLINE_PLANNED : 0u;
    r->first_use = (int16_t)(first_use < 0 ? 0 : first_use > 32767 ? 32767 : first_use);
    r->last_use = (int16_t)(last_use < 0 ? 0 : last_use > 32767 ? 32767 : last_use);
    rec->count++;
}

void arenascope_tflm_record_offset(arenascope_tflm_recorder_t *rec, int32_t planner_id, int32_t offset_bytes)
{
    if (planner_id >= 0 && planner_id < (int32_t)rec->count && offset_bytes >= 0) {
        rec->table[planner_id].offset_bytes = (uint32_t)offset_bytes;
    }
}

arenascope_arena_t *arenascope_tflm_recorder_publish(arenascope_tflm_recorder_t *rec, void *arena, uint32_t size_bytes,
                                                     uint32_t head_bytes, uint32_t used_bytes, const void *model,
                                                     uint32_t model_bytes)
{
    arenascope_arena_t *a;
    arenascope_region_t tail;
    uint32_t i, tail_offset;

    if (used_bytes < head_bytes || used_bytes > size_bytes) {
        return 0;
    }
    tail_offset = size_bytes - (used_bytes - head_bytes);
    a = arenascope_arena_add(arena, size_bytes, 16u, rec->table, rec->capacity);
    if (a == 0) {
        return 0;
    }
    /* arena_add keeps the table's storage; publish re-appends the recorded entries in place. */
    for (i = 0; i < rec->count; i++) {
        arenascope_region_t r = rec->table[i];
        arenascope_region_publish(a, &r);
    }
    tail.offset_bytes = tail_offset;
    tail.size_bytes = size_bytes - tail_offset;
    tail.id = ARENASCOPE_ID_NONE;
    tail.kind = ARENASCOPE_KIND_PERSISTENT;
    tail.flags = 0u;
    tail.first_use = ARENASCOPE_USE_NONE;
    tail.last_use = ARENASCOPE_USE_NONE;
    arenascope_region_publish(a, &tail);
    a->flags = (uint8_t)(ARENASCOPE_ARENA_TFLM | ARENASCOPE_ARENA_PLANNER_IDS); /* a single byte store */
    arenascope_arena_set_model(a, model, model_bytes);
    arenascope_arena_set_marks(a, head_bytes, head_bytes, tail_offset);
    return a;
}
