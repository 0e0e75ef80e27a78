// `moesim validate --cluster` end to end (harness/cluster/cluster_validation.h) on the emulated three-server
// tiny-moe cluster: a calibration session and two exec runs of 20 s, each replayed into the simulator
// (structure) and compared with the calibrated model (cost). It checks the report's shape and its sanity --
// every run's errors are finite and of the order of the model's, the verdicts are verdicts -- not the
// targets, whose verdicts depend on the machine (bench/results/cluster-exec-2026-11-28.md). Root only
// (network namespaces).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/cli/cluster_exec_util.h"

namespace moesim::test {
namespace {

TEST(ClusterValidate, ReportsStructureAndCostErrorsOverTheRuns) {
  if (const std::string why = exec::EmulatedNetwork::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const ExecCluster c = make_exec_cluster("validate", {}, "poisson:1s");
  const EmulatedRunLock lock;
  RunCleanup cleanup{c.spec, "", ""};
  const std::string out = (c.dir / "v.json").string();
  const CliResult r = moesim_cli("-q validate --cluster " + c.spec +
                                 " --placement prism --duration 20s --repeat 2 --json -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = load_json_file(out);
  EXPECT_EQ(j["platform"]["kind"], "exec");
  ASSERT_EQ(j["exec"]["latency_mean_s"].size(), 2u);
  for (const char* check : {"structure", "cost"}) {
    const Json& e = j["errors"][check];
    ASSERT_EQ(e["runs"].size(), 2u) << check;
    for (const Json& x : e["runs"]) {
      EXPECT_TRUE(std::isfinite(x.get<double>())) << check;
      EXPECT_LT(std::fabs(x.get<double>()), 0.5) << check << ": " << j["errors"].dump();
    }
    EXPECT_THAT(j["verdicts"][check].get<std::string>(), ::testing::AnyOf("met", "missed", "inconclusive"));
  }
  // The calibration's lines are a machine's: a positive cost per token and a call overhead under 10 ms.
  for (const auto& [name, s] : j["calibration"]["servers"].items())
    EXPECT_GT(s["expert_per_token_s"], 0) << name;
  EXPECT_GT(j["calibration"]["call_overhead_s"], 0);
  EXPECT_LT(j["calibration"]["call_overhead_s"], 0.01);
  // Every kind of call appears in where the time went.
  for (const char* kind : {"dense", "expert", "invoke"}) EXPECT_GT(j["breakdown"][kind]["calls"], 0) << kind;
  std::filesystem::remove_all(c.dir);
}

}  // namespace
}  // namespace moesim::test
