// Warm state (`run --warm`, `--warm-from T`; serving::SystemConfig::warm_stream): the caches the measured
// pass starts from are the warm-up's, and the figures are the measured pass's alone. A budget that holds
// every expert the trace touches misses nothing after --warm and exactly the first uses without it; warming
// from another trace of the same model lands in between; the run is reproducible; bad warm-ups are refused;
// the touched share counts both traces; --warm-from is an input the output guard protects.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

namespace fs = std::filesystem;

class WarmStart : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_path("warm_start");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* seed : {"3", "4"})
      ASSERT_EQ(
          moesim_cli(std::string("-q trace synth --model qwen3-30b-a3b --tokens 24 --prompt-tokens 4 ") +
                     "--zipf 0.9 --seed " + seed + " -o " + dir_ + "/s" + seed + ".mtr")
              .code,
          0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static Json run(const std::string& args) {
    const CliResult r = moesim_cli("-q run " + dir_ + "/s3.mtr --json " + args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    return Json::parse(r.out);
  }
  static std::string dir_;
};
std::string WarmStart::dir_;

TEST_F(WarmStart, AWarmedCacheThatHoldsTheWorkingSetMissesNothing) {
  // 128 experts per layer: every expert the trace touches fits, so only first uses miss.
  const Json cold = run("--budget 128 --scope layer");
  const Json warm = run("--budget 128 --scope layer --warm");
  const Json& c = cold["metrics"]["cache"];
  const Json& w = warm["metrics"]["cache"];
  EXPECT_EQ(w["lookups"], c["lookups"]);  // the measured pass is the trace, once
  EXPECT_EQ(w["hits"], w["lookups"]);
  EXPECT_EQ(w["read_bytes"], 0);
  EXPECT_EQ(warm["metrics"]["ssd_bytes_read"], 0);
  // Cold, the misses are exactly the distinct experts touched: their bytes are what the trace touches.
  EXPECT_EQ(c["read_bytes"], cold["header"]["config"]["device_memory"]["trace_touched_expert_bytes"]);
  EXPECT_LT(warm["metrics"]["tpot"]["mean_s"].get<double>(), cold["metrics"]["tpot"]["mean_s"].get<double>());
  EXPECT_EQ(warm["metrics"]["tpot"]["count"], cold["metrics"]["tpot"]["count"]);
  EXPECT_EQ(warm["header"]["config"]["warm"], "--warm (the trace itself, once)");
  EXPECT_TRUE(cold["header"]["config"]["warm"].is_null());
  // Resource use is the measured pass's: less SSD time than the cold run's, not the two passes' sum.
  EXPECT_LT(warm["metrics"]["resources"]["ssd"]["utilization"].get<double>(),
            cold["metrics"]["resources"]["ssd"]["utilization"].get<double>());
}

TEST_F(WarmStart, WarmingFromAnotherTraceLandsBetweenColdAndWarm) {
  const std::string other = dir_ + "/s4.mtr";
  const Json cold = run("--budget 64 --scope layer");
  const Json self = run("--budget 64 --scope layer --warm");
  const Json from = run("--budget 64 --scope layer --warm-from " + other);
  const double hc = cold["metrics"]["cache"]["hit_rate"].get<double>(),
               hs = self["metrics"]["cache"]["hit_rate"].get<double>(),
               hf = from["metrics"]["cache"]["hit_rate"].get<double>();
  EXPECT_GT(hf, hc);  // another prompt's popular experts are this one's too
  EXPECT_LT(hf, hs);  // but not its own
  EXPECT_EQ(from["header"]["config"]["warm"], "--warm-from " + other);
  // The touched share counts both traces: at least the run's own.
  EXPECT_GT(from["header"]["config"]["device_memory"]["trace_touched_expert_bytes"].get<uint64_t>(),
            cold["header"]["config"]["device_memory"]["trace_touched_expert_bytes"].get<uint64_t>());
  // The same command, the same bytes.
  Json again = run("--budget 64 --scope layer --warm-from " + other);
  Json first = from;
  first.erase("header");
  again.erase("header");
  EXPECT_EQ(first.dump(), again.dump());
}

// The page cache stays warm too: mmapped dense weights faulted in by the warm-up are not faulted again, and
// the counts are the measured pass's (not both passes').
TEST_F(WarmStart, ThePageCacheStaysWarm) {
  // The bundled Q4_K_M trace on its phone: the dense weights fit beside a 2 GiB expert cache.
  const std::string opts =
      "--hw phone-oneplus-15r-bigmoeonedge --budget 2GiB --dense mmap --allow-overcommit";
  auto on_phone = [&](const std::string& extra) {
    const CliResult r = moesim_cli("-q run " + test::bundled_data("traces/qwen3-30b-a3b.route.csv") +
                                   " --json " + opts + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return Json::parse(r.out);
  };
  const Json cold = on_phone(""), warm = on_phone(" --warm");
  const Json &c = cold["header"]["config"]["page_cache"], &w = warm["header"]["config"]["page_cache"];
  EXPECT_GT(c["major_faults"].get<uint64_t>(), 0u);
  EXPECT_EQ(w["major_faults"], 0);
  EXPECT_EQ(w["misses"], 0);
  EXPECT_EQ(w["hits"].get<uint64_t>(), c["hits"].get<uint64_t>() + c["misses"].get<uint64_t>());
}

TEST_F(WarmStart, BadWarmUpsAreRefused) {
  const std::string base = "-q run " + dir_ + "/s3.mtr --budget 64 ";
  CliResult r = moesim_cli(base + "--warm --warm-from " + dir_ + "/s4.mtr");
  EXPECT_EQ(r.code, 2) << r.err;
  r = moesim_cli(base + "--warm-from " + dir_ + "/missing.mtr");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("missing.mtr"), std::string::npos) << r.err;
  ASSERT_EQ(
      moesim_cli("-q trace synth --model mixtral-8x7b --tokens 8 --zipf 0.9 --seed 1 -o " + dir_ + "/m.mtr")
          .code,
      0);
  r = moesim_cli(base + "--warm-from " + dir_ + "/m.mtr");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("warm the caches with a trace of the same model"), std::string::npos) << r.err;
  // The warm-up trace is an input: no output may replace it.
  const std::string keep = dir_ + "/keep.mtr";
  fs::copy_file(dir_ + "/s4.mtr", keep, fs::copy_options::overwrite_existing);
  const auto size = fs::file_size(keep);
  r = moesim_cli(base + "--warm-from " + keep + " --timeline " + keep);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(fs::file_size(keep), size);
}

}  // namespace
}  // namespace moesim::test
