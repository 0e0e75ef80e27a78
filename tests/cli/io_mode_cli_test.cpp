// `--io direct|buffered|uring` in the simulator (sim/page_cache.h) and the SSD's queue-depth curve in a
// profile (ssd.queue_depth_curve): a buffered run re-reads experts out of the page cache when the pools leave
// DRAM free, and a bad curve is an error naming the file and the JSON path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/data_dir.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kQwen = test::bundled_data("traces/qwen3-30b-a3b.route.csv");
// A 2 GiB global cache of qwen3's 9 MiB experts: most of each token's experts are misses, re-read later.
const std::string kRun = "run " + kQwen + " --model qwen3-30b-a3b --system offload --budget 2GiB --json";

std::string write_hw(const std::string& name, const Json& hw) {
  const std::string path = temp_path(name);
  std::ofstream(path) << hw.dump(2);
  return path;
}

Json orin() {
  return load_json_file(resolve_preset("hardware", "jetson-agx-orin-64gb"));
}

Json run_json(const std::string& args) {
  const CliResult r = moesim_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return Json::parse(r.out);
}

double tpot(const Json& j) {
  return j["metrics"]["tpot"]["mean_s"].get<double>();
}

TEST(IoModeCli, BufferedRereadsHitThePageCacheWhenThePoolsLeaveDramFree) {
  const Json direct = run_json(kRun + " --io direct");
  const Json buffered = run_json(kRun + " --io buffered");
  // 64 GiB of DRAM less the 2 GiB budget and the dense weights: every expert, once read, stays cached.
  EXPECT_LT(tpot(buffered), 0.5 * tpot(direct));
  EXPECT_EQ(buffered["header"]["config"]["io"], "buffered");
  EXPECT_GT(buffered["header"]["config"]["page_cache"]["hits"].get<uint64_t>(), 0u);
  // The same run on a profile whose DRAM the budget fills: nothing stays cached, the reads are direct ones.
  Json hw = orin();
  hw["memory"]["capacity"] = {{"value", "2GiB"}, {"assumption", "a test: the budget fills DRAM"}};
  const std::string full = write_hw("io-full-dram.json", hw);
  const Json full_direct = run_json(kRun + " --io direct --hw " + full + " --force");
  const Json full_buffered = run_json(kRun + " --io buffered --hw " + full + " --force");
  EXPECT_EQ(tpot(full_buffered), tpot(full_direct));
  EXPECT_EQ(full_buffered["header"]["config"]["page_cache"]["capacity_bytes"], 0);
  EXPECT_EQ(full_buffered["header"]["config"]["page_cache"]["hits"], 0);
}

// ZipMoE's fused reads (a CPU worker reads its E-chunk) go as the run's reads go: in a buffered run an
// E-chunk read before is a copy out of the page cache; in a direct run every one goes to the SSD.
TEST(IoModeCli, FusedReadsUseThePageCacheInABufferedRunOnly) {
  // The same pools for both variants, so that they make the same reads; the page cache (49 GB left free)
  // never evicts, so each variant's hits are its reads less the distinct ones.
  const std::string zip =
      "run " + kQwen +
      " --model qwen3-30b-a3b --budget 16GiB --json --system zipmoe:pools=F=0.6+C=0.3+E=0.1,io=";
  const Json direct = run_json(zip + "fused --io direct");
  const Json fused = run_json(zip + "fused --io buffered");
  const Json thread = run_json(zip + "thread --io buffered");
  EXPECT_FALSE(direct["header"]["config"].contains("page_cache"));
  const Json& pf = fused["header"]["config"]["page_cache"];
  const Json& pt = thread["header"]["config"]["page_cache"];
  EXPECT_GT(pf["hits"].get<uint64_t>(), 0u);
  EXPECT_EQ(pf["hits"], pt["hits"]);
  EXPECT_EQ(pf["misses"], pt["misses"]);
  EXPECT_LT(tpot(fused), tpot(direct));
}

TEST(IoModeCli, UringAndTheOlderPreadSpellingSimulateAsDirect) {
  const double direct = tpot(run_json(kRun + " --io direct"));
  EXPECT_EQ(tpot(run_json(kRun + " --io uring")), direct);
  EXPECT_EQ(tpot(run_json(kRun + " --io pread")), direct);
  const CliResult bad = moesim_cli(kRun + " --io aio");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--io"));
}

TEST(IoModeCli, AQueueDepthCurveShapesTheReadsAndIsRestedOn) {
  Json hw = orin();
  hw["ssd"].erase("queue_depth_curve");
  const std::string plain_path = write_hw("io-no-curve.json", hw);
  // A disk three times as fast at depth 4 as at depth 1 (a test's numbers).
  hw["ssd"]["queue_depth_curve"] = {
      {"value", Json::array({{{"depth", 1}, {"latency", "90us"}, {"bandwidth", "1GB/s"}},
                             {{"depth", 4}, {"latency", "120us"}, {"bandwidth", "3GB/s"}}})},
      {"assumption", "a test's curve"}};
  const std::string path = write_hw("io-curve.json", hw);
  const Json plain = run_json(kRun + " --io-depth 4 --hw " + plain_path);
  const Json curved = run_json(kRun + " --io-depth 4 --hw " + path);
  EXPECT_NE(tpot(curved), tpot(plain));
  EXPECT_THAT(curved.dump(), HasSubstr("ssd.queue_depth_curve"));
  EXPECT_THAT(plain.dump(), Not(HasSubstr("ssd.queue_depth_curve")));
}

std::vector<std::string> rests_on_fields(const Json& j) {
  std::vector<std::string> out;
  for (const auto& r : j["rests_on"]) out.push_back(r["field"].get<std::string>());
  return out;
}

// A curve without a depth-1 point takes ssd.read_latency and ssd.read_bandwidth there: one read in flight at
// a time runs as without the curve and rests on read_latency alone; deeper queues read the curve too.
TEST(IoModeCli, ACurveWithoutADepthOnePointKeepsReadLatencyAtDepthOne) {
  Json hw = orin();
  hw["ssd"].erase("queue_depth_curve");
  const std::string plain_path = write_hw("io-no-curve-2.json", hw);
  hw["ssd"]["queue_depth_curve"] = {
      {"value", Json::array({{{"depth", 4}, {"latency", "300us"}, {"bandwidth", "1GB/s"}}})},
      {"assumption", "a test's curve"}};
  const std::string path = write_hw("io-curve-from-4.json", hw);
  const Json plain1 = run_json(kRun + " --hw " + plain_path), curved1 = run_json(kRun + " --hw " + path);
  EXPECT_EQ(tpot(curved1), tpot(plain1));
  EXPECT_THAT(rests_on_fields(curved1), ::testing::Contains("ssd.read_latency"));
  EXPECT_THAT(rests_on_fields(curved1), Not(::testing::Contains("ssd.queue_depth_curve")));
  const Json plain4 = run_json(kRun + " --io-depth 4 --hw " + plain_path);
  const Json curved4 = run_json(kRun + " --io-depth 4 --hw " + path);
  EXPECT_GT(tpot(curved4), tpot(plain4));  // the test's curve is slower at depth 4 than 90 us and 3.5 GB/s
  EXPECT_THAT(rests_on_fields(curved4),
              ::testing::IsSupersetOf({"ssd.read_latency", "ssd.queue_depth_curve"}));
}

// `moesim sensitivity` scales the scalar fields a comparison rests on; a queue-depth curve it rests on is a
// list, with no one factor to scale by: it is listed, not scaled (and the analysis runs).
TEST(IoModeCli, SensitivityListsButDoesNotScaleACurve) {
  const std::string dir = fresh_test_dir("io_mode", "sensitivity").string();
  const std::string model = test::test_data("models/tiny-moe.json");
  ASSERT_EQ(
      moesim_cli("-q trace synth --model " + model + " --tokens 16 --zipf 1.0 --seed 1 -o " + dir + "/z.mtr")
          .code,
      0);
  Json hw = orin();
  hw["ssd"]["queue_depth_curve"] = {
      {"value", Json::array({{{"depth", 4}, {"latency", "300us"}, {"bandwidth", "1GB/s"}}})},
      {"assumption", "a test's curve"}};
  const std::string hw_path = write_hw("io-sens-curve.json", hw);
  std::ofstream(dir + "/spec.json") << Json({{"trace", "z.mtr"},
                                             {"model", model},
                                             {"hw", hw_path},
                                             {"budget", "2MiB"},
                                             {"systems",
                                              Json::array({"offload:policy=lru", "offload:policy=fifo"})},
                                             {"metric", "tpot"},
                                             {"io_depth", 4}})
                                           .dump();
  const Json s = run_json("-q sensitivity " + dir + "/spec.json --json");
  EXPECT_THAT(rests_on_fields(s["points"][0]), ::testing::Contains("ssd.queue_depth_curve"));
  for (const auto& f : s["fields"]) EXPECT_NE(f["field"], "ssd.queue_depth_curve");
  EXPECT_FALSE(s["fields"].empty());
}

void expect_bad_curve(const Json& curve, const std::string& name, const std::string& message) {
  Json hw = orin();
  hw["ssd"]["queue_depth_curve"] = {{"value", curve}, {"assumption", "a test"}};
  const std::string path = write_hw(name, hw);
  const CliResult r = moesim_cli(kRun + " --hw " + path);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.code, 70);
  EXPECT_THAT(r.err, HasSubstr(path));
  EXPECT_THAT(r.err, HasSubstr(message));
}

TEST(IoModeCli, ABadQueueDepthCurveNamesTheFileAndPath) {
  const Json p1 = {{"depth", 4}, {"latency", "90us"}, {"bandwidth", "1GB/s"}};
  const Json p2 = {{"depth", 2}, {"latency", "90us"}, {"bandwidth", "1GB/s"}};
  expect_bad_curve(Json::array({p1, p2}), "curve-order.json", "ssd.queue_depth_curve.value[1].depth");
  Json zero = p1;
  zero["bandwidth"] = 0;
  expect_bad_curve(Json::array({zero}), "curve-zero.json", "ssd.queue_depth_curve.value[0].bandwidth");
  Json negative = p1;
  negative["latency"] = -1;
  expect_bad_curve(Json::array({negative}), "curve-negative.json", "ssd.queue_depth_curve.value[0].latency");
  expect_bad_curve(Json::array(), "curve-empty.json", "ssd.queue_depth_curve.value");
  Json typo = p1;
  typo["bandwith"] = "1GB/s";
  expect_bad_curve(Json::array({typo}), "curve-typo.json",
                   "did you mean ssd.queue_depth_curve.value[0].bandwidth");
}

// exec --io buffered reads without O_DIRECT, and says when the store fits in memory (a test store always
// does); --io direct says nothing of the kind.
TEST(IoModeCli, ExecBufferedReadsWithoutODirectAndWarnsThatASmallStoreStaysCached) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const std::string dir = fresh_test_dir("io_mode", "exec").string();
  const std::string model = test::test_data("models/tiny-moe.json");
  ASSERT_EQ(moesim_cli("-q weights synth --model " + model + " --seed 1 -o " + dir + "/w.safetensors").code,
            0);
  ASSERT_EQ(
      moesim_cli("-q pack --weights " + dir + "/w.safetensors --codec raw --shards 1 -o " + dir + "/r.store")
          .code,
      0);
  ASSERT_EQ(moesim_cli("-q trace synth --model " + model +
                       " --tokens 8 --prompt-tokens 4 --zipf 0.8 --seed 3 -o " + dir + "/t.mtr")
                .code,
            0);
  const std::string cmd = "exec " + dir + "/t.mtr --model " + model + " --store " + dir +
                          "/r.store --system offload --budget 1MiB --workers 1 --gpu off --json";
  const Json buffered = run_json(cmd + " --io buffered");
  EXPECT_FALSE(buffered["exec"]["direct_io"].get<bool>());
  EXPECT_EQ(buffered["header"]["config"]["io"], "buffered");
  EXPECT_THAT(buffered["warnings"].dump(), HasSubstr("fits in this machine's available memory"));
  const Json flag = run_json(cmd + " --buffered");  // the older flag: buffered whatever --io says
  EXPECT_EQ(flag["header"]["config"]["buffered"], true);
  EXPECT_THAT(flag["warnings"].dump(), HasSubstr("fits in this machine's available memory"));
  const Json direct = run_json(cmd + " --io direct");
  EXPECT_THAT(direct["warnings"].dump(), Not(HasSubstr("fits in this machine's available memory")));
}

}  // namespace
}  // namespace moesim::test
