// The simulated platform's fused reads (Op::read_bytes, ZipMoE §4's prototype): a CPU worker reads its
// E-chunk on the SSD model itself, then decompresses it; schedules worked by hand.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

#include "base/error.h"
#include "sim/measured_durations.h"
#include "sim/sim_platform.h"

namespace moesim::sim {
namespace {

// SSD 1 GB/s, 100 us per request, 4 requests in service (or `queue_depth`); decompression 1 GB/s of output
// per core.
HardwareProfile profile(int queue_depth = 4) {
  Json j = {
      {"name", "test"},
      {"ssd", {{"read_bandwidth", "1GB/s"}, {"read_latency", "100us"}, {"queue_depth", queue_depth}}},
      {"memory", {{"capacity", "8GiB"}, {"bandwidth", "100GB/s"}, {"unified", true}}},
      {"cpu",
       {{"cores", 4}, {"memcpy_bandwidth_per_core", "10GB/s"}, {"decompress_bandwidth_per_core", "1GB/s"}}},
      {"gpu", {{"bf16_flops", 1e14}, {"memory_bandwidth", "100GB/s"}, {"kernel_overhead", "10us"}}},
      {"link", {{"kind", "uma"}, {"bandwidth", "100GB/s"}, {"latency", "5us"}}}};
  return hardware_from_json(j, "test.json");
}

// Shard `shard` of expert 0: reads 100 kB, decompresses to 200 kB (200 us).
Op fused(uint16_t shard) {
  Op op;
  op.kind = OpKind::kDecompress;
  op.resource = ResourceClass::kCpu;
  op.layer = 0;
  op.expert = 0;
  op.tensor = 0;
  op.shard = shard;
  op.part = TensorPart::kE;
  op.bytes = 200'000;
  op.read_bytes = 100'000;
  return op;
}

// The I/O thread's own read of 100 kB (an SM tensor), beside the fused ops of the schedules below.
Op io_thread_read() {
  Op read;
  read.kind = OpKind::kSsdRead;
  read.resource = ResourceClass::kSsd;
  read.part = TensorPart::kSm;
  read.bytes = 100'000;
  return read;
}

struct Recorder : OpSink {
  std::map<uint32_t, OpTiming> timing;
  void op_done(uint32_t token, const OpTiming& t) override { timing[token] = t; }
};

// The schedule worked by hand below (three fused ops and the I/O thread's read, tokens `high` | 0..3):
// f0 and f1 [0,600] on workers 0 and 1, f2 [600,1000] on worker 0, the read [0,400] in SSD slot 2 (a read's
// unit is its slot: the third request in service).
void expect_hand_worked_schedule(Recorder& rec, uint32_t high) {
  auto expect = [&](uint32_t token, double start_us, double end_us, uint32_t unit) {
    EXPECT_NEAR(rec.timing[high | token].start * 1e6, start_us, 1e-6) << "op " << token;
    EXPECT_NEAR(rec.timing[high | token].end * 1e6, end_us, 1e-6) << "op " << token;
    EXPECT_EQ(rec.timing[high | token].unit, unit) << "op " << token;
  };
  expect(0, 0, 600, 0);
  expect(1, 0, 600, 1);
  expect(2, 600, 1000, 0);
  expect(3, 0, 400, 2);
}

TEST(FusedRead, WorkersReadOnTheSsdBesideTheIoThreadThenDecompress) {
  // Two workers; three fused ops and one I/O-thread read of 100 kB, all at time 0. By hand (microseconds):
  //   f0 takes worker 0, f1 worker 1; f2 waits for a worker. f0's, f1's and the I/O thread's reads are at the
  //   SSD together: latency [0,100], then 300 kB sharing 1 GB/s [100,400]. So the read r ends at 400; f0, f1
  //   decompress [400,600]. f2 takes worker 0 at 600: its read alone [600,800], decompression [800,1000].
  SimOptions so;
  so.cpu_workers = 2;
  SimPlatform p(profile(), so);
  Recorder rec;
  const Op read = io_thread_read();
  p.submit(fused(0), &rec, 0);
  p.submit(fused(1), &rec, 1);
  p.submit(fused(2), &rec, 2);
  p.submit(read, &rec, 3);
  p.run_until_idle();
  ASSERT_EQ(rec.timing.size(), 4u);
  expect_hand_worked_schedule(rec, 0);
  const std::vector<ResourceStats> stats = p.resource_stats();  // ssd, io_thread, cpu_workers, gpu, link
  EXPECT_EQ(stats[0].ops, 4u);  // the fused reads are the device's requests too
  EXPECT_EQ(stats[0].bytes, 400'000u);
  EXPECT_EQ(stats[1].ops, 1u);  // the I/O thread issued only its own
  EXPECT_EQ(stats[2].ops, 3u);
  EXPECT_NEAR(stats[2].busy_time, 1.6e-3, 1e-12);  // each worker held from the read's start to the end
  // What the planner and schedulers expect of one alone: its read on an idle SSD, then its decompression.
  EXPECT_NEAR(p.estimate(fused(0)), 200e-6 + 200e-6, 1e-12);
}

TEST(FusedRead, AnyTokenIsAJobAndAReadySetIsSubmittedAsOne) {
  // The schedule above, its ops handed over as one ready set (Platform::submit_ready) under tokens with the
  // top bit set: the platform runs an op under its token, so a fused read is told from the I/O thread's by
  // the platform's list of fused ops, never by a bit of the id (a flag there took the read for a fused one).
  SimOptions so;
  so.cpu_workers = 2;
  SimPlatform p(profile(), so);
  Recorder rec;
  const Op read = io_thread_read();
  const Op f0 = fused(0), f1 = fused(1), f2 = fused(2);
  constexpr uint32_t kHigh = 0x80000000u;
  const std::vector<ReadyOp> ready = {
      {&f0, kHigh | 0}, {&f1, kHigh | 1}, {&f2, kHigh | 2}, {&read, kHigh | 3}};
  p.submit_ready(ready, &rec);
  // The ops in flight report to one sink: another one is refused until they are done.
  Recorder other;
  EXPECT_THROW(p.submit(read, &other, 0), Error);
  p.run_until_idle();
  ASSERT_EQ(rec.timing.size(), 4u);
  expect_hand_worked_schedule(rec, kHigh);
  EXPECT_EQ(p.resource_stats()[1].ops, 1u);  // the I/O thread issued only its own read
  // Once they are done, another sink may submit.
  p.submit(read, &other, 0);
  p.run_until_idle();
  EXPECT_EQ(other.timing.size(), 1u);
}

TEST(FusedRead, ManyInFlightUnderScatteredTokensRunAsUnderSmallOnes) {
  // 300 fused ops and 100 I/O-thread reads at once on 3 workers: the platform's table of fused ops grows past
  // its first size, collides and deletes in the middle of probe runs; the schedule must not depend on the
  // tokens' values (the same ops under tokens 0..399 and under scattered 32-bit ones).
  auto run = [](auto token) {
    SimOptions so;
    so.cpu_workers = 3;
    so.io_depth = 2;
    SimPlatform p(profile(), so);
    Recorder rec;
    for (uint32_t i = 0; i < 400; ++i) {
      Op op = fused(static_cast<uint16_t>(i));
      op.read_bytes += 1'000 * i;  // each fused op its own read and decompression: a record mixed up shows
      op.bytes += 500 * i;
      if (i % 4 == 3) {
        op = Op{};
        op.kind = OpKind::kSsdRead;
        op.resource = ResourceClass::kSsd;
        op.bytes = 50'000 + i;
      }
      op.priority = i % 7;
      p.submit(op, &rec, token(i));
    }
    p.run_until_idle();
    std::vector<OpTiming> by_op;
    for (uint32_t i = 0; i < 400; ++i) by_op.push_back(rec.timing.at(token(i)));
    return by_op;
  };
  const auto small = run([](uint32_t i) { return i; });
  // Scattered: distinct random 32-bit tokens (a fixed seed), whose hashes collide as any keys' do, unlike
  // consecutive ones; the top bit set on about half.
  std::vector<uint32_t> tokens;
  std::set<uint32_t> seen;
  std::mt19937 rng(7);
  while (tokens.size() < 400) {
    const uint32_t t = static_cast<uint32_t>(rng());
    if (seen.insert(t).second) tokens.push_back(t);
  }
  const auto scattered = run([&](uint32_t i) { return tokens[i]; });
  ASSERT_EQ(small.size(), scattered.size());
  for (size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(small[i].start, scattered[i].start) << i;
    EXPECT_EQ(small[i].end, scattered[i].end) << i;
    EXPECT_EQ(small[i].unit, scattered[i].unit) << i;
  }
}

TEST(FusedRead, TheWorkerRunsItsReadsCpuTail) {
  // The profile's per-read CPU work (ssd.read_cpu_overhead 50 us + bytes / 1 GB/s: 150 us for 100 kB) is the
  // issuing thread's: a fused read's worker runs it after the device, before decompressing. One fused op
  // alone, by hand: read [0,200] (100 us latency + 100 us transfer), then 150 + 200 us of CPU work: ends at
  // 550. Without the fields it ends at 400 (the test above).
  Json j = {
      {"name", "test"},
      {"ssd",
       {{"read_bandwidth", "1GB/s"},
        {"read_latency", "100us"},
        {"queue_depth", 4},
        {"read_cpu_overhead", "50us"},
        {"read_cpu_bandwidth", "1GB/s"}}},
      {"memory", {{"capacity", "8GiB"}, {"bandwidth", "100GB/s"}, {"unified", true}}},
      {"cpu",
       {{"cores", 4}, {"memcpy_bandwidth_per_core", "10GB/s"}, {"decompress_bandwidth_per_core", "1GB/s"}}},
      {"gpu", {{"bf16_flops", 1e14}, {"memory_bandwidth", "100GB/s"}, {"kernel_overhead", "10us"}}},
      {"link", {{"kind", "uma"}, {"bandwidth", "100GB/s"}, {"latency", "5us"}}}};
  SimOptions so;
  so.cpu_workers = 2;
  SimPlatform p(hardware_from_json(j, "test.json"), so);
  Recorder rec;
  p.submit(fused(0), &rec, 0);
  p.run_until_idle();
  EXPECT_NEAR(rec.timing[0].end * 1e6, 550, 1e-6);
  EXPECT_NEAR(p.estimate(fused(0)), 200e-6 + 150e-6 + 200e-6, 1e-12);
}

TEST(FusedRead, MeasuredPartsReplayAsADeviceWaitThenCpuWork) {
  // A measured fused op (validate's structure check): its read's device time (300 us) as a plain wait on the
  // worker, then its CPU work (50 us): it ends at 350 us, whatever the SSD model would say. A second fused op
  // without a measurement falls back to the model: read [0,200], decompress [200,400] on the other worker.
  MeasuredDurations md;
  md.add(fused(0), 300e-6, -1, -1, 50e-6);
  SimOptions so;
  so.cpu_workers = 2;
  so.measured = &md;
  SimPlatform p(profile(), so);
  Recorder rec;
  p.submit(fused(0), &rec, 0);
  p.submit(fused(1), &rec, 1);
  p.run_until_idle();
  EXPECT_NEAR(rec.timing[0].end * 1e6, 350, 1e-6);
  EXPECT_NEAR(rec.timing[1].end * 1e6, 400, 1e-6);
  EXPECT_EQ(md.matched(), 1u);
  // A decompression of the same shard without a fused read is another op: the measurement is not its.
  md.rewind();
  Op plain = fused(0);
  plain.read_bytes = 0;
  EXPECT_EQ(md.peek(plain), nullptr);
}

TEST(FusedRead, OnADeviceNoDeeperThanTheIoThreadsTheWorkersReadBesideIt) {
  // ssd.queue_depth 1, the I/O thread's depth (what calibrate writes: the depth exec's I/O thread ran with):
  // the SSD model would serve one request at a time and queue the workers' reads behind the I/O thread's,
  // where the disk serves the threads side by side. Each worker's read is its own wait at the idle-SSD
  // estimate (100 us + 100 kB at 1 GB/s), beside the I/O thread's read. By hand (microseconds): f0, f1 read
  // [0,200] on workers 0 and 1 and decompress [200,400]; the I/O thread's read [0,200], its own at the SSD.
  // Queued on the one-deep SSD instead: f0 [0,400], f1 [0,600], the read [400,600].
  SimOptions so;
  so.cpu_workers = 2;
  SimPlatform p(profile(1), so);
  Recorder rec;
  p.submit(fused(0), &rec, 0);
  p.submit(fused(1), &rec, 1);
  p.submit(io_thread_read(), &rec, 2);
  p.run_until_idle();
  ASSERT_EQ(rec.timing.size(), 3u);
  EXPECT_NEAR(rec.timing[0].end * 1e6, 400, 1e-6);
  EXPECT_NEAR(rec.timing[1].end * 1e6, 400, 1e-6);
  EXPECT_NEAR(rec.timing[2].start * 1e6, 0, 1e-6);
  EXPECT_NEAR(rec.timing[2].end * 1e6, 200, 1e-6);
  // The estimate is the same: a fused read alone on an idle SSD, then its decompression.
  EXPECT_NEAR(p.estimate(fused(0)), 200e-6 + 200e-6, 1e-12);
  // The profile's read line was read (HwReads): the run's reads report it.
  EXPECT_TRUE(p.reads().has(HwParam::kSsdReadLatency));
}

}  // namespace
}  // namespace moesim::sim
