// `moesim presets` called directly (harness/presets_job.h): every bundled preset is listed once, with the
// numbers of its own file, and the JSON document carries the same rows as the result.
#include "harness/presets_job.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "tests/fixtures.h"

namespace moesim::harness {
namespace {

size_t json_files_in(const std::string& folder) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(folder)) n += e.path().extension() == ".json";
  return n;
}

TEST(PresetsJob, ListsEveryBundledPresetWithItsOwnNumbers) {
  const PresetsResult r = list_presets_result();
  EXPECT_EQ(r.models.size(), json_files_in(test::bundled_data("models")));
  EXPECT_EQ(r.hardware.size(), json_files_in(test::bundled_data("hardware")));
  ASSERT_EQ(r.doc["models"].size(), r.models.size());
  ASSERT_EQ(r.doc["hardware"].size(), r.hardware.size());
  bool qwen = false;
  for (size_t i = 0; i < r.models.size(); ++i) {
    const PresetModel& m = r.models[i];
    SCOPED_TRACE(m.name);
    EXPECT_EQ(r.doc["models"][i]["name"], m.name);
    EXPECT_EQ(r.doc["models"][i]["weight_bytes"], m.weight_bytes);
    ASSERT_EQ(m.weight_bytes_as.size(), presets_storage_types().size());
    // 16 bits a weight is more than 8.5 (q8_0), which is more than 4.5 (q4_k).
    EXPECT_GT(m.weight_bytes_as.at("bf16"), m.weight_bytes_as.at("q8_0"));
    EXPECT_GT(m.weight_bytes_as.at("q8_0"), m.weight_bytes_as.at("q4_k"));
    EXPECT_LE(m.active_params, m.total_params);
    if (m.name != "qwen3-30b-a3b") continue;
    qwen = true;
    const ModelSpec spec = load_model(m.name);
    EXPECT_EQ(m.layers, spec.moe_layers);
    EXPECT_EQ(m.experts, 128u);
    EXPECT_EQ(m.top_k, 8u);
    EXPECT_EQ(m.expert_bytes, spec.bytes_per_expert());
  }
  EXPECT_TRUE(qwen);
  std::set<std::string> names;
  for (const auto& h : r.hardware) {
    names.insert(h.name);
    if (h.name != "jetson-agx-orin-64gb") continue;
    const HardwareProfile p = load_hardware(h.name);
    EXPECT_EQ(h.cpu_cores, p.cpu_cores);
    EXPECT_EQ(h.memory_capacity, p.memory_capacity);
  }
  EXPECT_EQ(names.count("jetson-agx-orin-64gb"), 1u);
  EXPECT_EQ(r.doc["header"]["command"], "presets");
}

}  // namespace
}  // namespace moesim::harness
