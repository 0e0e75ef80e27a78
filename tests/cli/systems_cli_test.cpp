// `moesim run` across systems end to end: zipmoe (planned and given pools, ablation), layer-offload with a
// layer window, prefetch metrics, a discrete GPU's DRAM tier, CPU placement, and the errors around them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using Result = moesim::test::ShellResult;

const std::string kTrace = moesim::test::bundled_data("traces/qwen3-30b-a3b.route.csv");
const std::string kBf16 = " --model qwen3-30b-a3b";

moesim::Json run_json(const std::string& args) {
  const Result r = moesim::test::moesim_combined("run --trace " + kTrace + " " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  return moesim::Json::parse(r.out.substr(r.out.find('{')));
}

TEST(SystemsCli, ZipMoePlansItsPoolsAndReportsStates) {
  const moesim::Json j = run_json(kBf16 + " --system zipmoe --budget 8GiB");
  const auto& c = j["header"]["config"];
  EXPECT_EQ(c["system"], "zipmoe");
  EXPECT_EQ(c["scheduling"], "zipmoe");
  EXPECT_EQ(c["eviction"], "zipmoe-dispatch:delta=0,evict=freq");
  ASSERT_TRUE(c["plan"].is_object());
  EXPECT_NE(c["plan"]["source"].get<std::string>().find("planned"), std::string::npos);
  EXPECT_GT(c["plan"]["expected_makespan_s"].get<double>(), 0);
  const auto& m = j["metrics"];
  const auto& st = m["states"]["lookups"];
  uint64_t total = 0;
  for (const char* s : {"F", "C", "S", "E", "M"}) total += st[s].get<uint64_t>();
  EXPECT_EQ(total, m["cache"]["lookups"].get<uint64_t>());
  EXPECT_GT(st["C"].get<uint64_t>() + st["S"].get<uint64_t>() + st["E"].get<uint64_t>(), 0u);
  EXPECT_GT(m["ssd_bytes_read_by_component"]["e"].get<uint64_t>(), 0u);
  EXPECT_EQ(m["ssd_bytes_read_by_component"]["whole"].get<uint64_t>(), 0u);
  EXPECT_EQ(m["pools"].size(), 4u);
  EXPECT_LE(m["memory_peak"].get<uint64_t>(), 8ull << 30);
  EXPECT_GT(m["resources"]["cpu_workers"]["utilization"].get<double>(), 0);  // decompressions ran
}

TEST(SystemsCli, ZipMoeTakesGivenPoolsAndTheAblationsEvictions) {
  const moesim::Json j = run_json(kBf16 + " --system zipmoe --budget 8GiB --pools F=0.5,C=0.5 --policy fifo");
  EXPECT_EQ(j["header"]["config"]["plan"]["source"], "--pools");
  EXPECT_EQ(j["header"]["config"]["plan"]["ratios"], "F=0.5,C=0.5");
  EXPECT_EQ(j["header"]["config"]["eviction"], "zipmoe-dispatch:delta=0,evict=fifo");
  EXPECT_EQ(j["metrics"]["states"]["lookups"]["S"], 0);
  EXPECT_EQ(j["metrics"]["states"]["lookups"]["E"], 0);
}

TEST(SystemsCli, ZipMoeTakesRhoFromTheCommandLine) {
  const moesim::Json j = run_json(kBf16 + " --system zipmoe --budget 8GiB --ratio 0.5 --shards 2");
  EXPECT_DOUBLE_EQ(j["header"]["config"]["plan"]["rho"].get<double>(), 0.5);
  EXPECT_EQ(j["header"]["config"]["plan"]["rho_source"], "--ratio");
  EXPECT_EQ(j["header"]["config"]["plan"]["shards"], 2);
  const Result r = moesim::test::moesim_combined("run --trace " + kTrace + kBf16 +
                                                 " --system zipmoe --budget 8GiB --ratio 0.5 --store x.mst");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--store"), std::string::npos) << r.out;
}

TEST(SystemsCli, ZipMoeErrorsAreClear) {
  // Without --model the sizes are the trace's quantized ones: no BF16 exponents to split.
  Result r = moesim::test::moesim_combined("run --trace " + kTrace + " --system zipmoe --budget 8GiB");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("--model"), std::string::npos) << r.out;
  r = moesim::test::moesim_combined("run --trace " + kTrace + kBf16 + " --system zipmoe --budget 32");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("budget in bytes"), std::string::npos) << r.out;
  r = moesim::test::moesim_combined("run --trace " + kTrace + kBf16 +
                                    " --system zipmoe --budget 8GiB --pools F=0.7");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--pools"), std::string::npos) << r.out;
  r = moesim::test::moesim_combined("run --trace " + kTrace +
                                    " --system zipmoe --budget 8GiB --policy clairvoyant" + kBf16);
  EXPECT_EQ(r.status, 2);  // an unknown policy name is a usage error
  EXPECT_NE(r.out.find("clairvoyant"), std::string::npos) << r.out;
}

TEST(SystemsCli, ZipMoeIoSaysWhoReadsTheEChunksAndThePlannerAssumesTheSame) {
  // The acceptance runs: both variants on the qwen3 trace at 16 GiB on the Jetson, each saying which it ran
  // and planned with; fused is the default.
  const std::string args = kBf16 + " --hw jetson-agx-orin-64gb --budget 16GiB --system zipmoe";
  const moesim::Json fused = run_json(args + ":io=fused");
  const moesim::Json thread = run_json(args + ":io=thread");
  const moesim::Json plain = run_json(args);
  EXPECT_EQ(fused["header"]["config"]["plan"]["io"], "fused");
  EXPECT_EQ(thread["header"]["config"]["plan"]["io"], "thread");
  EXPECT_EQ(plain["header"]["config"]["plan"]["io"], "fused");
  EXPECT_EQ(plain["metrics"]["tpot"], fused["metrics"]["tpot"]);
  EXPECT_TRUE(fused["header"]["config"]["plan"]["delays"].contains("v_dev_s"));
  EXPECT_FALSE(thread["header"]["config"]["plan"]["delays"].contains("v_dev_s"));
  // Under the same pools (given, no planning) the two serve the same lookups the same way and read the same
  // bytes; fused takes the E-chunk reads off the I/O thread, which then issues only the SM-chunks' reads.
  const moesim::Json fp = run_json(args + ":io=fused --pools F=0.2,C=0.3,S=0.3,E=0.2");
  const moesim::Json tp = run_json(args + ":io=thread --pools F=0.2,C=0.3,S=0.3,E=0.2");
  EXPECT_EQ(fp["metrics"]["states"], tp["metrics"]["states"]);
  EXPECT_EQ(fp["metrics"]["ssd_bytes_read_by_component"], tp["metrics"]["ssd_bytes_read_by_component"]);
  const auto& fr = fp["metrics"]["resources"];
  const auto& tr = tp["metrics"]["resources"];
  EXPECT_EQ(fr["ssd"]["ops"], tr["ssd"]["ops"]);
  EXPECT_LT(fr["io_thread"]["ops"].get<uint64_t>(), tr["io_thread"]["ops"].get<uint64_t>());
  EXPECT_EQ(fr["cpu_workers"]["ops"], tr["cpu_workers"]["ops"]);  // the decompressions, fused or not
  // The summary says it too.
  const Result text = moesim::test::moesim_combined("-q run --trace " + kTrace + args + ":io=thread");
  EXPECT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("every read on the I/O thread (io=thread)"), std::string::npos) << text.out;
  // A bad variant is a usage error naming it and the choices.
  const Result r = moesim::test::moesim_combined("run --trace " + kTrace + args + ":io=aio");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("zipmoe:io=aio: io must be one of fused, thread"), std::string::npos) << r.out;
}

TEST(SystemsCli, LayerOffloadWithAWindowPrefetchesWholeLayers) {
  const moesim::Json plain = run_json(kBf16 + " --system layer-offload --budget 8GiB");
  const moesim::Json window =
      run_json(kBf16 + " --system layer-offload --budget 8GiB --prefetch layer-window:depth=1");
  // Every expert of every layer is looked up: 128 per invocation.
  EXPECT_EQ(plain["metrics"]["cache"]["lookups"].get<uint64_t>(),
            128u * plain["metrics"]["cache"]["invocations"].get<uint64_t>());
  const auto& p = window["metrics"]["prefetch"];
  EXPECT_GT(p["issued"].get<uint64_t>(), 0u);
  EXPECT_EQ(p["issued"].get<uint64_t>(), p["useful"].get<uint64_t>() + p["useless"].get<uint64_t>());
  EXPECT_EQ(plain["metrics"]["prefetch"]["issued"], 0);
}

TEST(SystemsCli, OraclePrefetchAccuracyIsMeasured) {
  const moesim::Json good = run_json(kBf16 + " --budget 8GiB --prefetch oracle:accuracy=1");
  const moesim::Json bad = run_json(kBf16 + " --budget 8GiB --prefetch oracle:accuracy=0");
  EXPECT_DOUBLE_EQ(good["metrics"]["prefetch"]["accuracy"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(bad["metrics"]["prefetch"]["accuracy"].get<double>(), 0.0);
  EXPECT_EQ(bad["metrics"]["prefetch"]["useless_bytes"], bad["metrics"]["prefetch"]["bytes"]);
  EXPECT_EQ(good["header"]["config"]["prefetch"], "oracle:accuracy=1,lookahead=1");
}

TEST(SystemsCli, ADiscreteGpusDramTierTurnsReadsIntoCopies) {
  const moesim::Json one = run_json(kBf16 + " --hw desktop-rtx4090 --budget 8GiB");
  const moesim::Json two = run_json(kBf16 + " --hw desktop-rtx4090 --budget 8GiB --host-budget 32GiB");
  EXPECT_EQ(two["header"]["config"]["memory"], "discrete");
  EXPECT_GT(two["metrics"]["states"]["host_hits"].get<uint64_t>(), 0u);
  EXPECT_LT(two["metrics"]["ssd_bytes_read"].get<uint64_t>(),
            one["metrics"]["ssd_bytes_read"].get<uint64_t>());
  EXPECT_LT(two["metrics"]["tpot"]["mean_s"].get<double>(), one["metrics"]["tpot"]["mean_s"].get<double>());
  // On unified memory a DRAM tier is meaningless.
  const Result r =
      moesim::test::moesim_combined("run --trace " + kTrace + kBf16 + " --budget 8GiB --host-budget 32GiB");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("discrete GPU"), std::string::npos) << r.out;
}

TEST(SystemsCli, LossyRoutingOnADiscreteGpuAsksWhatTheDeviceHolds) {
  // A DRAM tier changes where a device miss is served from, not what the GPU holds: a routing policy that
  // replaces the experts the GPU lacks (BuddyMoE's Random baseline) makes the same choices with and without
  // it, and so the device cache sees the same lookups.
  const std::string args = kBf16 + " --hw desktop-rtx4090 --budget 4GiB --routing random-resident";
  const moesim::Json one = run_json(args);
  const moesim::Json two = run_json(args + " --host-budget 32GiB");
  EXPECT_GT(one["metrics"]["routing_policy_counters"]["replaced"].get<uint64_t>(), 0u);
  EXPECT_EQ(two["metrics"]["routing_policy_counters"], one["metrics"]["routing_policy_counters"]);
  EXPECT_EQ(two["metrics"]["routing_deviation"]["changed"], one["metrics"]["routing_deviation"]["changed"]);
  EXPECT_EQ(two["metrics"]["cache"]["hits"], one["metrics"]["cache"]["hits"]);
  EXPECT_GT(two["metrics"]["states"]["host_hits"].get<uint64_t>(), 0u);
}

TEST(SystemsCli, ZipMoeOptionsOnOtherSystemsAreWarnedAbout) {
  const moesim::Json j = run_json(kBf16 + " --budget 8GiB --pools F=1 --ratio 0.4");
  const std::string w = j["warnings"].dump();
  EXPECT_NE(w.find("--pools only applies to --system zipmoe"), std::string::npos) << w;
  EXPECT_NE(w.find("--ratio only applies"), std::string::npos) << w;
  const Result r =
      moesim::test::moesim_combined("run --trace " + kTrace + kBf16 +
                                    " --hw desktop-rtx4090 --system zipmoe --budget 8GiB --host-budget 8GiB");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--host-budget"), std::string::npos) << r.out;
}

TEST(SystemsCli, ComputeOnTheCpu) {
  const moesim::Json j = run_json(kBf16 + " --budget 8GiB --compute-on cpu");
  EXPECT_EQ(j["header"]["config"]["compute_on"], "cpu");
  EXPECT_EQ(j["metrics"]["resources"]["link"]["ops"], 0);
  const Result r = moesim::test::moesim_combined("run --trace " + kTrace + " --budget 8GiB --compute-on npu");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--compute-on"), std::string::npos) << r.out;
}

TEST(SystemsCli, TimelineShowsPoolsAndPrefetches) {
  const auto dir = std::filesystem::temp_directory_path() / ("moesim_sys_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string tl = (dir / "tl.json").string();
  const Result r = moesim::test::moesim_combined("run --trace " + kTrace + kBf16 +
                                                 " --system zipmoe --budget 8GiB --prefetch oracle:accuracy=1"
                                                 " --timeline-steps 3:4 --timeline " +
                                                 tl);
  ASSERT_EQ(r.status, 0) << r.out;
  const moesim::Json t = moesim::load_json_file(tl);
  std::set<std::string> counters;
  bool prefetch = false;
  for (const auto& e : t) {
    if (e["ph"] == "C") counters.insert(e["name"].get<std::string>());
    if (e["ph"] == "X" && e["name"].get<std::string>().rfind("prefetch ", 0) == 0) prefetch = true;
  }
  for (const char* pool : {"F", "C", "S", "E"}) EXPECT_TRUE(counters.count(pool)) << pool;
  EXPECT_TRUE(prefetch);
  std::filesystem::remove_all(dir);
}

// A prefetch whose target state needs no read (every component it names is held already) is never in
// flight; before, it left an entry without ops behind and the run ended "did not complete".
TEST(SystemsCli, ZipMoePrefetchWithEveryInPoolEvictionCompletes) {
  for (const std::string policy : {"", "lru", "fifo"}) {  // "": the system's own in-pool eviction
    const Result r = moesim::test::moesim_combined(
        "-q run --trace " + kTrace + kBf16 + " --system zipmoe --budget 8GiB" +
        (policy.empty() ? "" : " --policy " + policy) + " --prefetch oracle:accuracy=1");
    EXPECT_EQ(r.status, 0) << policy << ": " << r.out;
    EXPECT_THAT(r.out, ::testing::HasSubstr("prefetch:")) << policy;
  }
}

}  // namespace
