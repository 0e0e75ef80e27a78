// `moesim calibrate --from-log` and `moesim validate --log` end to end (MOESIM_CLI_PATH): the bundled Qwen3
// log fitted and validated with the engine's settings as options (docs/engine-logs.md), and bad logs and
// options (exit status, file, line and column named).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using moesim::Json;
using moesim::test::moesim_cli;
using moesim::test::temp_path;
using ::testing::HasSubstr;

const std::string kData = moesim::test::bundled_data("traces/");
const std::string kRun =
    " --trace " + kData +
    "qwen3-30b-a3b.route.csv --system offload --policy lru --scope global "
    "--budget 4000MiB --compute-on cpu --recover-on cpu --io-depth 4 --compute-after-loads";

TEST(EngineLogCli, CalibrateThenValidateReproducesTheLog) {
  const std::string prof = temp_path("from-log.json");
  const auto cal =
      moesim_cli("calibrate --from-log " + kData + "qwen3-30b-a3b.metrics" + kRun + " -o " + prof);
  ASSERT_EQ(cal.code, 0) << cal.err;
  EXPECT_THAT(cal.err, HasSubstr("calibrated from"));
  const auto v =
      moesim_cli("validate --log " + kData + "qwen3-30b-a3b.metrics" + kRun + " --hw " + prof + " --json");
  ASSERT_EQ(v.code, 0) << v.err;
  const Json j = Json::parse(v.out);
  EXPECT_LE(std::fabs(j["errors"]["cost"]["tpot"].get<double>()), 0.05) << v.out;
  EXPECT_LE(std::fabs(j["errors"]["cost"]["ttft"].get<double>()), 0.10) << v.out;
  const auto text = moesim_cli("validate --log " + kData + "qwen3-30b-a3b.metrics" + kRun + " --hw " + prof);
  EXPECT_THAT(text.out, HasSubstr("TPOT"));
  EXPECT_THAT(text.out, HasSubstr("TTFT"));
}

TEST(EngineLogCli, BadLogNamesFileLineAndColumn) {
  const std::string log = temp_path("bad.metrics");
  std::ofstream(log) << "step,steps,wall_ms,io_ms,compute_ms,read_bytes,stall_ms,mgmt_ms\n1,1,12,x,3,4,0,0\n"
                        "# summary n_prompt=28 prefill_s=1\n";
  const auto r = moesim_cli("calibrate --from-log " + log + kRun + " -o " + temp_path("p.json"));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr(log + ":2: field 'io_ms': column 4: 'x' is not a finite non-negative number"));
}

TEST(EngineLogCli, UsageErrors) {
  const std::string log = kData + "qwen3-30b-a3b.metrics";
  EXPECT_EQ(
      moesim_cli("calibrate --from-log " + log + kRun + " --log-fields wall=x -o " + temp_path("p.json"))
          .code,
      2);
  const auto gpu = moesim_cli("calibrate --from-log " + log + " --trace " + kData +
                              "qwen3-30b-a3b.route.csv "
                              "--budget 4000MiB -o " +
                              temp_path("p.json"));
  EXPECT_EQ(gpu.code, 2);
  EXPECT_THAT(gpu.err, HasSubstr("--compute-on cpu"));
  EXPECT_EQ(moesim_cli("validate --log " + log + kRun).code, 2);  // no --hw
  EXPECT_EQ(moesim_cli("run" + kRun + " --prefetch next-layer").code, 2);
}

}  // namespace
