// The call-load measurement of `validate --cluster` (harness/cluster/call_load.h): a run's calls by the
// others in flight and by those of them using a CPU.
#include "harness/cluster/call_load.h"

#include <gtest/gtest.h>

#include <vector>

namespace moesim::harness {
namespace {

TEST(CallLoad, OverheadsByCallsInFlightAndByThoseUsingACpu) {
  // kind, submitted, received, start, end, returned (ms)
  const std::vector<CallSpan> ms = {
      {0, 0, 0.2, 0.3, 0.4, 0.6},       // alone: overhead 0.2 + 0.2
      {1, 10, 10.2, 10.3, 10.4, 10.7},  // alone: 0.5
      {1, 10.1, 10.5, 12, 12.1, 12.3},  // one in flight, in its hand-off (10.1 < 10.2): 0.6
      {1, 11, 11.1, 11.2, 11.3, 11.4},  // one in flight (the one above), waiting for its unit: 0.2
      {2, 20, 20.1, 20.1, 25, 25.2},    // an invocation
      {1, 21, 21.3, 21.3, 21.4, 21.5},  // one in flight, waiting for the network: 0.4
  };
  std::vector<CallSpan> calls;
  for (CallSpan c : ms) {
    for (double* t : {&c.submitted, &c.received, &c.start, &c.end, &c.returned}) *t *= 1e-3;
    calls.push_back(c);
  }
  const Json j = overhead_by_concurrency(calls);
  EXPECT_EQ(j["dense"]["by_inflight"]["0"]["calls"], 1);
  EXPECT_NEAR(j["dense"]["by_inflight"]["0"]["median_s"].get<double>(), 0.4e-3, 1e-12);
  const Json& e = j["expert"];
  EXPECT_EQ(e["by_inflight"]["0"]["calls"], 1);
  EXPECT_EQ(e["by_inflight"]["1"]["calls"], 3);
  EXPECT_NEAR(e["by_inflight"]["1"]["median_s"].get<double>(), 0.4e-3, 1e-12);
  EXPECT_EQ(e["by_active"]["0"]["calls"], 3);  // the lone one, and the two whose companion used no CPU
  EXPECT_NEAR(e["by_active"]["0"]["median_s"].get<double>(), 0.4e-3, 1e-12);
  EXPECT_EQ(e["by_active"]["1"]["calls"], 1);
  EXPECT_NEAR(e["by_active"]["1"]["median_s"].get<double>(), 0.6e-3, 1e-12);
  EXPECT_NEAR(e["by_inflight"]["1"]["mean_s"].get<double>(), 0.4e-3, 1e-12);  // (0.6 + 0.2 + 0.4) / 3
  EXPECT_NEAR(e["by_active"]["0"]["mean_s"].get<double>(), 1.1e-3 / 3, 1e-12);
}

TEST(CallLoad, CallsMadeTogetherCountEachOtherWhicheverComesFirst) {
  // Two expert calls made at the same time, then one alone: each of the two has the other in flight, in
  // either order of the input.
  std::vector<CallSpan> calls = {{1, 0, 1e-4, 2e-4, 3e-4, 5e-4},
                                 {1, 0, 2e-4, 3e-4, 4e-4, 7e-4},
                                 {1, 1e-2, 1.01e-2, 1.02e-2, 1.03e-2, 1.04e-2}};
  for (int swap = 0; swap < 2; ++swap) {
    if (swap) std::swap(calls[0], calls[1]);
    const Json j = overhead_by_concurrency(calls)["expert"]["by_inflight"];
    EXPECT_EQ(j["0"]["calls"], 1) << swap;
    EXPECT_EQ(j["1"]["calls"], 2) << swap;
    EXPECT_NEAR(j["1"]["mean_s"].get<double>(), (3e-4 + 5e-4) / 2, 1e-12) << swap;
  }
}

TEST(CallLoad, OverheadPointsCountTheCallsInFlightAsTheSimulatorDoes) {
  // kind, submitted, received, start, end, returned (ms); out of submission order on purpose
  const std::vector<CallSpan> ms = {
      {0, 1, 1.1, 1.2, 1.3, 1.4},     // the invocation and the expert of 0.6 in flight: x 2, 0.1 + 0.1
      {1, 0, 0.1, 0.2, 0.3, 0.5},     // first made: x 0, 0.1 + 0.2
      {1, 0, 0.15, 0.3, 0.4, 0.6},    // made at the same time, after it: x 1, 0.15 + 0.2
      {2, 0.2, 0.3, 0.3, 4.8, 5},     // an invocation: counted in flight, not a point
      {1, 0.6, 0.7, 0.9, 1.0, 1.05},  // the expert above returned at its submission: x 1, 0.1 + 0.05
      {1, 6, 6.1, 6.2, 6.3, 6.4},     // alone again: x 0, 0.1 + 0.1
  };
  std::vector<CallSpan> calls;
  for (CallSpan c : ms) {
    for (double* t : {&c.submitted, &c.received, &c.start, &c.end, &c.returned}) *t *= 1e-3;
    calls.push_back(c);
  }
  const auto p = overhead_points(calls, 0.05e-3);  // in submission order, each with the idle hand-off added
  const std::vector<std::pair<double, double>> want = {
      {0, 0.35e-3}, {1, 0.4e-3}, {1, 0.2e-3}, {2, 0.25e-3}, {0, 0.25e-3}};
  ASSERT_EQ(p.size(), want.size());
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i].first, want[i].first) << i;
    EXPECT_NEAR(p[i].second, want[i].second, 1e-12) << i;
  }
}

}  // namespace
}  // namespace moesim::harness
