// Learned prefetch predictors (transition, temporal, popularity): trained on one trace, evaluated on another;
// a predictor that is always right reproduces the exact oracle; no proposal depends on later invocations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <tuple>

#include "base/error.h"
#include "core/prefetch.h"
#include "tests/core/tiny_workload.h"
#include "traces/mtr_format.h"
#include "traces/trace.h"

namespace moesim {
namespace {

constexpr uint32_t kLayers = 3, kExperts = 8;

// Invocation (step s, layer l) picks experts {s % 8, (s + 3) % 8} of layer l (the same at every layer), or
// from step `change_from` on, {s % 8, (s + 5) % 8}.
test::TinyWorkload workload(uint32_t steps, uint32_t change_from = 1000) {
  std::vector<std::vector<std::vector<uint32_t>>> s;
  for (uint32_t i = 0; i < steps; ++i) {
    std::vector<std::vector<uint32_t>> invs;
    const uint32_t d = i >= change_from ? 5 : 3;
    for (uint32_t l = 0; l < kLayers; ++l) invs.push_back({l * kExperts + i % 8, l * kExperts + (i + d) % 8});
    s.push_back(invs);
  }
  test::TinyWorkload w(s, {"w"});
  w.set_shape(kLayers, kExperts);
  return w;
}

// The same routing as a decode trace file: the training trace.
std::string training_trace(uint32_t steps, uint32_t layers = kLayers) {
  traces::TraceInfo info;
  info.model = "test";
  info.layers = layers;
  info.experts = kExperts;
  info.top_k = 2;
  traces::TraceBuilder b(info, false, false, "training");
  uint64_t line = 0;
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t l = 0; l < layers; ++l) {
      const uint32_t e[2] = {s % 8, (s + 3) % 8};
      b.add(0, traces::Phase::kDecode, s, l, e, {}, {}, ++line);
    }
  const auto path = std::filesystem::temp_directory_path() /
                    ("moesim_prefetch_train_" + std::to_string(getpid()) + "_" + std::to_string(layers) + ".mtr");
  traces::write_mtr(std::move(b).finish(), path.string());
  return path.string();
}

using Proposal = std::tuple<uint16_t, uint16_t, uint32_t>;  // layer, expert, target

std::set<Proposal> propose(PrefetchPolicy& p, const WorkloadView& v, uint32_t inv) {
  std::vector<PrefetchRequest> out;
  uint32_t step = 0;
  while (v.step_begin[step + 1] <= inv) ++step;
  p.propose(PrefetchContext{&v, inv, step, v.lookups.inv_layer[inv], true}, out);
  std::set<Proposal> s;
  for (const auto& r : out) s.insert({r.layer, r.expert, r.target_invocation});
  return s;
}

const PrefetchSetup kSetup{kLayers, kExperts, 2, 42};

TEST(LearnedPrefetch, TransitionThatIsAlwaysRightIsTheExactOracle) {
  const std::string train = training_trace(16);
  const auto w = workload(10);
  const WorkloadView v = w.view();
  auto learned = make_prefetch_policy("transition:train=" + train, kSetup);
  auto oracle = make_prefetch_policy("oracle:accuracy=1,lookahead=1", kSetup);
  size_t nonempty = 0;
  for (uint32_t inv = 0; inv < v.lookups.invocations(); ++inv) {
    const auto a = propose(*learned, v, inv), b = propose(*oracle, v, inv);
    EXPECT_EQ(a, b) << "invocation " << inv;
    nonempty += !a.empty();
  }
  EXPECT_EQ(nonempty, 10u * (kLayers - 1));  // every layer but the last of each step
}

TEST(LearnedPrefetch, TemporalProposesThePreviousTokensExperts) {
  const auto w = workload(3);
  const WorkloadView v = w.view();
  auto p = make_prefetch_policy("temporal", kSetup);
  // Step 0 has no previous token.
  for (uint32_t inv = 0; inv < 3; ++inv) EXPECT_TRUE(propose(*p, v, inv).empty());
  // Step 1, layer 0 (invocation 3): layer 1's experts of step 0, {0, 3}, for invocation 4.
  EXPECT_EQ(propose(*p, v, 3), (std::set<Proposal>{{1, 0, 4}, {1, 3, 4}}));
}

TEST(LearnedPrefetch, PopularityProposesTheTrainingTracesMostUsed) {
  // Training over steps 0..1 uses experts {0, 3} and {1, 4}: all four equally often; ties go to lower ids.
  const std::string train = training_trace(2);
  const auto w = workload(1);
  const WorkloadView v = w.view();
  auto p = make_prefetch_policy("popularity:train=" + train + ",top=3", kSetup);
  EXPECT_EQ(propose(*p, v, 0), (std::set<Proposal>{{1, 0, 1}, {1, 1, 1}, {1, 3, 1}}));
  EXPECT_TRUE(propose(*p, v, 2).empty());  // the last layer: nothing of this step is left
}

TEST(LearnedPrefetch, NoProposalDependsOnLaterInvocations) {
  const std::string train = training_trace(16);
  const auto a = workload(8), b = workload(8, 4);  // the same until step 4, then different
  const WorkloadView va = a.view(), vb = b.view();
  for (const char* spec : {"transition", "temporal", "popularity"}) {
    SCOPED_TRACE(spec);
    const std::string s = std::string(spec) + (std::string(spec) == "temporal" ? "" : ":train=" + train);
    auto pa = make_prefetch_policy(s, kSetup), pb = make_prefetch_policy(s, kSetup);
    for (uint32_t inv = 0; inv < 4 * kLayers; ++inv) EXPECT_EQ(propose(*pa, va, inv), propose(*pb, vb, inv));
  }
}

TEST(LearnedPrefetch, TrainingErrorsNameTheFile) {
  EXPECT_THROW((void)make_prefetch_policy("transition", kSetup), Error);  // no train=
  const std::string other = training_trace(2, 2);                          // 2 layers, the run has 3
  try {
    (void)make_prefetch_policy("transition:train=" + other, kSetup);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(other), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moesim
