// The simulator's model of a real engine's own costs (sim/sim_platform.h: dispatch, pipeline, wake,
// turnaround and planning latencies) and measured durations (sim/measured_durations.h), by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/measured_durations.h"
#include "sim/sim_platform.h"

namespace moesim::sim {
namespace {

HardwareProfile profile() {
  Json j = {{"name", "test"},
            {"ssd", {{"read_bandwidth", "1GB/s"}, {"read_latency", "100us"}, {"queue_depth", 1}}},
            {"memory", {{"capacity", "8GiB"}, {"bandwidth", "100GB/s"}, {"unified", true}}},
            {"cpu", {{"cores", 1}, {"memcpy_bandwidth_per_core", "10GB/s"}, {"decompress_bandwidth_per_core", "1GB/s"}}},
            {"gpu", {{"bf16_flops", 1e14}, {"memory_bandwidth", "100GB/s"}, {"kernel_overhead", "10us"}}},
            {"link", {{"kind", "uma"}, {"bandwidth", "100GB/s"}, {"latency", "5us"}}}};
  return hardware_from_json(j, "test.json");
}

// Decompressing 1 MB on the one CPU worker: 1 ms by the cost model.
Op decompress(uint16_t expert) {
  Op op;
  op.kind = OpKind::kDecompress;
  op.resource = ResourceClass::kCpu;
  op.layer = 0;
  op.expert = expert;
  op.tensor = 0;
  op.shard = 0;
  op.part = TensorPart::kE;
  op.bytes = 1'000'000;
  return op;
}

struct Recorder : OpSink {
  SimPlatform* platform = nullptr;
  std::vector<std::pair<uint32_t, double>> seen;  // token, time the sink saw it
  std::vector<OpTiming> timing;
  void op_done(uint32_t token, const OpTiming& t) override {
    seen.emplace_back(token, platform->now());
    timing.push_back(t);
  }
};

// Two decompressions submitted at time 0 to the one CPU worker.
Recorder run_two(const SimOptions& o) {
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  p.submit(decompress(0), &r, 0);
  p.submit(decompress(1), &r, 1);
  p.run_until_idle();
  r.platform = nullptr;
  return r;
}

TEST(RuntimeCosts, IdealRuntimeByDefault) {
  const Recorder r = run_two({});
  ASSERT_EQ(r.seen.size(), 2u);
  EXPECT_DOUBLE_EQ(r.seen[0].second, 1e-3);
  EXPECT_DOUBLE_EQ(r.seen[1].second, 2e-3);
}

TEST(RuntimeCosts, DispatchTurnaroundPipelineAndWake) {
  SimOptions o;
  o.dispatch_latency = 10e-6;                                       // start 10 us after submission
  o.turnaround[static_cast<size_t>(ResourceClass::kCpu)] = 5e-6;    // a queued op starts 5 us after its unit frees
  o.completion_latency = 2e-6;                                      // the pipeline thread: 2 us per completion
  o.wake_latency = 20e-6;                                           // + 20 us when it was idle
  const Recorder r = run_two(o);
  ASSERT_EQ(r.seen.size(), 2u);
  // Op 0 starts at 10 us, holds the worker 1 ms; the idle pipeline thread wakes (20 us) and works 2 us.
  EXPECT_NEAR(r.timing[0].start, 10e-6, 1e-12);
  EXPECT_NEAR(r.timing[0].end, 10e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(r.seen[0].second, 10e-6 + 1e-3 + 20e-6 + 2e-6, 1e-12);
  // Op 1 waited for the worker: it starts the turnaround after op 0 releases it.
  EXPECT_NEAR(r.timing[1].start, 10e-6 + 1e-3 + 5e-6, 1e-12);
  EXPECT_NEAR(r.timing[1].end, 10e-6 + 2e-3 + 5e-6, 1e-12);
}

// The hand-off is what waking an idle thread costs: an op that finds its unit busy queues and starts when
// the unit is free, without it. Per resource class, where given, it replaces the overall figure.
TEST(RuntimeCosts, DispatchIsPaidOnlyByOpsGivenToAnIdleUnitAndPerResource) {
  SimOptions o;
  o.dispatch_latency = 10e-6;
  o.dispatch[static_cast<size_t>(ResourceClass::kCpu)] = 50e-6;
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  p.submit(decompress(0), &r, 0);  // the worker is idle: starts at 50 us, ends at 1.05 ms
  // Submitted 5 us before op 0 ends, to the busy worker: starts when op 0 ends, not 50 us after submission.
  p.engine().schedule_fn(1.045e-3, [&] { p.submit(decompress(1), &r, 1); });
  p.run_until_idle();
  ASSERT_EQ(r.timing.size(), 2u);
  EXPECT_NEAR(r.timing[0].start, 50e-6, 1e-12);
  EXPECT_NEAR(r.timing[1].start, 1.05e-3, 1e-12);
  EXPECT_NEAR(r.timing[1].end, 2.05e-3, 1e-12);
}

// Drawn runtime costs: each hand-off to an idle unit and each wake-up of the pipeline thread is one of the
// distribution's equally likely values, drawn from a stream seeded by SimOptions::seed.
std::vector<double> sequential_handoffs(const SimOptions& o, int n) {
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  std::vector<double> h;
  for (int i = 0; i < n; ++i) {  // one at a time: each finds the worker idle
    const double t = p.now();
    p.submit(decompress(static_cast<uint16_t>(i)), &r, static_cast<uint32_t>(i));
    p.run_until_idle();
    h.push_back(r.timing.back().start - t);
  }
  return h;
}

TEST(RuntimeCosts, DrawnHandoffsComeFromTheDistributionAndTheSeed) {
  SimOptions o;
  o.dispatch[static_cast<size_t>(ResourceClass::kCpu)] = 50e-6;  // the mean: replaced by the distribution
  o.dispatch_q[static_cast<size_t>(ResourceClass::kCpu)] = {5e-6, 20e-6, 200e-6};
  o.seed = 7;
  const std::vector<double> a = sequential_handoffs(o, 60);
  for (double h : a)
    EXPECT_TRUE(std::abs(h - 5e-6) < 1e-12 || std::abs(h - 20e-6) < 1e-12 || std::abs(h - 200e-6) < 1e-12) << h;
  int seen[3] = {};
  for (double h : a) ++seen[h < 10e-6 ? 0 : h < 100e-6 ? 1 : 2];
  for (int k : seen) EXPECT_GT(k, 5);  // every value is drawn (60 draws of 3: each about 20 times)
  EXPECT_EQ(sequential_handoffs(o, 60), a);  // same seed, same draws
  o.seed = 8;
  EXPECT_NE(sequential_handoffs(o, 60), a);
  // One value: exactly the fixed cost.
  o.dispatch_q[static_cast<size_t>(ResourceClass::kCpu)] = {50e-6};
  for (double h : sequential_handoffs(o, 5)) EXPECT_NEAR(h, 50e-6, 1e-12);
}

TEST(RuntimeCosts, DrawnWakeUpsComeFromTheirDistribution) {
  SimOptions o;
  o.completion_latency = 2e-6;
  o.wake_latency = 20e-6;      // the mean: replaced
  o.wake_q = {7e-6, 7e-6};     // every draw 7 us
  const Recorder r = run_two(o);
  ASSERT_EQ(r.seen.size(), 2u);
  EXPECT_NEAR(r.seen[0].second, 1e-3 + 7e-6 + 2e-6, 1e-12);
}

// The structure check's replay: each op's own measured hand-off where it had one (it found an idle thread),
// the mean where it queued in the measured run but finds the unit idle here.
TEST(RuntimeCosts, MeasuredHandoffsReplaceTheMeanOpByOp) {
  MeasuredDurations m;
  m.add(decompress(0), 1e-3, 30e-6);
  m.add(decompress(1), 1e-3, -1);
  SimOptions o;
  o.dispatch_latency = 10e-6;
  o.measured = &m;
  o.measured_handoff = true;
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  p.submit(decompress(0), &r, 0);
  p.run_until_idle();
  p.submit(decompress(1), &r, 1);
  p.run_until_idle();
  ASSERT_EQ(r.timing.size(), 2u);
  EXPECT_NEAR(r.timing[0].start, 30e-6, 1e-12);
  EXPECT_NEAR(r.timing[1].start, r.seen[0].second + 10e-6, 1e-12);
  EXPECT_EQ(m.peek(decompress(0)), nullptr);  // both taken
}

// And each op's own turnaround where it waited for its unit in the measured run.
TEST(RuntimeCosts, MeasuredTurnaroundsReplaceTheMeanOpByOp) {
  MeasuredDurations m;
  m.add(decompress(0), 1e-3);
  m.add(decompress(1), 1e-3, -1, 40e-6);
  SimOptions o;
  o.turnaround[static_cast<size_t>(ResourceClass::kCpu)] = 5e-6;
  o.measured = &m;
  o.measured_turnaround = true;
  const Recorder r = run_two(o);
  ASSERT_EQ(r.timing.size(), 2u);
  EXPECT_NEAR(r.timing[0].start, 0.0, 1e-12);
  EXPECT_NEAR(r.timing[1].start, 1e-3 + 40e-6, 1e-12);
}

TEST(RuntimeCosts, PlanningDelaysTheOpsOfTheGraph) {
  SimOptions o;
  o.plan_latency_per_op = 1e-6;
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  OpGraph g;
  g.add(decompress(0));
  g.add(decompress(1));
  g.add(decompress(2));
  g.finalize();
  p.ops_planned(g);  // 3 ops: 3 us of planning before the first starts
  p.submit(g.op(0), &r, 0);
  p.run_until_idle();
  ASSERT_EQ(r.timing.size(), 1u);
  EXPECT_NEAR(r.timing[0].start, 3e-6, 1e-12);
}

// Plans a graph of one decompression and runs it (token `token`) to the end.
void plan_and_run_one(SimPlatform& p, Recorder& r, uint32_t token) {
  OpGraph g;
  g.add(decompress(0));
  g.finalize();
  p.ops_planned(g);
  p.submit(g.op(0), &r, token);
  p.run_until_idle();
}

// A graph planned while one op runs: the head (2 us) delays the graph's op; the tail (30 us) keeps the pipeline
// thread busy after it, so the running op's completion, reported during the tail, waits for it to end.
TEST(RuntimeCosts, PlanningTailHoldsThePipelineThreadNotTheOps) {
  SimOptions o;
  o.plan_latency_fixed = 2e-6;
  o.plan_tail_fixed = 1e-3 + 30e-6;  // ends 30 us after op 0 (1 ms) would be reported
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  plan_and_run_one(p, r, 0);
  ASSERT_EQ(r.timing.size(), 1u);
  EXPECT_NEAR(r.timing[0].start, 2e-6, 1e-12);          // after the head only
  EXPECT_NEAR(r.timing[0].end, 2e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(r.seen[0].second, 2e-6 + 1e-3 + 30e-6, 1e-12);  // seen when head + tail end
}

TEST(RuntimeCosts, MeasuredPlanningReplacesTheFitsGraphByGraph) {
  MeasuredDurations m;
  m.add_planning(PlanningTime{1, 7e-6, 0});
  m.add_planning(PlanningTime{5, 1e-6, 0});  // the simulation's second graph has 1 op: no twin, the fit
  SimOptions o;
  o.measured = &m;
  o.measured_planning = true;
  o.plan_latency_fixed = 3e-6;
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  plan_and_run_one(p, r, 0);  // 7 us, measured
  plan_and_run_one(p, r, 1);  // 3 us, the fit
  ASSERT_EQ(r.timing.size(), 2u);
  EXPECT_NEAR(r.timing[0].start, 7e-6, 1e-12);
  EXPECT_NEAR(r.timing[1].start, r.seen[0].second + 3e-6, 1e-12);
  EXPECT_EQ(m.planning_matched(), 1u);
  EXPECT_EQ(m.planning_unmatched(), 1u);
  m.rewind();
  EXPECT_EQ(m.planning_matched(), 0u);
  PlanningTime t;
  EXPECT_TRUE(m.next_planning(1, &t));
  EXPECT_DOUBLE_EQ(t.head, 7e-6);
}

TEST(MeasuredDurations, MatchByIdentityAndOccurrence) {
  MeasuredDurations m;
  m.add(decompress(0), 0.5);
  m.add(decompress(1), 0.25);
  m.add(decompress(0), 0.75);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_DOUBLE_EQ(m.next(decompress(0)), 0.5);
  EXPECT_DOUBLE_EQ(m.next(decompress(0)), 0.75);
  EXPECT_LT(m.next(decompress(0)), 0);  // none left
  Op other = decompress(1);
  other.shard = 1;  // another shard is another identity
  EXPECT_LT(m.next(other), 0);
  EXPECT_DOUBLE_EQ(m.next(decompress(1)), 0.25);
  EXPECT_EQ(m.matched(), 3u);
  EXPECT_EQ(m.unmatched(), 2u);
}

TEST(MeasuredDurations, RewindServesEveryDurationAgainForAnotherSimulation) {
  MeasuredDurations m;
  m.add(decompress(0), 0.5);
  m.add(decompress(0), 0.75);
  EXPECT_DOUBLE_EQ(m.next(decompress(0)), 0.5);
  EXPECT_LT(m.next(decompress(1)), 0);
  m.rewind();
  EXPECT_EQ(m.matched(), 0u);
  EXPECT_EQ(m.unmatched(), 0u);
  EXPECT_DOUBLE_EQ(m.next(decompress(0)), 0.5);
  EXPECT_DOUBLE_EQ(m.next(decompress(0)), 0.75);
  EXPECT_EQ(m.size(), 2u);
}

TEST(MeasuredDurations, TheSimulatorUsesThemSsdReadsIncluded) {
  MeasuredDurations m;
  m.add(decompress(0), 0.5);
  Op read = decompress(0);
  read.kind = OpKind::kSsdRead;
  read.resource = ResourceClass::kSsd;
  m.add(read, 0.25);
  SimOptions o;
  o.measured = &m;
  SimPlatform p(profile(), o);
  Recorder r;
  r.platform = &p;
  p.submit(read, &r, 0);
  p.submit(decompress(0), &r, 1);
  p.submit(decompress(5), &r, 2);  // not measured: the cost model's 1 ms
  p.run_until_idle();
  ASSERT_EQ(r.timing.size(), 3u);
  std::vector<double> d(3);
  for (size_t i = 0; i < 3; ++i) d[r.seen[i].first] = r.timing[i].end - r.timing[i].start;
  EXPECT_DOUBLE_EQ(d[0], 0.25);
  EXPECT_DOUBLE_EQ(d[1], 0.5);
  EXPECT_NEAR(d[2], 1e-3, 1e-12);
  EXPECT_EQ(m.unmatched(), 1u);
}

}  // namespace
}  // namespace moesim::sim
