// One run as data (harness/run_outcome.h) and the replay's output text (harness/replay_job.h), the entry
// points the CLI and the Python module share: the timings kept are the samples the metrics summarize, and a
// trace handed over already loaded gives what reading its path gives.
#include "harness/run_outcome.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "base/json_io.h"
#include "harness/replay_job.h"
#include "tests/fixtures.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

const std::string kTrace = test::bundled_data("traces/gpt-oss-120b.route.csv");

RunArgs run_args() {
  RunArgs a;
  a.trace = kTrace;
  a.budgets = {"8"};
  a.json = true;
  return a;
}

TEST(RunOutcome, TheStepAndInvocationTimingsAreTheSamplesOfTheMetrics) {
  RunArgs a = run_args();
  const RunOutcome o = run_outcome(a);
  double tpot_max = 0;
  uint64_t decode_steps = 0;
  for (size_t i = 0; i < o.step_s.size(); ++i)
    if (o.step_phase[i] == 1) {
      ++decode_steps;
      tpot_max = std::max(tpot_max, o.step_s[i]);
    }
  ASSERT_GT(decode_steps, 0u);
  EXPECT_EQ(decode_steps, o.metrics["tpot"]["count"].get<uint64_t>());
  EXPECT_EQ(tpot_max, o.metrics["tpot"]["max_s"].get<double>());
  EXPECT_EQ(o.step_s.size(), o.metrics["steps"].get<size_t>());
  EXPECT_EQ(o.invocation_s.size(), o.metrics["layer_makespan"]["count"].get<size_t>());
  EXPECT_EQ(o.invocation_layer.size(), o.invocation_s.size());
  EXPECT_EQ(*std::max_element(o.invocation_s.begin(), o.invocation_s.end()),
            o.metrics["layer_makespan"]["max_s"].get<double>());
  const Json j = run_outcome_json(a, o);
  EXPECT_EQ(j["header"]["command"], "run");
  EXPECT_EQ(j["metrics"], o.metrics);
}

TEST(RunOutcome, ALoadedTraceRunsAsItsPathDoes) {
  RunArgs by_path = run_args(), loaded = run_args();
  loaded.loaded = std::make_shared<const traces::Trace>(traces::load_trace(kTrace));
  EXPECT_EQ(run_outcome(by_path).metrics, run_outcome(loaded).metrics);
}

TEST(ReplayOutput, ALoadedTraceReplaysAsItsPathDoes) {
  ReplayArgs a;
  a.trace = kTrace;
  a.policies = {"lru", "belady"};
  a.budgets = {"4", "8"};
  a.json = true;
  ReplayArgs b = a;
  b.loaded = std::make_shared<const traces::Trace>(traces::load_trace(kTrace));
  Json ja = Json::parse(replay_output(a)), jb = Json::parse(replay_output(b));
  ASSERT_EQ(ja["results"].size(), 4u);
  for (Json* j : {&ja, &jb})
    for (auto& r : (*j)["results"]) {
      r.erase("replay_s");
      r.erase("lookups_per_s");
    }
  EXPECT_EQ(ja["results"], jb["results"]);
  EXPECT_EQ(ja["trace"], jb["trace"]);
}

}  // namespace
}  // namespace moesim::harness
