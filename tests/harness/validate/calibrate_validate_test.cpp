// `moesim calibrate` from a trace and `moesim validate`, called directly (harness/calibrate/calibration.h,
// harness/validate/validation.h) in about a second: the tiny model (tests/data/models/tiny-moe.json) packed
// raw, a short Zipf trace served for real with whole-expert offloading on the CPU, and the profile fitted to
// its ops. The fits hold exactly the ops the measured run made, the in-sample error is the simulated TPOT
// against the measured one, and the profile loads as one. Validation's structure check replays every op the
// real run made, and each error and target is what its figures say.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.h"
#include "base/json_io.h"
#include "core/hardware_profile.h"
#include "harness/calibrate/calibration.h"
#include "harness/pack_job.h"
#include "harness/trace_synth_job.h"
#include "harness/validate/validation.h"
#include "harness/weights_synth_job.h"
#include "tests/cli/cli_test_util.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kModel = test::test_data("models/tiny-moe.json");

class CalibrateValidate : public test::TestDir {
 protected:
  void SetUp() override {
    TestDir::SetUp();
    MOESIM_SKIP_WITHOUT_EXEC();
    WeightsSynthArgs w;
    w.model = kModel;
    w.seed = 1;
    w.out = path("w.safetensors");
    weights_synth(w);
    PackArgs p;
    p.weights = w.out;
    p.codec = "raw";
    p.shards = 1;
    p.threads = 1;
    p.out = path("r.store");
    pack_store(p);
    TraceSynthArgs t;
    t.model = kModel;
    t.tokens = 24;
    t.prompt_tokens = 8;
    t.zipf = 0.8;
    t.seed = 3;
    t.out = path("t.mtr");
    synth_trace(t);
  }
  // The run options of both commands: offloading from the raw store, on the CPU.
  void run_options(RunArgs& a) const {
    a.exec = true;
    a.trace = path("t.mtr");
    a.load.model = kModel;
    a.store = path("r.store");
    a.system = PolicySpec{"offload", {}};
    a.budgets = {"1MiB"};
    a.workers = 2;
    a.buffered = true;
    a.gpu = "off";
  }
  CalibrateArgs args() const {
    CalibrateArgs ca;
    run_options(*ca.run);
    ca.no_gemm_probe = true;
    ca.name = "tiny-test";
    return ca;
  }
};

TEST_F(CalibrateValidate, TheFitsHoldTheMeasuredRunsReadsAndTheProfileChecksItself) {
  CalibrateArgs ca = args();
  const Json prof = calibrate(ca);
  EXPECT_EQ(prof["name"], "tiny-test");
  const Json& cal = prof["calibration"];
  EXPECT_EQ(cal["runs"], 1);
  const Json& in = cal["in_sample"];
  ASSERT_EQ(in["runs"].size(), 1u);
  uint64_t reads = 0;
  for (const auto& [kind, v] : in["runs"][0]["op_kinds"].items())
    if (kind.rfind("ssd_read", 0) == 0) reads += v["ops"].get<uint64_t>();
  EXPECT_GT(reads, 0u);
  EXPECT_EQ(cal["fits"]["ssd_read"]["points"].get<uint64_t>() +
                cal["fits"].value("ssd_read_prefill", Json::object()).value("points", uint64_t{0}),
            reads);
  EXPECT_GT(in["sim_tpot_s"].get<double>(), 0);
  EXPECT_NEAR(in["tpot_error"].get<double>(),
              in["sim_tpot_s"].get<double>() / in["exec_tpot_median_s"].get<double>() - 1, 1e-12);
  // The profile is a hardware profile: it loads, every field sourced.
  write_json_file(path("p.json"), prof);
  EXPECT_EQ(load_hardware(path("p.json")).name, "tiny-test");
}

TEST_F(CalibrateValidate, RefusesARepeatOfZero) {
  CalibrateArgs ca = args();
  ca.repeat = 0;
  EXPECT_THAT(error_of([&] { calibrate(ca); }), HasSubstr("--repeat must be 1..1000"));
}

// Validation with a profile calibrated on the same minutes (--calibrate-on the validated trace).
TEST_F(CalibrateValidate, EveryOpIsMatchedAndEachErrorIsItsFiguresRatio) {
  ValidateArgs va;
  run_options(*va.run);
  va.run->json = true;
  va.calibrate_on = path("t.mtr");
  va.no_gemm_probe = true;
  const ValidationOutput v = validate(va);
  const Json& s = v.json["errors"]["structure"];
  EXPECT_GT(s["ops_matched"].get<uint64_t>(), 0u);
  EXPECT_EQ(s["ops_unmatched"], 0);
  for (const char* check : {"structure", "cost"})
    for (const char* m : {"tpot", "ttft"}) {
      const Json& e = v.json["errors"][check];
      const std::string key = std::string(m) + "_s";
      EXPECT_NEAR(e[m].get<double>(), e["sim"][key].get<double>() / e["exec"][key].get<double>() - 1, 1e-12)
          << check << " " << m;
    }
  // The default targets, each met when its error is within its limit.
  ASSERT_EQ(v.json["targets"].size(), 3u);
  for (const Json& t : v.json["targets"])
    EXPECT_EQ(t["met"].get<bool>(), std::abs(t["error"].get<double>()) <= t["limit"].get<double>()) << t;
  EXPECT_TRUE(v.text.empty());  // JSON asked for
}

}  // namespace
}  // namespace moesim::harness
