#include "sim/cpu_cores.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "sim/resources.h"

namespace moesim::sim {
namespace {

struct Log : JobListener {
  void job_done(uint32_t job, const OpTiming& t) override { done[job] = t; }
  std::map<uint32_t, OpTiming> done;
};

constexpr double kEps = 1e-9;

// Two one-unit pools whose threads share one core.
struct OneCore {
  EventEngine e;
  CpuCores cores{e, 1};
  Log log;
  ServerPool a{e, "a", 1, &log}, b{e, "b", 1, &log};
  OneCore() {
    a.share_cores(&cores);
    b.share_cores(&cores);
  }
};

TEST(CpuCores, ThreadsWithinTheCoresRunAtFullSpeed) {
  EventEngine e;
  CpuCores cores(e, 2);
  Log log;
  ServerPool workers(e, "cpu_workers", 2, &log);
  workers.share_cores(&cores);
  workers.submit(0, 0, 1.0);
  workers.submit(1, 0, 0.5);
  e.run();
  EXPECT_NEAR(log.done[0].end, 1.0, kEps);
  EXPECT_NEAR(log.done[1].end, 0.5, kEps);
  EXPECT_NEAR(workers.stats().busy_time, 1.5, kEps);
}

// The 2-core machine without a GPU: two decompression workers and the GPU stream's thread, three ops of 1 s
// of work each at once: each gets 2/3 of a core, all end at 1.5 s.
TEST(CpuCores, MoreBusyThreadsThanCoresShareThemEqually) {
  EventEngine e;
  CpuCores cores(e, 2);
  Log log;
  ServerPool workers(e, "cpu_workers", 2, &log);
  ServerPool gpu(e, "gpu", 1, &log);
  workers.share_cores(&cores);
  gpu.share_cores(&cores);
  workers.submit(0, 0, 1.0);
  workers.submit(1, 0, 1.0);
  gpu.submit(2, 0, 1.0);
  e.run();
  for (uint32_t j = 0; j < 3; ++j) {
    EXPECT_NEAR(log.done[j].start, 0.0, kEps);
    EXPECT_NEAR(log.done[j].end, 1.5, kEps) << j;
  }
  // Busy time is wall time: contention stretches it.
  EXPECT_NEAR(workers.stats().busy_time, 3.0, kEps);
  EXPECT_NEAR(gpu.stats().busy_time, 1.5, kEps);
}

// One core: A (2 s of work) alone from 0 to 1, then B (0.5 s) arrives and both run at half speed until B is
// done at 2; A has had 1.5 s by then and finishes its last 0.5 s alone at 2.5.
TEST(CpuCores, TheShareChangesAsOpsStartAndEnd) {
  OneCore m;
  ServerPool &a = m.a, &b = m.b;
  EventEngine& e = m.e;
  Log& log = m.log;
  a.submit(0, 0, 2.0);
  e.schedule_fn(1.0, [&] { b.submit(1, 0, 0.5); });
  e.run();
  EXPECT_NEAR(log.done[1].start, 1.0, kEps);
  EXPECT_NEAR(log.done[1].end, 2.0, kEps);
  EXPECT_NEAR(log.done[0].end, 2.5, kEps);
}

// A queued job starts on the unit the finished one frees, at the share of that moment.
TEST(CpuCores, QueuedJobsFollowOnTheirUnit) {
  OneCore m;
  ServerPool &a = m.a, &b = m.b;
  EventEngine& e = m.e;
  Log& log = m.log;
  a.submit(0, 0, 1.0);
  a.submit(1, 0, 1.0);
  b.submit(2, 0, 4.0);
  e.run();
  // 0..2: jobs 0 and 2 at half speed (0 done at 2); 2..4: jobs 1 and 2 (1 done at 4, 2 has had 2 s);
  // 4..6: job 2 alone.
  EXPECT_NEAR(log.done[0].end, 2.0, kEps);
  EXPECT_NEAR(log.done[1].start, 2.0, kEps);
  EXPECT_NEAR(log.done[1].end, 4.0, kEps);
  EXPECT_NEAR(log.done[2].end, 6.0, kEps);
}

// An I/O thread (its reads' CPU tails on the one core where `shared`) and a CPU worker.
struct IoAndWorker {
  EventEngine e;
  CpuCores cores{e, 1};
  Log log;
  ServerPool io{e, "io_thread", 1, &log}, cpu{e, "cpu_workers", 1, &log};
  explicit IoAndWorker(bool shared) {
    cpu.share_cores(&cores);
    if (shared) io.share_cores_for_tails(&cores);
  }
};

// An I/O thread's read: 1 s on the device (no core), then 1 s of CPU work (the kernel's O_DIRECT path, the
// checksum) on the one core, which a CPU worker's 2 s op has had alone until then: from 1 s both run at half
// speed and both end at 3 s. Without shared cores the tail is plain time after the device's.
TEST(CpuCores, AReadsCpuTailSharesTheCoresAfterItsDevicePhase) {
  for (const bool shared : {true, false}) {
    IoAndWorker m(shared);
    m.io.submit(0, 0, 1.0, 0, 1.0);
    m.cpu.submit(1, 0, 2.0);
    m.e.run();
    EXPECT_NEAR(m.log.done[0].start, 0.0, kEps);
    EXPECT_NEAR(m.log.done[0].end, shared ? 3.0 : 2.0, kEps) << shared;
    EXPECT_NEAR(m.log.done[1].end, shared ? 3.0 : 2.0, kEps) << shared;
    EXPECT_NEAR(m.io.stats().busy_time, shared ? 3.0 : 2.0, kEps) << shared;
  }
  // A job without a tail on a pool that shares its tails is its duration, and busy time counts it once.
  IoAndWorker m(true);
  m.io.submit(0, 0, 0.5);
  m.io.submit(1, 0, 0.5, 0.25, 0.5);  // queued: its turnaround, the device, then the tail alone on the core
  m.e.run();
  EXPECT_NEAR(m.log.done[0].end, 0.5, kEps);
  EXPECT_NEAR(m.log.done[1].start, 0.75, kEps);
  EXPECT_NEAR(m.log.done[1].end, 1.75, kEps);
  EXPECT_NEAR(m.io.stats().busy_time, 1.5, kEps);
}

TEST(CpuWork, IsWallTimeWithoutContentionAndTheShareWithIt) {
  // Two ops on one core, overlapping over [1, 2]: each had half a core there.
  const std::vector<double> w = cpu_work({{0.0, 2.0}, {1.0, 3.0}}, 1);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0], 1.5, kEps);
  EXPECT_NEAR(w[1], 1.5, kEps);
  // With two cores nobody waited.
  const std::vector<double> w2 = cpu_work({{0.0, 2.0}, {1.0, 3.0}}, 2);
  EXPECT_NEAR(w2[0], 2.0, kEps);
  EXPECT_NEAR(w2[1], 2.0, kEps);
  // Empty and zero-length spans have no work.
  const std::vector<double> w3 = cpu_work({{1.0, 1.0}}, 1);
  EXPECT_EQ(w3[0], 0.0);
  EXPECT_TRUE(cpu_work({}, 4).empty());
}

// Property: cpu_work inverts the model. Random ops on three pools sharing 2 cores, simulated; the work
// recovered from their wall-clock spans is the work they were given.
TEST(CpuWork, RecoversTheWorkOfASimulatedRun) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    EventEngine e;
    CpuCores cores(e, 2);
    Log log;
    ServerPool w(e, "w", 2, &log), g(e, "g", 1, &log), x(e, "x", 1, &log);
    for (ServerPool* p : {&w, &g, &x}) p->share_cores(&cores);
    std::uniform_real_distribution<double> work(0.01, 1.0), at(0.0, 5.0);
    std::vector<double> given;
    for (uint32_t j = 0; j < 30; ++j) {
      const double wk = work(rng);
      given.push_back(wk);
      ServerPool* p = j % 3 == 0 ? &w : j % 3 == 1 ? &g : &x;
      e.schedule_fn(at(rng), [p, j, wk] { p->submit(j, 0, wk); });
    }
    e.run();
    std::vector<std::pair<double, double>> spans;
    for (uint32_t j = 0; j < given.size(); ++j) spans.emplace_back(log.done[j].start, log.done[j].end);
    const std::vector<double> back = cpu_work(spans, 2);
    for (uint32_t j = 0; j < given.size(); ++j) EXPECT_NEAR(back[j], given[j], 1e-9) << "round " << round << " op " << j;
  }
}

}  // namespace
}  // namespace moesim::sim
