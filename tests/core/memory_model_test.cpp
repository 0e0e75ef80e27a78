// The whole device's memory (core/memory_model.h): a worked example by hand, where each part lives on unified
// and discrete memory, mmapped dense weights left to the page cache, the largest budget and longest context
// as the boundaries of fits(), the profile's memory fields checked, and the KV cache per token of a GQA and
// an MLA preset equal to the formula from their configs.
#include "core/memory_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/json_io.h"
#include "core/model_spec.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using ::testing::HasSubstr;
constexpr uint64_t kGiB = uint64_t{1} << 30, kMiB = uint64_t{1} << 20;

Json profile_json(bool unified) {
  Json j = Json::parse(
      R"({"name": "t", "ssd": {"read_bandwidth": "1GB/s", "read_latency": "10us", "queue_depth": 1},
    "memory": {"capacity": "8GiB", "bandwidth": "10GB/s", "os_reserve": "1GiB"},
    "cpu": {"cores": 4, "memcpy_bandwidth_per_core": "1GB/s"},
    "gpu": {"bf16_flops": 1e12, "memory_bandwidth": "100GB/s", "kernel_overhead": "1us"},
    "link": {"kind": "uma", "bandwidth": "10GB/s", "latency": "1us"}})");
  j["memory"]["unified"] = unified;
  if (!unified) {
    j["gpu"]["memory_capacity"] = "4GiB";
    j["gpu"]["memory_reserve"] = "256MiB";
    j["link"]["kind"] = "pcie";
  }
  return j;
}

ModelMemory example_model() {
  ModelMemory m;
  m.dense_bytes = 1 * kGiB;
  m.embedding_bytes = 256 * kMiB;
  m.lm_head_bytes = 256 * kMiB;
  m.kv_bytes_per_token = 64 * 1024;  // 64 KiB
  m.activation_bytes_per_token = 1024;
  m.all_experts_bytes = 20 * kGiB;
  return m;
}

TEST(MemoryModel, UnifiedWorkedExample) {
  const HardwareProfile hw = hardware_from_json(profile_json(true), "t");
  MemoryRequest r;
  r.gpu_budget = 2 * kGiB;
  r.context_tokens = 4096;  // 4096 x 64 KiB = 256 MiB of KV; activations 512 tokens x 1 KiB
  const MemoryBreakdown b = memory_breakdown(hw, example_model(), r);
  const uint64_t pinned = 1 * kGiB + 1 * kGiB + 512 * kMiB + 256 * kMiB + 512 * 1024 + 2 * kGiB;
  EXPECT_EQ(b.dram_pinned, pinned);
  EXPECT_EQ(b.page_cache_bytes, 8 * kGiB - pinned);
  EXPECT_TRUE(b.fits());
  for (const MemoryPart& p : b.parts) EXPECT_EQ(p.place, MemoryPlace::kDram) << p.name;
  // Mmapped dense weights are pages of the page cache, not pinned.
  r.dense = DensePlacement::kMmap;
  const MemoryBreakdown mm = memory_breakdown(hw, example_model(), r);
  EXPECT_EQ(mm.dram_pinned, pinned - 1 * kGiB - 512 * kMiB);
  EXPECT_EQ(mm.mmapped_bytes, 1 * kGiB + 512 * kMiB);
}

TEST(MemoryModel, DiscreteGpuHoldsTheModelSideAndDramThePageCache) {
  const HardwareProfile hw = hardware_from_json(profile_json(false), "t");
  MemoryRequest r;
  r.gpu_budget = 1536 * kMiB;
  r.host_budget = 3 * kGiB;
  r.context_tokens = 4096;
  const MemoryBreakdown b = memory_breakdown(hw, example_model(), r);
  EXPECT_EQ(b.gpu_pinned, 256 * kMiB + 1 * kGiB + 512 * kMiB + 256 * kMiB + 512 * 1024 + 1536 * kMiB);
  EXPECT_EQ(b.dram_pinned, 1 * kGiB + 3 * kGiB);
  EXPECT_EQ(b.page_cache_bytes, 4 * kGiB);
  EXPECT_TRUE(b.fits());
  r.gpu_budget = 3 * kGiB;  // 4 GiB of GPU memory cannot hold it beside 2 GiB of the rest
  EXPECT_TRUE(memory_breakdown(hw, example_model(), r).gpu_over());
  EXPECT_THAT(memory_breakdown_text(memory_breakdown(hw, example_model(), r)), HasSubstr("OVER by"));
}

TEST(MemoryModel, LargestBudgetAndLongestContextAreTheEdgesOfFits) {
  for (bool unified : {true, false}) {
    SCOPED_TRACE(unified);
    const HardwareProfile hw = hardware_from_json(profile_json(unified), "t");
    const ModelMemory m = example_model();
    MemoryRequest r;
    r.context_tokens = 8192;
    r.batch = 2;
    const uint64_t largest = largest_gpu_budget(hw, m, r);
    r.gpu_budget = largest;
    EXPECT_TRUE(memory_breakdown(hw, m, r).fits());
    r.gpu_budget = largest + 1;
    EXPECT_FALSE(memory_breakdown(hw, m, r).fits());
    r.gpu_budget = 1 * kGiB;
    const uint64_t context = longest_context(hw, m, r);
    r.context_tokens = context;
    EXPECT_TRUE(memory_breakdown(hw, m, r).fits());
    r.context_tokens = context + 1;
    EXPECT_FALSE(memory_breakdown(hw, m, r).fits());
  }
}

TEST(MemoryModel, SlidingWindowLayersStopGrowingAtTheirWindow) {
  ModelMemory m;
  m.kv_bytes_per_token = 100;
  m.kv_windowed_bytes_per_token = 60;  // 60 of the 100 bytes are windowed layers'
  m.kv_window_tokens = 128;
  m.kv_fixed_bytes = 7;
  EXPECT_EQ(m.kv_bytes(100), 7u + 100u * 100u);
  EXPECT_EQ(m.kv_bytes(1000), 7u + 40u * 1000u + 60u * 128u);
}

TEST(MemoryModel, ProfileMemoryFieldsAreChecked) {
  Json j = profile_json(true);
  j["gpu"]["memory_capacity"] = "4GiB";
  EXPECT_THAT(test::error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
              HasSubstr("gpu.memory_capacity"));
  j = profile_json(true);
  j["memory"]["os_reserve"] = "9GiB";
  EXPECT_THAT(test::error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
              HasSubstr("memory.os_reserve"));
  EXPECT_EQ(hardware_from_json(profile_json(false), "t").gpu_memory_capacity, 4 * kGiB);
  EXPECT_EQ(load_hardware("desktop-rtx4090").gpu_memory_capacity, 24 * kGiB);
  EXPECT_THROW(parse_dense_placement("swapped"), UsageError);
}

// KV bytes per token from the configs: Qwen3-30B-A3B is GQA (48 layers, 4 KV heads of 128), DeepSeek-V2-Lite
// MLA (27 layers, a 512-wide latent and a 64-wide RoPE key), both f16.
TEST(MemoryModel, KvPerTokenIsTheFormulaOfTheConfig) {
  EXPECT_EQ(model_memory(load_model("qwen3-30b-a3b")).kv_bytes_per_token, uint64_t{48} * 2 * 4 * 128 * 2);
  EXPECT_EQ(model_memory(load_model("deepseek-v2-lite")).kv_bytes_per_token, uint64_t{27} * (512 + 64) * 2);
}

}  // namespace
}  // namespace moesim
