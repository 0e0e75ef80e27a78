// The activation-aware prefetch policy (policies/prefetch/activation_prefetch.cpp): the first request is
// prefetched by the run's frequencies, later ones by the past request whose activation matrix is most like
// theirs, and no proposal reads an invocation that has not run.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "base/error.h"
#include "core/prefetch.h"
#include "tests/core/tiny_workload.h"

namespace moesim {
namespace {

constexpr uint32_t kLayers = 2, kExperts = 8;
using Proposal = std::tuple<uint16_t, uint16_t, uint32_t>;  // layer, expert, target invocation

// Steps of two invocations (layer 0, layer 1), each {layer-0 expert, layer-1 expert}; `prefill[s]` marks
// step s a prefill (a request's first step).
test::TinyWorkload workload(const std::vector<std::pair<uint32_t, uint32_t>>& steps, const std::vector<bool>& prefill) {
  std::vector<std::vector<std::vector<uint32_t>>> s;
  for (const auto& [a, b] : steps) s.push_back({{a}, {kExperts + b}});
  test::TinyWorkload w(s, {"w"});
  w.set_shape(kLayers, kExperts);
  for (size_t i = 0; i < steps.size(); ++i)
    if (prefill[i]) {
      w.phase[i] = 0;
      w.inv_phase[2 * i] = w.inv_phase[2 * i + 1] = 0;
    }
  return w;
}

// Every invocation's proposals, in order, from one fresh policy.
std::vector<std::set<Proposal>> proposals(const std::string& spec, const WorkloadView& v) {
  auto p = make_prefetch_policy(spec, PrefetchSetup{kLayers, kExperts, 1, 1});
  std::vector<std::set<Proposal>> all;
  uint32_t step = 0;
  for (uint32_t inv = 0; inv < v.lookups.invocations(); ++inv) {
    while (v.step_begin[step + 1] <= inv) ++step;
    std::vector<PrefetchRequest> out;
    p->propose(PrefetchContext{&v, inv, step, v.lookups.inv_layer[inv], v.step_phase[step] == 1}, out);
    std::set<Proposal> s;
    for (const auto& r : out) s.insert({r.layer, r.expert, r.target_invocation});
    all.push_back(s);
  }
  return all;
}

// Request A uses experts (0, 1), request B (2, 3), request C starts like B.
const std::vector<std::pair<uint32_t, uint32_t>> kSteps = {{0, 1}, {0, 1}, {2, 3}, {2, 3}, {2, 3}};
const std::vector<bool> kPrefill = {true, false, true, false, true};

TEST(ActivationAwarePrefetch, MatchesThePastRequestMostLikeTheCurrentOne) {
  const auto w = workload(kSteps, kPrefill);
  const auto got = proposals("activation-aware", w.view());
  ASSERT_EQ(got.size(), 10u);
  // A's prefill: nothing is known of layer 1 yet.
  EXPECT_TRUE(got[0].empty());
  // A's decode step: no past request; the run's frequencies so far (layer 1 used expert 1).
  EXPECT_EQ(got[2], (std::set<Proposal>{{1, 1, 3}}));
  // B's prefill ends A, the only past request: it predicts expert 1 although B's layer 0 differs.
  EXPECT_EQ(got[4], (std::set<Proposal>{{1, 1, 5}}));
  // C's prefill: B's matrix (layer 0 = {2}) matches C's exactly, A's not at all: expert 3.
  EXPECT_EQ(got[8], (std::set<Proposal>{{1, 3, 9}}));
  // The last layer has no next layer in its step.
  for (uint32_t inv = 1; inv < got.size(); inv += 2) EXPECT_TRUE(got[inv].empty()) << inv;
}

TEST(ActivationAwarePrefetch, ReadsNoInvocationThatHasNotRun) {
  // The same first four steps followed by different fifth steps: the proposals of the shared prefix agree.
  auto other = kSteps;
  other[4] = {5, 6};
  const auto a = proposals("activation-aware", workload(kSteps, kPrefill).view());
  const auto b = proposals("activation-aware", workload(other, kPrefill).view());
  for (uint32_t inv = 0; inv < 8; ++inv) EXPECT_EQ(a[inv], b[inv]) << inv;
}

TEST(ActivationAwarePrefetch, BadParametersAreUsageErrors) {
  const PrefetchSetup s{kLayers, kExperts, 1, 1};
  EXPECT_THROW(make_prefetch_policy("activation-aware:collection=0", s), UsageError);
  EXPECT_THROW(make_prefetch_policy("activation-aware:depth=0", s), UsageError);
  EXPECT_NO_THROW(make_prefetch_policy("activation-aware:collection=4,depth=2,per_layer=3", s));
}

}  // namespace
}  // namespace moesim
