// The SSD model's queue-depth curve (sim/resources.h, Ssd::set_depth_curve) and the page-cache hits the I/O
// thread serves without the SSD.
#include <gtest/gtest.h>

#include <map>

#include "sim/resources.h"

namespace moesim::sim {
namespace {

struct Log : JobListener {
  void job_done(uint32_t job, const OpTiming& t) override { done[job] = t; }
  std::map<uint32_t, OpTiming> done;
};

// Curve: depth 1 -> latency 100 us, 1 GB/s; depth 2 -> latency 200 us, 1.5 GB/s. Two reads of 1e6 bytes
// submitted at t = 0 (queue depth 2), worked by hand:
//   A is admitted alone (n = 1): latency 100 us. B is admitted next (n = 2): latency 200 us.
//   100 us: A transfers alone at bandwidth(2) = 1.5 GB/s (two reads in service).
//   200 us: A has moved 1.5e9 x 1e-4 = 150,000 bytes; B starts: they share 1.5 GB/s, 0.75 GB/s each.
//   A's remaining 850,000 bytes take 850,000 / 0.75e9 = 1133.33 us: A ends at 1333.33 us.
//   B moved the same 850,000 meanwhile; its last 150,000 at bandwidth(1) = 1 GB/s take 150 us: B ends at
//   1483.33 us.
// Without the curve (100 us, 1 GB/s): both end at 100 us + 2e6 / 1e9 = 2100 us.
TEST(SsdDepthCurve, TwoReadsWorkedByHand) {
  EventEngine e;
  Log log;
  Ssd ssd(e, 1e9, 100e-6, 2, &log);
  ssd.set_depth_curve({{1, 100e-6, 1e9}, {2, 200e-6, 1.5e9}});
  ssd.submit(0, 0, 1'000'000);
  ssd.submit(1, 0, 1'000'000);
  e.run();
  EXPECT_NEAR(log.done[0].end, 200e-6 + 850'000 / 0.75e9, 1e-12);
  EXPECT_NEAR(log.done[1].end, 200e-6 + 850'000 / 0.75e9 + 150e-6, 1e-12);
  EXPECT_NEAR(ssd.stats().busy_time, log.done[1].end, 1e-12);
}

TEST(SsdDepthCurve, ACurveFlatAtTheFixedValuesChangesNothing) {
  auto ends = [](bool curve) {
    EventEngine e;
    Log log;
    Ssd ssd(e, 1e9, 100e-6, 4, &log);
    if (curve) ssd.set_depth_curve({{1, 100e-6, 1e9}, {8, 100e-6, 1e9}});
    for (uint32_t j = 0; j < 6; ++j) ssd.submit(j, 0, 200'000 * (j + 1));
    e.run();
    std::map<uint32_t, double> out;
    for (const auto& [j, t] : log.done) out[j] = t.end;
    return out;
  };
  const auto plain = ends(false), flat = ends(true);
  for (uint32_t j = 0; j < 6; ++j) EXPECT_NEAR(flat.at(j), plain.at(j), 1e-12) << j;
}

TEST(SsdDepthCurve, DepthsBetweenPointsInterpolateAndOutsideClamp) {
  const std::vector<SsdDepthPoint> c = {{2, 100e-6, 1e9}, {6, 300e-6, 3e9}};
  EXPECT_DOUBLE_EQ(ssd_curve_at(c, 1).latency, 100e-6);
  EXPECT_DOUBLE_EQ(ssd_curve_at(c, 4).latency, 200e-6);
  EXPECT_DOUBLE_EQ(ssd_curve_at(c, 4).bandwidth, 2e9);
  EXPECT_DOUBLE_EQ(ssd_curve_at(c, 32).bandwidth, 3e9);
}

TEST(IoThreadPageCache, AHitTakesItsCopyTimeAndNeverReachesTheSsd) {
  EventEngine e;
  Log log;
  IoThread* io_ptr = nullptr;
  struct Fwd : JobListener {
    IoThread** io;
    void job_done(uint32_t job, const OpTiming& t) override { (*io)->job_done(job, t); }
  } fwd;
  fwd.io = &io_ptr;
  Ssd ssd(e, 1e6, 0.0, 4, &fwd);
  IoThread io(ssd, e, 1, &log);
  io_ptr = &io;
  io.submit(0, 0, 1'000'000, false, 0.25);  // a hit: 0.25 s, holding the thread's one outstanding read
  io.submit(1, 0, 1'000'000);               // a miss: 1 s on the SSD, after the hit
  e.run();
  EXPECT_NEAR(log.done[0].end, 0.25, 1e-12);
  EXPECT_NEAR(log.done[1].start, 0.25, 1e-12);
  EXPECT_NEAR(log.done[1].end, 1.25, 1e-12);
  EXPECT_EQ(ssd.stats().ops, 1u);
}

}  // namespace
}  // namespace moesim::sim
