// Hardware profiles: every bundled profile loads, and every numeric field names where its number comes
// from ("source") or why it was assumed ("assumption") -- docs/architecture.md §5.
#include "core/hardware_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/json_io.h"
#include "base/warnings.h"
#include "core/data_dir.h"
#include "core/model_spec.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"

namespace moesim {
namespace {

// Walks the JSON: a {"value": V, ...} object must carry a non-empty "source" or "assumption"; a bare
// number anywhere else is a field without provenance.
void check_provenance(const Json& j, const std::string& path, std::vector<std::string>& bad) {
  if (j.is_object()) {
    if (j.contains("value")) {
      const bool ok =
          (j.contains("source") && j["source"].is_string() && !j["source"].get<std::string>().empty()) ||
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
  check_provenance(Json::parse(R"({"ssd": {"read_bandwidth": {"value": "3GB/s"}, "queue_depth": 4}})"), "x",
                   bad);
  EXPECT_EQ(bad, (std::vector<std::string>{"x.ssd.read_bandwidth", "x.ssd.queue_depth"}));
}

TEST(HardwareProfile, RejectsUnknownProfile) {
  EXPECT_THROW((void)load_hardware("no-such-board"), Error);
}

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
    EXPECT_EQ(
        std::string(e.what()),
        "mine.json: ssd.prefill_read_bandwidth.value: a bandwidth of 0 B/s is outside the physical range "
        "1 kbit/s to 1 Pbit/s (125 to 1.25e+14 B/s)");
  }
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

using test::error_of;
using ::testing::HasSubstr;

std::string write_profile(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("moesim_hw_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

Json jetson() {
  return load_json_file(resolve_preset("hardware", "jetson-agx-orin-64gb"));
}

TEST(HardwareProfile, ANumberBeyondADoubleIsAnErrorNamingTheFile) {
  std::string text = jetson().dump(1);
  const size_t at = text.find("\"value\": 32");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "\"value\": 1e400");
  const std::string path = write_profile("huge.json", text);
  EXPECT_THAT(error_of([&] { (void)load_hardware(path); }), HasSubstr(path + ":"));
  EXPECT_THAT(error_of([&] { (void)load_hardware(path); }), HasSubstr("1e400 is out of range"));
}

TEST(HardwareProfile, ATopLevelArrayIsAnError) {
  const std::string path = write_profile("array.json", "[" + jetson().dump() + "]");
  EXPECT_EQ(
      error_of([&] { (void)load_hardware(path); }),
      path +
          ": expected an object (a hardware profile: name, ssd, memory, cpu, gpu, link), found an array of 1 "
          "element");
}

TEST(HardwareProfile, AnUnknownFieldIsAnErrorNamingTheClosestKnownOne) {
  Json j = jetson();
  j["ssd"]["prefill_read_bandwith"] = {{"value", "1GB/s"}, {"source", "typo"}};
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: ssd.prefill_read_bandwith: unknown field; did you mean ssd.prefill_read_bandwidth?");
  j = jetson();
  j["gpus"] = Json::object();
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: gpus: unknown field; did you mean gpu?");
  j = jetson();
  j["ssd"]["read_bandwidth"]["sorce"] = "typo";
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: ssd.read_bandwidth.sorce: unknown field; did you mean ssd.read_bandwidth.source?");
}

TEST(HardwareProfile, AFieldWithNeitherSourceNorAssumptionIsAnErrorInAFile) {
  Json j = jetson();
  j["ssd"]["read_latency"].erase("assumption");
  const std::string path = write_profile("unsourced.json", j.dump(1));
  const std::string e = error_of([&] { (void)load_hardware(path); });
  EXPECT_THAT(e, HasSubstr(path + ": ssd.read_latency: has neither source nor assumption"));
  j = jetson();
  j["memory"]["bandwidth"] = "100GB/s";  // bare
  EXPECT_THAT(error_of([&] { (void)load_hardware(write_profile("bare.json", j.dump(1))); }),
              HasSubstr("memory.bandwidth: has neither source nor assumption"));
  j = jetson();
  j["memory"]["bandwidth"]["source"] = "";
  EXPECT_THAT(error_of([&] { (void)load_hardware(write_profile("empty.json", j.dump(1))); }),
              HasSubstr("memory.bandwidth: has neither source nor assumption"));
}

TEST(HardwareProfile, ValuesAreCheckedWithTheirPath) {
  Json j = jetson();
  j["ssd"]["queue_depth"]["value"] = 2.5;
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: ssd.queue_depth.value: expected an integer in [1, 1048576], found the number 2.5");
  j = jetson();
  j["link"]["kind"] = "nvlink";
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: link.kind: expected \"uma\" or \"pcie\", found the string \"nvlink\"");
  j = jetson();
  j["cpu"]["model"] = 12;
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: cpu.model: expected a string, found the number 12");
  j = jetson();
  j.erase("link");
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }), "hw.json: link: missing field");
  j = jetson();
  j["memory"]["capacity"]["value"] = "lots";
  EXPECT_THAT(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
              HasSubstr("hw.json: memory.capacity.value: "));
  // Physical floors and ceilings: a bandwidth of 1e-300 would make every read take forever.
  j = jetson();
  j["ssd"]["read_bandwidth"]["value"] = 1e-300;
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: ssd.read_bandwidth.value: a bandwidth of 1e-300 B/s is outside the physical range 1 "
            "kbit/s to "
            "1 Pbit/s (125 to 1.25e+14 B/s)");
  j = jetson();
  j["gpu"]["kernel_overhead"]["value"] = 1e300;
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: gpu.kernel_overhead.value: a latency of 1e+300 s is outside the range 0 to 60 s");
}

TEST(HardwareProfile, MeasuredOnIsReadWhenPresent) {
  Json j = jetson();
  EXPECT_FALSE(hardware_from_json(j, "hw.json").measured_on.has_value());
  j["measured_on"] = {{"host", "box"}, {"cpu_model", "Xeon"}, {"cores", 2}, {"gpu", "none"}};
  const HardwareProfile h = hardware_from_json(j, "hw.json", true);
  ASSERT_TRUE(h.measured_on.has_value());
  EXPECT_EQ(h.measured_on->host, "box");
  EXPECT_EQ(h.measured_on->cpu_model, "Xeon");
  EXPECT_EQ(h.measured_on->cores, 2u);
  EXPECT_EQ(h.measured_on->gpu, "none");
  j["measured_on"]["core"] = 2;
  EXPECT_EQ(error_of([&] { (void)hardware_from_json(j, "hw.json"); }),
            "hw.json: measured_on.core: unknown field; did you mean measured_on.cores?");
}

TEST(HardwareProfile, ARetiredFieldIsWarnedAboutAndIgnored) {
  Json j = jetson();
  j["gpu"]["fresh_weights_bandwidth"] = {{"value", "1GB/s"}, {"source", "an older calibrate"}};
  set_warnings_printed(false);
  clear_warnings();
  (void)hardware_from_json(j, "old.json", true);
  const auto w = warnings();
  clear_warnings();
  set_warnings_printed(true);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("old.json: gpu.fresh_weights_bandwidth is no longer read"));
}

// Every profile and model the repository ships or records (presets, test data, experiments, benchmark
// results) loads under the schema: the schema knows every field they use.
TEST(HardwareProfile, EveryShippedProfileAndModelLoads) {
  namespace fs = std::filesystem;
  size_t profiles = 0, models = 0;
  for (const char* dir : {"data", "tests/data", "experiments", "bench/results"}) {
    for (const auto& e : fs::recursive_directory_iterator(test::source_path("") + dir)) {
      if (e.path().extension() != ".json") continue;
      const std::string path = e.path().string();
      const Json j = load_json_file(path);
      if (!j.is_object()) continue;
      SCOPED_TRACE(path);
      if (j.contains("ssd") && j.contains("gpu")) {
        EXPECT_NO_THROW((void)load_hardware(path));
        ++profiles;
      } else if (j.contains("expert_tensors")) {
        EXPECT_NO_THROW((void)load_model(path));
        ++models;
      }
    }
  }
  EXPECT_GE(profiles, 7u);
  EXPECT_GE(models, 9u);
}

TEST(HardwareProfile, ADirectoryIsNotAPresetName) {
  const auto dir = std::filesystem::temp_directory_path();
  EXPECT_EQ(error_of([&] { (void)load_hardware(dir.string()); }),
            dir.string() + " is a directory, not a hardware profile JSON file");
}

}  // namespace
}  // namespace moesim
