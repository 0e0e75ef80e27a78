// The sizes a run uses: a model's per-layer expert and dense bytes (its layer_overrides) and its experts'
// storage by type, and without a model the trace's own sizes, warned about when they differ from the matched
// quantized preset's by more than 5% summed over the layers.
#include "serving/model_costs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/warnings.h"
#include "core/model_spec.h"

namespace moesim::serving {
namespace {

using ::testing::HasSubstr;

TEST(ModelCosts, AModelsSizesAndStorageArePerLayer) {
  Json j = load_model("qwen3-30b-a3b").raw;
  j["weight_types"] = {{"experts", "q4_k"}, {"dense", "q4_k"}};
  j["layer_overrides"] = Json::array({{{"layers", {1}}, {"experts", {{"down_proj", "q6_k"}}}}});
  const ModelSpec m = model_from_json(j, "m.json");
  traces::TraceInfo info;
  info.model = "qwen3-30b-a3b";
  info.layers = 48;
  info.experts = 128;
  const SourcedCosts c = model_costs(info, m);
  ASSERT_EQ(c.costs.expert_bytes.size(), 48u);
  EXPECT_EQ(c.costs.expert_bytes[0], 3ull * 768 * 2048 / 256 * 144);
  EXPECT_EQ(c.costs.expert_bytes[1], 2ull * 768 * 2048 / 256 * 144 + 2048ull * 768 / 256 * 210);
  ASSERT_EQ(c.costs.expert_storage.size(), 48u);
  using Storage = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(c.costs.expert_storage[0], (Storage{{"q4_k", 3ull * 768 * 2048}}));
  EXPECT_EQ(c.costs.expert_storage[1], (Storage{{"q4_k", 2ull * 768 * 2048}, {"q6_k", 2048ull * 768}}));
}

TEST(ModelCosts, TheTracesSizesWinAndAMismatchBeyondFivePercentIsWarned) {
  const ModelSpec preset = load_model("gpt-oss-20b");  // MXFP4: a preset that claims a stored form
  traces::TraceInfo info;
  info.model = "gpt-oss-20b-test";
  info.layers = preset.moe_layers;
  info.experts = preset.routed_experts;
  set_warnings_printed(false);
  for (double scale : {1.04, 1.10}) {
    clear_warnings();
    info.expert_bytes.assign(info.layers, static_cast<uint64_t>(scale * preset.bytes_per_expert(0)));
    const SourcedCosts c = model_costs(info, std::nullopt);
    EXPECT_EQ(c.costs.expert_bytes, info.expert_bytes);
    EXPECT_TRUE(c.costs.expert_storage.empty());  // the file's types are not known
    if (scale < 1.05) {
      EXPECT_TRUE(warnings().empty());
    } else {
      ASSERT_EQ(warnings().size(), 1u);
      EXPECT_THAT(warnings()[0], HasSubstr("differ by more than 5% from model preset gpt-oss-20b's"));
    }
  }
  clear_warnings();
}

}  // namespace
}  // namespace moesim::serving
