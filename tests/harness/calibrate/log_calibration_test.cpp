// `calibrate --from-log` and `validate --log` (harness/calibrate/log_calibration.h,
// harness/validate/log_validation.h; their shared replay, harness/log_replay.h): the fit on the bundled
// Qwen3 log reproduces it in sample, a synthetic log made from known parameters gives them back, and logs
// that are not of the trace's run are refused with errors naming both files.
#include "harness/calibrate/log_calibration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "harness/validate/log_validation.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kData = test::bundled_data("traces/");
const std::string kLog = kData + "qwen3-30b-a3b.metrics";

// The engine's settings (docs/engine-logs.md).
std::shared_ptr<RunArgs> engine_run(const std::string& trace = kData + "qwen3-30b-a3b.route.csv") {
  auto a = std::make_shared<RunArgs>();
  a->trace = trace;
  a->hw = "phone-snapdragon-8gen3";
  a->system = PolicySpec{"offload", {}};
  a->policies = {"lru"};
  a->scope = "global";
  a->budgets = {"4000MiB"};
  a->compute_on = a->recover_on = "cpu";
  a->io_depth = 4;
  a->compute_after_loads = true;
  return a;
}

Json calibrated(const std::string& log, const std::shared_ptr<RunArgs>& a) {
  LogCalibrateArgs ca;
  ca.run = a;
  ca.log = log;
  return calibrate_from_log(ca);
}

TEST(LogCalibration, ReproducesTheQwenLogInSample) {
  const Json prof = calibrated(kLog, engine_run());
  const Json& e = prof["calibration"]["in_sample"]["errors"]["cost"];
  EXPECT_LE(std::fabs(e["tpot"].get<double>()), 0.05) << prof["calibration"].dump(1);
  EXPECT_LE(std::fabs(e["ttft"].get<double>()), 0.10) << prof["calibration"].dump(1);
  // Every fitted field names the log; what the log cannot give keeps the base profile's mark.
  for (const auto& [sec, key] :
       std::vector<std::pair<std::string, std::string>>{{"ssd", "read_bandwidth"},
                                                        {"ssd", "read_latency"},
                                                        {"cpu", "expert_bandwidth"},
                                                        {"cpu", "flops_per_core"},
                                                        {"cpu", "load_copy_bandwidth"},
                                                        {"gpu", "memory_bandwidth"}})
    EXPECT_THAT(prof[sec][key]["source"].get<std::string>(), HasSubstr("qwen3-30b-a3b.metrics"))
        << sec << "." << key;
  EXPECT_TRUE(prof["memory"]["capacity"].contains("assumption"));
  // validate --log on the profile reports the same errors.
  const std::string path = (std::filesystem::temp_directory_path() / "moesim-log-cal-test.json").string();
  std::ofstream(path) << prof.dump();
  LogValidateArgs va;
  va.run = engine_run();
  va.run->hw = path;
  va.log = kLog;
  const LogValidationOutput out = validate_log(va);
  EXPECT_NEAR(out.json["errors"]["cost"]["tpot"].get<double>(), e["tpot"].get<double>(), 1e-12);
  EXPECT_THAT(out.text, HasSubstr("TPOT"));
  std::filesystem::remove(path);
}

// A log written from a known profile's simulation: each token's io_ms, compute_ms and mgmt_ms exactly as the
// fitted models say, its wall time and the prefill time the simulator's.
std::string synthetic_log(const LogRun& r, const HardwareProfile& hw, double latency, double bw, double flops,
                          double copy) {
  serving::RunResult run;
  const std::vector<ReplayStep> steps = replay_steps(r, hw, &run);
  std::ostringstream s;
  s.precision(17);
  s << "step,steps,wall_ms,io_ms,compute_ms,read_bytes,cache_hit_pct,stall_ms,mgmt_ms,majflt,cpu_ms\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const ReplayStep& t = steps[i];
    const double io = static_cast<double>(t.reads) * latency + t.read_bytes * 4 / bw;
    s << i + 1 << "," << steps.size() << "," << 1e3 * t.seconds << "," << 1e3 * io << ","
      << 1e3 * t.flops / flops << "," << t.read_bytes << ",0,0," << 1e3 * t.read_bytes / copy << ",0,0\n";
  }
  double ttft = 0;
  for (const auto& st : run.result.steps)
    if (st.phase == 0) ttft += st.end - st.start;
  s << "# summary tokens=" << steps.size() << " n_prompt=28 prefill_s=" << ttft << "\n";
  return s.str();
}

TEST(LogCalibration, RecoversTheParametersOfASyntheticLog) {
  const double latency = 250e-6, bw = 3e9, flops = 30e9, copy = 5e9;
  RunArgs a = *engine_run();
  LogRun r = load_log_run(a, kLog, "");
  Json base = r.prepared.hw.raw;
  LogFit truth;
  truth.read_latency = latency;
  truth.read_bandwidth = bw;
  truth.flops = flops;
  truth.weight_rate = 1e13;  // the weights never bind: FLOP-bound
  truth.copy_rate = copy;
  const HardwareProfile hw = hardware_from_json(profile_with_fit(base, truth, 4, "test: "), "truth");
  const std::string path = (std::filesystem::temp_directory_path() / "moesim-synthetic.metrics").string();
  std::ofstream(path) << synthetic_log(r, hw, latency, bw, flops, copy);

  LogRun s = load_log_run(a, path, "");
  const LogFit f = fit_decode_tokens(s.log, replay_steps(s, hw), 4, s.prepared.costs.costs, true);
  EXPECT_NEAR(f.read_latency / latency, 1, 1e-6);
  EXPECT_NEAR(f.read_bandwidth / bw, 1, 1e-6);
  EXPECT_NEAR(f.flops / flops, 1, 1e-6);
  EXPECT_NEAR(f.copy_rate / copy, 1, 1e-6);
  EXPECT_NEAR(f.io_rel_rms, 0, 1e-6);

  // The whole calibration picks the FLOP-bound side and needs no prefill factor.
  const Json prof = calibrated(path, engine_run());
  EXPECT_EQ(prof["calibration"]["fits"]["compute_bound"], "flops");
  EXPECT_NEAR(prof["calibration"]["fits"]["prefill_compute_slowdown"].get<double>(), 1, 0.02);
  EXPECT_NEAR(prof["cpu"]["flops_per_core"]["value"].get<double>() / flops, 1, 1e-6);
  std::filesystem::remove(path);
}

TEST(LogCalibration, LogWithOtherTokenCountIsRefused) {
  std::ifstream in(kLog);
  std::string text, line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind("128,", 0) == 0) continue;  // drop the last token
    if (line.rfind("#", 0) != 0 && n++ > 0)
      line = line.substr(0, line.find(',')) + ",127" + line.substr(line.find(',', line.find(',') + 1));
    text += line + "\n";
  }
  const std::string path = (std::filesystem::temp_directory_path() / "moesim-short.metrics").string();
  std::ofstream(path) << text;
  RunArgs a = *engine_run();
  EXPECT_THAT(error_of([&] { (void)load_log_run(a, path, ""); }),
              HasSubstr("are not of one run: the log has 127 token rows, the trace 128 decode steps"));
  std::filesystem::remove(path);
}

TEST(LogCalibration, LogOfAnotherModelIsRefused) {
  RunArgs oss = *engine_run(kData + "gpt-oss-120b.route.csv");
  EXPECT_THAT(error_of([&] { (void)load_log_run(oss, kLog, ""); }),
              HasSubstr("are not of one run: the log has 128 token rows, the trace 64 decode steps"));
  // Another prompt: the summary's prompt tokens are not the trace's.
  std::ifstream in(kLog);
  std::stringstream text;
  text << in.rdbuf();
  std::string t = text.str();
  t.replace(t.find("n_prompt=28"), 11, "n_prompt=29");
  const std::string path = (std::filesystem::temp_directory_path() / "moesim-prompt.metrics").string();
  std::ofstream(path) << t;
  RunArgs a = *engine_run();
  EXPECT_THAT(error_of([&] { (void)load_log_run(a, path, ""); }),
              HasSubstr("the log's summary (line 130) has 29 prompt tokens, the trace 28"));
  std::filesystem::remove(path);
  // Same shape of run, other bytes read: another budget (or model) than the log's.
  RunArgs small = *engine_run();
  small.budgets = {"1000MiB"};
  const LogRun r = load_log_run(small, kLog, "");
  EXPECT_THAT(error_of([&] { (void)replay_steps(r, r.prepared.hw); }), HasSubstr("are not of one run"));
}

}  // namespace
}  // namespace moesim::harness
