#include "sim/resources.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "base/rng.h"

namespace moesim::sim {
namespace {

struct Log : JobListener {
  void job_done(uint32_t job, const OpTiming& t) override { done[job] = t; }
  std::map<uint32_t, OpTiming> done;
};

constexpr double kEps = 1e-12;

// The waiting line pops in (priority, arrival) order: random programs of pushes and pops, runs of one
// priority (an FCFS system's lines) and of mixed ones, against a sorted reference.
TEST(JobQueue, PopsInPriorityThenArrivalOrder) {
  Rng rng(11);
  for (int program = 0; program < 40; ++program) {
    JobQueue q;
    std::vector<std::pair<int64_t, uint32_t>> waiting;  // reference: (priority, job), job = arrival index
    uint32_t next_job = 0;
    const uint32_t priorities = program % 4 == 0 ? 1 : 1 + rng.below(3);  // some programs are FCFS only
    const int steps = program % 5 == 0 ? 6000 : 300;
    for (int step = 0; step < steps; ++step) {
      if (waiting.empty() || rng.below(100) < 55) {
        const int64_t priority = (static_cast<int64_t>(rng.below(priorities)) - 1)
                                 << 40;  // negative ones too
        const uint32_t j = next_job;     // every field of an item travels with its job
        q.push(priority, j, static_cast<double>(j), j + 0.5, j % 2 == 0, 2.0 * j, j % 3 == 0);
        waiting.emplace_back(priority, next_job++);
      } else {
        const auto first = std::min_element(waiting.begin(), waiting.end());
        const JobQueue::Item item = q.pop();
        ASSERT_EQ(item.job, first->second) << "program " << program << " step " << step;
        ASSERT_EQ(item.priority, first->first);
        const uint32_t j = first->second;
        EXPECT_EQ(item.amount, static_cast<double>(j));
        EXPECT_EQ(item.gap, j + 0.5);
        EXPECT_EQ(item.bulk, j % 2 == 0);
        EXPECT_EQ(item.tail, 2.0 * j);
        EXPECT_EQ(item.waits, j % 3 == 0);
        waiting.erase(first);
      }
      ASSERT_EQ(q.size(), waiting.size());
      ASSERT_EQ(q.empty(), waiting.empty());
    }
  }
}

TEST(ServerPool, BusyServerServesFifo) {
  EventEngine e;
  Log log;
  ServerPool gpu(e, "gpu", 1, &log);
  gpu.submit(0, 0, 2.0);
  gpu.submit(1, 0, 1.0);
  gpu.submit(2, 0, 0.5);
  e.run();
  EXPECT_NEAR(log.done[0].start, 0.0, kEps);
  EXPECT_NEAR(log.done[0].end, 2.0, kEps);
  EXPECT_NEAR(log.done[1].start, 2.0, kEps);
  EXPECT_NEAR(log.done[1].end, 3.0, kEps);
  EXPECT_NEAR(log.done[2].start, 3.0, kEps);
  EXPECT_NEAR(log.done[2].end, 3.5, kEps);
  EXPECT_NEAR(gpu.stats().busy_time, 3.5, kEps);
  EXPECT_TRUE(gpu.idle());
}

TEST(ServerPool, PriorityThenArrivalAmongWaitingJobs) {
  EventEngine e;
  Log log;
  ServerPool cpu(e, "cpu", 1, &log);
  cpu.submit(0, 5, 1.0);  // starts at once: the server is free
  cpu.submit(1, 5, 1.0);
  cpu.submit(2, 1, 1.0);  // more urgent than 1
  cpu.submit(3, 5, 1.0);
  e.run();
  EXPECT_NEAR(log.done[2].start, 1.0, kEps);
  EXPECT_NEAR(log.done[1].start, 2.0, kEps);
  EXPECT_NEAR(log.done[3].start, 3.0, kEps);
}

TEST(ServerPool, UnitsServeInParallel) {
  EventEngine e;
  Log log;
  ServerPool cpu(e, "cpu", 2, &log);
  for (uint32_t j = 0; j < 3; ++j) cpu.submit(j, 0, 1.0);
  e.run();
  EXPECT_NEAR(log.done[0].end, 1.0, kEps);
  EXPECT_NEAR(log.done[1].end, 1.0, kEps);
  EXPECT_NE(log.done[0].unit, log.done[1].unit);
  EXPECT_NEAR(log.done[2].start, 1.0, kEps);
  EXPECT_NEAR(log.done[2].end, 2.0, kEps);
  EXPECT_NEAR(cpu.stats().busy_time, 3.0, kEps);
}

TEST(Ssd, OneRequestTakesLatencyPlusBytesOverBandwidth) {
  EventEngine e;
  Log log;
  Ssd ssd(e, 1e9, 100e-6, 4, &log);
  ssd.submit(0, 0, 1'000'000);
  e.run();
  EXPECT_NEAR(log.done[0].start, 0.0, kEps);
  EXPECT_NEAR(log.done[0].end, 100e-6 + 1e-3, kEps);
}

TEST(Ssd, BulkReadsTakeTheirOwnRateAndLatencyAndStillShareTheBandwidth) {
  EventEngine e;
  Log log;
  Ssd ssd(e, 1e6, 1.0, 4, &log);
  ssd.set_bulk_rate(0.5e6, 2.0);  // a prefill's reads: half the rate, twice the latency
  ssd.submit(0, 0, 1'000'000, true);
  e.run();
  EXPECT_NEAR(log.done[0].end, 2.0 + 2.0, 1e-9);  // latency 2 s + 1 MB at 0.5 MB/s
  // Beside a sparse read of the same size, each gets half the bandwidth while both transfer.
  ssd.submit(1, 0, 1'000'000, true);
  ssd.submit(2, 0, 1'000'000, false);
  e.run();
  // Their latencies end at 5 s (sparse) and 6 s (bulk): the sparse read moves its 1 MB alone on [5, 6).
  EXPECT_NEAR(log.done[2].end, 4.0 + 1.0 + 1.0, 1e-9);
  // The bulk read transfers alone from 6 s: 1 MB at 0.5 MB/s.
  EXPECT_NEAR(log.done[1].end, 4.0 + 2.0 + 2.0, 1e-9);
  EXPECT_EQ(ssd.stats().bytes, 3'000'000u);  // the bytes read, not the bandwidth they took
}

TEST(Ssd, ConcurrentRequestsShareBandwidth) {
  EventEngine e;
  Log log;
  Ssd ssd(e, 1e6, 0.0, 4, &log);
  ssd.submit(0, 0, 1'000'000);  // 1 MB
  ssd.submit(1, 0, 3'000'000);  // 3 MB
  e.run();
  // Both at 0.5 MB/s until the first ends at t = 2 s; the second has 2 MB left at full rate: t = 4 s.
  EXPECT_NEAR(log.done[0].end, 2.0, 1e-9);
  EXPECT_NEAR(log.done[1].end, 4.0, 1e-9);
  EXPECT_NEAR(ssd.stats().busy_time, 4.0, 1e-9);
  EXPECT_EQ(ssd.stats().bytes, 4'000'000u);
}

TEST(Ssd, LatencyPhaseDoesNotShareBandwidth) {
  EventEngine e;
  Log log;
  Ssd ssd(e, 1e6, 1.0, 4, &log);
  ssd.submit(0, 0, 2'000'000);
  e.schedule_fn(2.0, [&] { ssd.submit(1, 0, 1'000'000); });
  e.run();
  // Job 0: latency on [0, 1), then transfers alone on [1, 3): 2 MB at 1 MB/s ends at 3 s. Job 1 (submitted
  // at 2 s) is in its latency phase on [2, 3) and takes no bandwidth from job 0.
  EXPECT_NEAR(log.done[0].end, 3.0, 1e-9);
  // Job 1 transfers alone from 3 s: 1 MB at 1 MB/s -> 4 s.
  EXPECT_NEAR(log.done[1].end, 4.0, 1e-9);
}

TEST(Ssd, QueueDepthLimitsRequestsInService) {
  EventEngine e;
  Log log;
  Ssd ssd(e, 1e6, 0.5, 2, &log);
  for (uint32_t j = 0; j < 3; ++j) ssd.submit(j, 0, 1'000'000);
  e.run();
  // Jobs 0 and 1: latency to 0.5 s, then share: 2 MB at 1 MB/s -> both end at 2.5 s.
  EXPECT_NEAR(log.done[0].end, 2.5, 1e-9);
  EXPECT_NEAR(log.done[1].end, 2.5, 1e-9);
  // Job 2 waits for a slot: starts at 2.5 s, ends at 2.5 + 0.5 + 1 = 4 s.
  EXPECT_NEAR(log.done[2].start, 2.5, 1e-9);
  EXPECT_NEAR(log.done[2].end, 4.0, 1e-9);
}

// The SSD's passes over its transfers visit the transferring slots' bits with at most 64 slots and every
// slot beyond: 64 staggered requests of different sizes end at the same times, to the bit, at queue depth 64
// (bits 0-63) and 65 or 100 (the pass over the slots), each in the slot it took.
TEST(Ssd, TransferPassesAgreeWithAndWithoutTheSlotBits) {
  auto run = [](uint32_t depth) {
    EventEngine e;
    Log log;
    Ssd ssd(e, 1e6, 1e-4, depth, &log);
    for (uint32_t j = 0; j < 64; ++j)
      e.schedule_fn(j * 3e-5, [&ssd, j] { ssd.submit(j, 0, 1000 * (1 + (j * 37) % 64)); });
    e.run();
    return log.done;
  };
  const auto bits = run(64);
  ASSERT_EQ(bits.size(), 64u);
  double last = 0;
  for (const auto& [job, t] : bits) {
    EXPECT_EQ(t.unit, job);
    last = std::max(last, t.end);
  }
  // Work-conserving once the first transfer starts: all 2,080,000 bytes at 1 MB/s after the first latency.
  EXPECT_NEAR(last, 1e-4 + 2.08, 1e-8);
  for (uint32_t depth : {65u, 100u}) {
    const auto slots = run(depth);
    for (uint32_t j = 0; j < 64; ++j) {
      EXPECT_EQ(slots.at(j).end, bits.at(j).end) << "depth " << depth << " job " << j;
      EXPECT_EQ(slots.at(j).unit, j);
    }
  }
}

// An SSD that reports to the I/O thread that issued its reads (as in SimPlatform).
struct IoStack {
  IoStack(EventEngine& e, uint32_t depth, JobListener* log)
      : ssd(e, 1e6, 0.0, 32, &io), io(ssd, e, depth, log) {}
  Ssd ssd;
  IoThread io;
};

TEST(IoThread, DepthOneSerializesReadsInPriorityOrder) {
  EventEngine e;
  Log log;
  IoStack s(e, 1, &log);
  s.io.submit(0, 0, 1'000'000);  // issued at once
  s.io.submit(1, 9, 1'000'000);
  s.io.submit(2, 1, 1'000'000);  // more urgent than 1
  e.run();
  EXPECT_NEAR(log.done[0].end, 1.0, 1e-9);
  EXPECT_NEAR(log.done[2].start, 1.0, 1e-9);
  EXPECT_NEAR(log.done[2].end, 2.0, 1e-9);
  EXPECT_NEAR(log.done[1].end, 3.0, 1e-9);
  EXPECT_NEAR(s.io.stats().busy_time, 3.0, 1e-9);
}

TEST(IoThread, DeeperQueueLetsTheSsdShare) {
  EventEngine e;
  Log log;
  IoStack s(e, 2, &log);
  for (uint32_t j = 0; j < 2; ++j) s.io.submit(j, 0, 1'000'000);
  e.run();
  EXPECT_NEAR(log.done[0].end, 2.0, 1e-9);  // 2 MB at 1 MB/s, shared
  EXPECT_NEAR(log.done[1].end, 2.0, 1e-9);
}

// Queue lengths as a timeline sees them: (time, queue, waiting) after every change, net of a job that
// queues and starts at once.
struct Lengths : QueueObserver {
  explicit Lengths(const EventEngine& e) : engine(e) {}
  void queue_length(uint32_t queue, uint64_t waiting) override {
    seen.emplace_back(engine.now(), queue, waiting);
  }
  const EventEngine& engine;
  std::vector<std::tuple<double, uint32_t, uint64_t>> seen;
};

TEST(ServerPool, ReportsOpsWaitingForAUnit) {
  EventEngine e;
  Log log;
  Lengths q(e);
  ServerPool gpu(e, "gpu", 1, &log);
  gpu.set_queue_observer(&q, 7);
  gpu.submit(0, 0, 2.0);  // starts at once: nothing waits, nothing reported
  gpu.submit(1, 0, 1.0);
  gpu.submit(2, 0, 0.5);
  e.run();
  using T = std::tuple<double, uint32_t, uint64_t>;
  EXPECT_EQ(q.seen, (std::vector<T>{{0.0, 7, 1}, {0.0, 7, 2}, {2.0, 7, 1}, {3.0, 7, 0}}));
}

TEST(IoThread, ReportsReadsWaitingToBeIssuedAndTheSsdItsQueue) {
  // Two outstanding reads, one SSD slot, 1 s per read: the third read waits at the I/O thread, the second
  // at the SSD.
  struct Stack {
    Stack(EventEngine& e, JobListener* log) : ssd(e, 1e6, 0.0, 1, &io), io(ssd, e, 2, log) {}
    Ssd ssd;
    IoThread io;
  };
  EventEngine e;
  Log log;
  Lengths q(e);
  Stack s(e, &log);
  s.io.set_queue_observer(&q, 0);
  s.ssd.set_queue_observer(&q, 1);
  for (uint32_t j = 0; j < 3; ++j) s.io.submit(j, 0, 1'000'000);
  e.run();
  using T = std::tuple<double, uint32_t, uint64_t>;
  EXPECT_EQ(q.seen, (std::vector<T>{{0.0, 1, 0},  // read 0 issued, in the slot
                                    {0.0, 0, 0},
                                    {0.0, 1, 1},  // read 1 issued, waits for the slot
                                    {0.0, 0, 0},
                                    {0.0, 0, 1},  // read 2 waits for the I/O thread
                                    {1.0, 1, 0},  // read 0 done: read 1 takes the slot
                                    {1.0, 1, 1},  // read 2 issued, waits for the slot
                                    {1.0, 0, 0},
                                    {2.0, 1, 0},
                                    {2.0, 0, 0},
                                    {3.0, 1, 0},
                                    {3.0, 0, 0}}));
  EXPECT_NEAR(log.done[2].end, 3.0, 1e-9);
}

}  // namespace
}  // namespace moesim::sim
