// `moesim calibrate` from a trace, called directly (harness/calibration.h) in a few seconds: the tiny model
// (tests/data/models/tiny-moe.json) packed raw, a short Zipf trace served for real with whole-expert
// offloading on the CPU, and the profile fitted to its ops. The fits hold exactly the ops the measured run
// made, the in-sample error is the simulated TPOT against the measured one, and the profile loads as one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "base/json_io.h"
#include "core/hardware_profile.h"
#include "harness/calibration.h"
#include "harness/pack_job.h"
#include "harness/trace_synth_job.h"
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

class CalibrateTiny : public test::TestDir {
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
  CalibrateArgs args() const {
    CalibrateArgs ca;
    RunArgs& a = *ca.run;
    a.exec = true;
    a.trace = path("t.mtr");
    a.load.model = kModel;
    a.store = path("r.store");
    a.system = "offload";
    a.budgets = {"1MiB"};
    a.workers = 2;
    a.buffered = true;
    a.gpu = "off";
    ca.no_gemm_probe = true;
    ca.name = "tiny-test";
    return ca;
  }
};

TEST_F(CalibrateTiny, TheFitsHoldTheMeasuredRunsReadsAndTheProfileChecksItself) {
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

TEST_F(CalibrateTiny, RefusesARepeatOfZero) {
  CalibrateArgs ca = args();
  ca.repeat = 0;
  EXPECT_THAT(error_of([&] { calibrate(ca); }), HasSubstr("--repeat must be 1..1000"));
}

}  // namespace
}  // namespace moesim::harness
