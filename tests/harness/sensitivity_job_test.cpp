// `moesim sensitivity` called directly (harness/sensitivity_job.h) on the toy profile that plants a ranking
// flip (tests/data/hardware/toy-flip.json: ZipMoE with its one I/O thread ahead of LRU offloading at its
// assumed 500 us a read, behind at 1 ms) and a Zipf trace of the tiny model. What it reports is what a
// `run` of each system reports: its baseline is run_outcome()'s TPOT, and a run parameter scaled by a factor
// (the budget) is the run at the scaled value; the analysis does not depend on --jobs.
#include "harness/sensitivity_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_io.h"
#include "harness/arguments.h"
#include "harness/run_outcome.h"
#include "harness/trace_synth_job.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kModel = test::test_data("models/tiny-moe.json");
const std::string kToy = test::test_data("hardware/toy-flip.json");
const char* const kOffload = "offload:policy=lru";
const char* const kZipMoe = "zipmoe:io=thread";

class SensitivityJob : public test::TestDir {
 protected:
  void SetUp() override {
    TestDir::SetUp();
    TraceSynthArgs t;
    t.model = kModel;
    t.tokens = 64;
    t.seed = 1;
    t.zipf = 1.0;
    t.out = path("zipf.mtr");
    synth_trace(t);
  }
  // The spec's one point, with `extra` JSON keys added.
  std::string spec(const std::string& extra = "") const {
    std::ofstream(path("spec.json")) << R"({"trace": "zipf.mtr", "model": ")" << kModel << R"(", "hw": ")"
                                     << kToy << R"(", "budget": "4MiB", "systems": [")" << kOffload
                                     << R"(", ")" << kZipMoe << R"("], "metric": "tpot")" << extra << "}";
    return path("spec.json");
  }
  Json analyse(const std::string& spec_file, const std::string& factors, unsigned jobs) const {
    SensitivityArgs a;
    a.spec = spec_file;
    a.factors = factors;
    a.jobs = jobs;
    a.json = true;
    a.out = path("out.json");
    write_file_atomic(a.out, sensitivity_output(a));
    Json j = load_json_file(a.out);
    j.erase("header");
    return j;
  }
  // TPOT of `moesim run` with the point's options, the system as the spec names it.
  double run_tpot(const std::string& system, const std::string& budget) const {
    RunArgs a;
    a.trace = path("zipf.mtr");
    a.load.model = kModel;
    a.hw = kToy;
    a.system = parse_system_option(system);
    if (a.system.name == "offload") {  // the spec's offload:policy=lru
      a.system.values.clear();
      a.policies = {"lru"};
      a.policy_given = true;
    }
    a.budgets = {budget};
    return run_outcome(a).metrics["tpot"]["mean_s"].get<double>();
  }
};

TEST_F(SensitivityJob, TheBaselineIsEachSystemsRunAndTheFlipIsFound) {
  const Json j = analyse(spec(), "0.5,2", 1);
  ASSERT_EQ(j["points"].size(), 1u);
  const Json& p = j["points"][0];
  EXPECT_EQ(p["baseline"][kOffload].get<double>(), run_tpot(kOffload, "4MiB"));
  EXPECT_EQ(p["baseline"][kZipMoe].get<double>(), run_tpot(kZipMoe, "4MiB"));
  EXPECT_EQ(p["ranking"], Json::array({kZipMoe, kOffload}));
  // The toy's one assumption, x0.5 and x2: only the slower read flips the ranking.
  const Json& f = j["fields"];
  ASSERT_EQ(f.size(), 2u) << f.dump(1);
  EXPECT_EQ(f[0]["field"], "ssd.read_latency");
  EXPECT_FALSE(f[0]["flips"].get<bool>());
  EXPECT_TRUE(f[1]["flips"].get<bool>());
  EXPECT_DOUBLE_EQ(f[1]["value"].get<double>(), 1e-3);
  for (const char* s : {kOffload, kZipMoe}) {
    const double base = p["baseline"][s].get<double>(), slower = f[1]["systems"][s]["value"].get<double>();
    EXPECT_GT(slower, base) << s;
    EXPECT_DOUBLE_EQ(f[1]["systems"][s]["change"].get<double>(), (slower - base) / base) << s;
  }
  EXPECT_EQ(analyse(spec(), "0.5,2", 3), j);  // --jobs does not change the analysis
}

// A run parameter scaled by a factor: the runs at twice the budget.
TEST_F(SensitivityJob, TheBudgetScaledIsTheRunAtTheScaledBudget) {
  const Json j = analyse(spec(R"(, "fields": ["budget"])"), "2", 1);
  ASSERT_EQ(j["fields"].size(), 1u) << j.dump(1);
  const Json& f = j["fields"][0];
  EXPECT_EQ(f["field"], "budget");
  for (const char* s : {kOffload, kZipMoe})
    EXPECT_EQ(f["systems"][s]["value"].get<double>(), run_tpot(s, "8MiB")) << s;
}

TEST_F(SensitivityJob, RefusesAFactorOfOneAndAnUnknownMetricNamingTheJsonPath) {
  EXPECT_THAT(error_of([&] { analyse(spec(), "1", 1); }), HasSubstr("--factors"));
  EXPECT_THAT(error_of([&] { analyse(spec(R"(, "points": [{"metric": "speed"}])"), "", 1); }),
              HasSubstr("points[0].metric: unknown metric 'speed'"));
}

}  // namespace
}  // namespace moesim::harness
