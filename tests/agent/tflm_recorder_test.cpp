// The TFLM adapter's recorder (target_agent/adapters/tflm), without TFLM: the calls its
// recording GreedyMemoryPlanner makes, and what it publishes. Expected values are the ones
// these tests feed in, worked by hand.
#include <gtest/gtest.h>

#include <cstring>

#include "arenascope/agent.h"
#include "arenascope_tflm_recorder.h"

extern "C" arenascope_descriptor_t arenascope_descriptor;

namespace {
alignas(16) uint8_t arena[256];
const uint8_t model[40] = {1};

void fresh()
{
    std::memset(&arenascope_descriptor, 0, sizeof arenascope_descriptor);
}
}  // namespace

TEST(TflmRecorder, PublishesThePlanTheWatermarksAndTheModel)
{
    fresh();
    arenascope_region_t table[4];
    arenascope_tflm_recorder_t rec;
    arenascope_tflm_recorder_init(&rec, table, 4);
    arenascope_tflm_record_buffer(&rec, 16, 0, 1, -1);  // planner id 0
    arenascope_tflm_record_buffer(&rec, 32, 1, 2, 0);   // planner id 1, offline at 0
    arenascope_tflm_record_offset(&rec, 1, 0);
    arenascope_tflm_record_offset(&rec, 0, 32);
    arenascope_tflm_record_offset(&rec, 7, 99);  // no such buffer: ignored
    // head 48 B, arena_used_bytes() 148: the tail is the last 100 B, from +156.
    arenascope_arena_t *a = arenascope_tflm_recorder_publish(&rec, arena, 256, 48, 148, model, sizeof model);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->base_addr, reinterpret_cast<uintptr_t>(arena));
    EXPECT_EQ(a->size_bytes, 256u);
    EXPECT_EQ(a->head_bytes, 48u);
    EXPECT_EQ(a->temp_bytes, 48u);
    EXPECT_EQ(a->tail_offset, 156u);
    EXPECT_EQ(a->flags, ARENASCOPE_ARENA_TFLM | ARENASCOPE_ARENA_PLANNER_IDS);
    EXPECT_EQ(a->model_addr, reinterpret_cast<uintptr_t>(model));
    EXPECT_EQ(a->model_size_bytes, 40u);
    ASSERT_EQ(a->region_count, 3u);
    const auto *r = reinterpret_cast<const arenascope_region_t *>(a->regions_addr);
    EXPECT_EQ(r[0].offset_bytes, 32u);
    EXPECT_EQ(r[0].size_bytes, 16u);
    EXPECT_EQ(r[0].id, 0u);
    EXPECT_EQ(r[0].kind, ARENASCOPE_KIND_TENSOR);
    EXPECT_EQ(r[0].first_use, 0);
    EXPECT_EQ(r[0].last_use, 1);
    EXPECT_EQ(r[1].offset_bytes, 0u);
    EXPECT_EQ(r[1].size_bytes, 32u);
    EXPECT_EQ(r[1].id, 1u);
    EXPECT_EQ(r[1].flags, ARENASCOPE_REGION_OFFLINE_PLANNED);
    EXPECT_EQ(r[2].offset_bytes, 156u);
    EXPECT_EQ(r[2].size_bytes, 100u);
    EXPECT_EQ(r[2].kind, ARENASCOPE_KIND_PERSISTENT);
    EXPECT_EQ(r[2].id, ARENASCOPE_ID_NONE);
    EXPECT_EQ(r[2].first_use, ARENASCOPE_USE_NONE);
}

TEST(TflmRecorder, AFullTableKeepsRoomForTheTailAndSaysItOverflowed)
{
    fresh();
    arenascope_region_t table[2];
    arenascope_tflm_recorder_t rec;
    arenascope_tflm_recorder_init(&rec, table, 2);
    arenascope_tflm_record_buffer(&rec, 16, 0, 1, -1);
    arenascope_tflm_record_buffer(&rec, 16, 1, 2, -1);
    EXPECT_EQ(rec.count, 1u);
    EXPECT_EQ(rec.overflow, 1u);
    arenascope_arena_t *a = arenascope_tflm_recorder_publish(&rec, arena, 256, 16, 116, model, sizeof model);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->region_count, 2u);  // the one buffer, then the tail
}

TEST(TflmRecorder, InconsistentFiguresPublishNothing)
{
    fresh();
    arenascope_region_t table[2];
    arenascope_tflm_recorder_t rec;
    arenascope_tflm_recorder_init(&rec, table, 2);
    EXPECT_EQ(arenascope_tflm_recorder_publish(&rec, arena, 256, 64, 32, model, sizeof model), nullptr);  // used < head
    EXPECT_EQ(arenascope_tflm_recorder_publish(&rec, arena, 256, 64, 300, model, sizeof model), nullptr);  // > arena
    EXPECT_EQ(arenascope_descriptor.arena_count, 0u);
}
