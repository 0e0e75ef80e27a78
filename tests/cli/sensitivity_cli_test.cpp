// What an answer rests on, end to end: `rests_on` lists exactly the assumption-marked profile fields a run
// read, `moesim sensitivity` finds the ranking flip planted in a toy profile
// (tests/data/hardware/toy-flip.json), and a zipmoe run reports the planner's expectation beside the
// simulation's, which agree where the planner's assumptions hold.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using moesim::Json;
using moesim::test::moesim_combined;

const std::string kModel = moesim::test::test_data("models/tiny-moe.json");
const std::string kToy = moesim::test::test_data("hardware/toy-flip.json");

// A Zipf trace of the tiny model: independent draws per token (docs/synth.md).
std::string zipf_trace(const std::string& dir, uint32_t tokens) {
  const std::string t = dir + "/zipf.mtr";
  const auto r = moesim_combined("-q trace synth --model " + kModel + " --tokens " + std::to_string(tokens) +
                                 " --seed 1 --zipf 1.0 -o " + t);
  EXPECT_EQ(r.status, 0) << r.out;
  return t;
}

Json json_of(const std::string& args) {
  const auto r = moesim_combined("-q " + args + " --json");
  EXPECT_EQ(r.status, 0) << args << "\n" << r.out;
  return Json::parse(r.out.substr(r.out.find('{')));
}

std::vector<std::string> fields_of(const Json& rests_on) {
  std::vector<std::string> f;
  for (const auto& r : rests_on) f.push_back(r["field"].get<std::string>());
  return f;
}

// The toy profile with more fields marked "assumption": some a run reads, some it does not.
std::string toy_with_assumptions(const std::string& dir, const std::vector<std::string>& fields) {
  Json p = moesim::load_json_file(kToy);
  for (const auto& f : fields) {
    Json& q = p[f.substr(0, f.find('.'))][f.substr(f.find('.') + 1)];
    q.erase("source");
    q["assumption"] = "marked by the test";
  }
  const std::string path = dir + "/toy-more.json";
  std::ofstream(path) << p.dump(2);
  return path;
}

TEST(RestsOn, ListsExactlyTheAssumptionFieldsARunRead) {
  const auto dir = moesim::test::fresh_test_dir("moesim_rests", "exact").string();
  const std::string trace = zipf_trace(dir, 32);
  const std::string hw = toy_with_assumptions(dir, {"cpu.decompress_bandwidth_per_core", "cpu.flops_per_core",
                                                    "link.bandwidth", "gpu.kernel_overhead"});
  const std::string run = "run --trace " + trace + " --model " + kModel + " --hw " + hw + " --budget 2MiB";
  // Offloading whole experts decompresses nothing, computes on the GPU, and a unified-memory link's
  // bandwidth is never read (a zero-copy transfer costs its latency alone).
  EXPECT_EQ(fields_of(json_of(run + " --system offload")["rests_on"]),
            (std::vector<std::string>{"ssd.read_latency", "gpu.kernel_overhead"}));
  EXPECT_EQ(fields_of(json_of(run + " --system zipmoe")["rests_on"]),
            (std::vector<std::string>{"ssd.read_latency", "cpu.decompress_bandwidth_per_core",
                                      "gpu.kernel_overhead"}));
  EXPECT_EQ(fields_of(json_of(run + " --system offload --compute-on cpu")["rests_on"]),
            (std::vector<std::string>{"ssd.read_latency", "cpu.flops_per_core", "gpu.kernel_overhead"}));
  const Json j = json_of(run + " --system offload");
  EXPECT_EQ(j["rests_on"][0]["value"], "500us");
  EXPECT_EQ(j["rests_on"][0]["assumption"], "planted: the one assumption of this toy profile");
  const auto text = moesim_combined("-q " + run + " --system offload");
  EXPECT_NE(text.out.find("rests on assumptions: ssd.read_latency, gpu.kernel_overhead\n"), std::string::npos)
      << text.out;
}

TEST(RestsOn, CompareAndSweepPointsCarryIt) {
  const auto dir = moesim::test::fresh_test_dir("moesim_rests", "compare").string();
  const std::string trace = zipf_trace(dir, 16);
  const Json c = json_of("compare --trace " + trace + " --model " + kModel + " --hw " + kToy +
                         " --policy lru,fifo --budget 1MiB,2MiB");
  EXPECT_EQ(fields_of(c["rests_on"]), (std::vector<std::string>{"ssd.read_latency"}));
  std::ofstream(dir + "/sweep.json") << "{\"points\": [{\"trace\": \"zipf.mtr\", \"model\": \"" + kModel +
                                            "\", \"hw\": \"" + kToy + "\", \"budget\": \"1MiB\"}]}";
  const auto r = moesim_combined("-q sweep " + dir + "/sweep.json -o " + dir + "/out");
  ASSERT_EQ(r.status, 0) << r.out;
  size_t points = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir + "/out/points")) {
    EXPECT_EQ(fields_of(moesim::load_json_file(f.path().string())["rests_on"]),
              (std::vector<std::string>{"ssd.read_latency"}));
    ++points;
  }
  EXPECT_EQ(points, 1u);
}

// The toy's flip is planted for ZipMoE's one I/O thread (io=thread: a tensor's K + 1 reads each pay the read
// latency in turn); with the workers' fused reads (io=fused) the E-chunk reads overlap their latencies, and
// doubling it no longer makes ZipMoE the slower system.
std::string flip_spec(const std::string& dir, const std::string& extra = "") {
  const std::string spec = dir + "/spec.json";
  std::ofstream(spec)
      << "{\"trace\": \"zipf.mtr\", \"model\": \"" + kModel + "\", \"hw\": \"" + kToy +
             "\", \"budget\": \"4MiB\", \"systems\": [\"offload:policy=lru\", \"zipmoe:io=thread\"], "
             "\"metric\": \"tpot\"" +
             extra + "}";
  return spec;
}

TEST(Sensitivity, FindsTheFlipPlantedInAToyProfile) {
  const auto dir = moesim::test::fresh_test_dir("moesim_sens", "flip").string();
  zipf_trace(dir, 64);
  const std::string spec = flip_spec(dir);
  Json one = json_of("sensitivity " + spec + " --jobs 1");
  ASSERT_EQ(one["points"].size(), 1u);
  EXPECT_EQ(one["points"][0]["ranking"], Json::parse(R"(["zipmoe:io=thread", "offload:policy=lru"])"));
  const Json& f = one["fields"];
  ASSERT_EQ(f.size(), 2u) << f.dump(1);  // the toy's one assumption, x0.5 and x2
  EXPECT_EQ(f[0]["field"], "ssd.read_latency");
  EXPECT_EQ(f[0]["factor"], 0.5);
  EXPECT_FALSE(f[0]["flips"].get<bool>());
  EXPECT_EQ(f[1]["factor"], 2.0);
  EXPECT_DOUBLE_EQ(f[1]["value"].get<double>(), 1e-3);
  EXPECT_TRUE(f[1]["flips"].get<bool>());
  EXPECT_EQ(f[1]["ranking"], Json::parse(R"(["offload:policy=lru", "zipmoe:io=thread"])"));
  // A slower read slows both systems.
  for (const char* s : {"offload:policy=lru", "zipmoe:io=thread"})
    EXPECT_GT(f[1]["systems"][s]["change"].get<double>(), 0);
  // The answer does not depend on how many runs went in parallel.
  Json two = json_of("sensitivity " + spec + " --jobs 3");
  one.erase("header");
  two.erase("header");
  EXPECT_EQ(one.dump(), two.dump());
  const auto text = moesim_combined("-q sensitivity " + spec + " --factors 2");
  EXPECT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("FLIPS"), std::string::npos) << text.out;
}

// --find-flip brackets the planted flip (ZipMoE ahead at 500 us a read, offloading at 1 ms): the factor it
// reports flips the ranking and the bracket's other end does not, each checked by a fixed-factor run; the
// other side has no flip in the range; --jobs does not change it.
TEST(Sensitivity, FindFlipBracketsThePlantedFlip) {
  const auto dir = moesim::test::fresh_test_dir("moesim_sens", "findflip").string();
  zipf_trace(dir, 64);
  const std::string spec = flip_spec(dir);
  Json j = json_of("sensitivity " + spec + " --find-flip --range 0.25,4 --jobs 2");
  ASSERT_EQ(j["flips"].size(), 1u) << j.dump(1);
  const Json& f = j["flips"][0];
  EXPECT_EQ(f["field"], "ssd.read_latency");
  EXPECT_FALSE(f["below"]["found"].get<bool>());
  ASSERT_TRUE(f["above"]["found"].get<bool>());
  const double flip = f["above"]["factor"].get<double>(), same = f["above"]["unflipped_factor"].get<double>();
  EXPECT_GT(flip, 1.0);
  EXPECT_LE(flip, 2.0);
  EXPECT_LE(flip / same, 1.01 + 1e-9);
  EXPECT_DOUBLE_EQ(f["above"]["value"].get<double>(), 500e-6 * flip);
  EXPECT_EQ(f["above"]["ranking"], Json::parse(R"(["offload:policy=lru", "zipmoe:io=thread"])"));
  auto flips_at = [&](double factor) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", factor);
    const Json r = json_of("sensitivity " + spec + " --factors " + text);
    return r["fields"][0]["flips"].get<bool>();
  };
  EXPECT_TRUE(flips_at(flip));
  if (same != 1.0) {
    EXPECT_FALSE(flips_at(same));
  }
  Json one = json_of("sensitivity " + spec + " --find-flip --range 0.25,4 --jobs 1");
  one.erase("header");
  j.erase("header");
  EXPECT_EQ(one.dump(), j.dump());
  const auto text = moesim_combined("-q sensitivity " + spec + " --find-flip --range 0.25,4");
  EXPECT_NE(text.out.find("no flip in [x0.25, x1]"), std::string::npos) << text.out;
  EXPECT_EQ(moesim_combined("-q sensitivity " + spec + " --find-flip --range 2,4").status, 2);
  EXPECT_EQ(moesim_combined("-q sensitivity " + spec + " --plot " + dir + "/t.png").status, 2);
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0) {
    const auto plotted =
        moesim_combined("-q sensitivity " + spec + " --find-flip --range 0.25,4 --plot " + dir + "/t.png");
    ASSERT_EQ(plotted.status, 0) << plotted.out;
    EXPECT_GT(std::filesystem::file_size(dir + "/t.png"), 1000u);
  }
}

TEST(Sensitivity, BadSpecsNameTheJsonPath) {
  const auto dir = moesim::test::fresh_test_dir("moesim_sens", "bad").string();
  zipf_trace(dir, 8);
  auto error_of = [&](const std::string& extra) {
    const auto r = moesim_combined("-q sensitivity " + flip_spec(dir, extra));
    EXPECT_EQ(r.status, 1) << r.out;
    return r.out;
  };
  EXPECT_NE(
      error_of(", \"points\": [{\"metric\": \"speed\"}]").find("points[0].metric: unknown metric 'speed'"),
      std::string::npos);
  // A key twice (the spec's "metric" is "tpot" already) is an error naming both positions, not the last one.
  EXPECT_NE(error_of(", \"metric\": \"speed\"").find("metric: the key appears twice in one object"),
            std::string::npos);
  EXPECT_NE(error_of(", \"factors\": [0.5, -2]").find("factors[1]"), std::string::npos);
  EXPECT_NE(error_of(", \"points\": [{\"budget\": \"4MiB\", \"sistems\": []}]").find("points[0]"),
            std::string::npos);
  EXPECT_NE(error_of(", \"fields\": [\"ssd.read_speed\"]").find("ssd.read_speed"), std::string::npos);
  // An empty list of fields is refused as an empty list of factors is (it used to mean every field).
  EXPECT_NE(error_of(", \"fields\": []")
                .find("fields: expected a non-empty list of hardware fields (omit \"fields\""),
            std::string::npos);
  // A factor that takes a field out of its range is the factor's fault, not the profile file's.
  EXPECT_NE(error_of(", \"factors\": [1e300]").find("factors[0]: expected a number in [0.001, 1000]"),
            std::string::npos);
  const auto r = moesim_combined("-q sensitivity " + flip_spec(dir) + " --factors 1");
  EXPECT_EQ(r.status, 2) << r.out;
  const auto huge = moesim_combined("-q sensitivity " + flip_spec(dir) + " --factors 1e300");
  EXPECT_EQ(huge.status, 2) << huge.out;
  EXPECT_NE(huge.out.find("--factors: '1e300' is not a factor (a number from 0.001 to 1000"),
            std::string::npos)
      << huge.out;
}

TEST(PlannerReport, ZipMoeRunsPutTheExpectationBesideTheSimulation) {
  const auto dir = moesim::test::fresh_test_dir("moesim_planner", "keys").string();
  const std::string trace = zipf_trace(dir, 32);
  const std::string run = "run --trace " + trace + " --model " + kModel + " --budget 2MiB --system zipmoe";
  const Json p = json_of(run)["planner"];
  for (const char* k : {"expected_miss_rate", "simulated_miss_rate", "expected_layer_s", "simulated_layer_s",
                        "simulated_cold_misses", "simulated_cold_miss_rate", "simulated_warm_miss_rate"})
    EXPECT_TRUE(p[k].is_number()) << k << " in " << p.dump();
  // A run starts empty: each of the 4 x 16 experts that was ever missed was missed cold once at most.
  EXPECT_GT(p["simulated_cold_misses"].get<uint64_t>(), 0u);
  EXPECT_LE(p["simulated_cold_misses"].get<uint64_t>(), 64u);
  EXPECT_EQ(p["profile"]["source"], "the run's own trace");
  EXPECT_FALSE(json_of("run --trace " + trace + " --model " + kModel + " --budget 2MiB").contains("planner"));
  // --profile-trace: the profile comes from another trace, and the report says which.
  const std::string other = dir + "/other.mtr";
  ASSERT_EQ(
      moesim_combined("-q trace synth --model " + kModel + " --tokens 16 --seed 2 --zipf 1.0 -o " + other)
          .status,
      0);
  const Json q = json_of(run + " --profile-trace " + other)["planner"];
  EXPECT_EQ(q["profile"]["source"], "--profile-trace " + other);
  EXPECT_EQ(q["profile"]["invocations"], 4 * 16);
  // --profile-tokens: from the run's first decode tokens (32 tokens x 4 layers here).
  const Json t = json_of(run + " --profile-tokens 8")["planner"];
  EXPECT_EQ(t["profile"]["source"], "the run's first 8 decode tokens");
  EXPECT_EQ(t["profile"]["invocations"], 8 * 4);
  EXPECT_EQ(moesim_combined("-q " + run + " --profile-tokens 8 --profile-trace " + other).status, 2);
  const auto text = moesim_combined("-q " + run);
  EXPECT_NE(text.out.find("planner:     expected "), std::string::npos) << text.out;
}

TEST(PlannerReport, ExpectedAndSimulatedMissesAgreeWhereThePlannersAssumptionsHold) {
  // Independent Zipf draws, a profile measured on the run's own draws, and the misses counted warm (the
  // cold-start ones apart): the planner's model of the run. 3000 tokens x 4 layers: the warm misses' rate
  // is within a few percent of its expectation; 10% is the bound.
  const auto dir = moesim::test::fresh_test_dir("moesim_planner", "zipf").string();
  const std::string trace = zipf_trace(dir, 3000);
  for (const char* budget : {"1MiB", "1536KiB", "2MiB"}) {
    const Json p = json_of("run --trace " + trace + " --model " + kModel + " --budget " + budget +
                           " --system zipmoe")["planner"];
    const double expected = p["expected_miss_rate"].get<double>(),
                 warm = p["simulated_warm_miss_rate"].get<double>();
    EXPECT_GT(expected, 0.01) << budget;
    EXPECT_NEAR(warm, expected, 0.1 * expected) << budget << ": " << p.dump();
  }
}

}  // namespace
