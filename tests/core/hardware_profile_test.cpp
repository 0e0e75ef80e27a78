// Hardware profiles: every bundled profile loads, and every numeric field names where its number comes
// from ("source") or why it was assumed ("assumption") -- ARCHITECTURE.md §5.
#include "core/hardware_profile.h"

#include <gtest/gtest.h>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/json_io.h"

namespace moesim {
namespace {

// Walks the JSON: a {"value": V, ...} object must carry a non-empty "source" or "assumption"; a bare
// number anywhere else is a field without provenance.
void check_provenance(const Json& j, const std::string& path, std::vector<std::string>& bad) {
  if (j.is_object()) {
    if (j.contains("value")) {
      const bool ok = (j.contains("source") && j["source"].is_string() && !j["source"].get<std::string>().empty()) ||
                      (j.contains("assumption") && j["assumption"].is_string() &&
                       !j["assumption"].get<std::string>().empty());
      if (!ok) bad.push_back(path);
      return;
    }
    for (const auto& [k, v] : j.items()) check_provenance(v, path + "." + k, bad);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) check_provenance(j[i], path + "[" + std::to_string(i) + "]", bad);
  } else if (j.is_number()) {
    bad.push_back(path);
  }
}

TEST(HardwareProfile, EveryBundledProfileLoadsWithSourcedNumbers) {
  const auto names = list_presets("hardware");
  ASSERT_FALSE(names.empty());
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    const HardwareProfile h = load_hardware(n);
    EXPECT_GT(h.ssd_read_bandwidth, 0);
    EXPECT_GT(h.memory_capacity, 0u);
    EXPECT_GT(h.memory_bandwidth, 0);
    EXPECT_GE(h.cpu_cores, 1u);
    std::vector<std::string> bad;
    check_provenance(h.raw, n, bad);
    EXPECT_TRUE(bad.empty()) << "numbers without source/assumption: " << ::testing::PrintToString(bad);
  }
}

TEST(HardwareProfile, ProvenanceCheckCatchesABareNumber) {
  std::vector<std::string> bad;
  check_provenance(Json::parse(R"({"ssd": {"read_bandwidth": {"value": "3GB/s"}, "queue_depth": 4}})"), "x", bad);
  EXPECT_EQ(bad, (std::vector<std::string>{"x.ssd.read_bandwidth", "x.ssd.queue_depth"}));
}

TEST(HardwareProfile, RejectsUnknownProfile) { EXPECT_THROW((void)load_hardware("no-such-board"), Error); }

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

TEST(HardwareProfile, PrefillReadsAndFreshWeightsDefaultToTheOrdinaryRates) {
  Json j = load_json_file(resolve_preset("hardware", "jetson-agx-orin-64gb"));
  const HardwareProfile plain = hardware_from_json(j, "t");
  EXPECT_EQ(plain.ssd_prefill_read_bandwidth, plain.ssd_read_bandwidth);
  EXPECT_EQ(plain.ssd_prefill_read_latency, plain.ssd_read_latency);
  EXPECT_LT(plain.gpu_fresh_expert_overhead, 0);  // none: fresh experts cost like the others
  j["ssd"]["prefill_read_bandwidth"] = {{"value", "500MB/s"}, {"source", "test"}};
  j["ssd"]["prefill_read_latency"] = {{"value", "90us"}, {"source", "test"}};
  j["gpu"]["fresh_expert_overhead"] = {{"value", "40us"}, {"source", "test"}};
  const HardwareProfile h = hardware_from_json(j, "t");
  EXPECT_DOUBLE_EQ(h.ssd_prefill_read_bandwidth, 500e6);
  EXPECT_DOUBLE_EQ(h.ssd_prefill_read_latency, 90e-6);
  EXPECT_DOUBLE_EQ(h.gpu_fresh_expert_overhead, 40e-6);
  j["ssd"]["prefill_read_bandwidth"]["value"] = 0;
  try {
    (void)hardware_from_json(j, "mine.json");
    ADD_FAILURE() << "a zero prefill read bandwidth was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mine.json: field 'ssd.prefill_read_bandwidth' must be positive"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace moesim
