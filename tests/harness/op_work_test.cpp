// Each measured op's work (harness/exec_runner.h's op_work) for a CPU worker's fused read (Op::read_bytes): the
// device time of its read, then its CPU work, split by the worker's CPU clock as an O_DIRECT read is.
#include <gtest/gtest.h>

#include <vector>

#include "harness/exec_runner.h"

namespace moesim::harness {
namespace {

TimelineEvent event(bool fused, double start, double end, double cpu) {
  TimelineEvent e;
  e.op.kind = OpKind::kDecompress;
  e.op.resource = ResourceClass::kCpu;
  e.op.read_bytes = fused ? 4096 : 0;
  e.timing.start = start;
  e.timing.end = end;
  e.timing.cpu = cpu;
  return e;
}

TEST(OpWork, AFusedReadIsItsDeviceTimeThenItsCpuWork) {
  // Cores to spare: the fused op [0,1] spent 0.3 s on a core (its decompression, at its end), so 0.7 s was
  // its read's; a plain decompression is CPU work throughout; a fused op without the clock cannot be split
  // and counts as CPU work. Buffered or not (split_reads false), a fused op is split.
  const std::vector<TimelineEvent> tl{event(true, 0, 1, 0.3), event(false, 0, 0.5, 0.5), event(true, 2, 3, -1)};
  const OpWork w = op_work(tl, 4, false, false);
  EXPECT_NEAR(w.work[0], 0.7, 1e-12);
  EXPECT_NEAR(w.read_cpu[0], 0.3, 1e-12);
  EXPECT_NEAR(w.work[1], 0.5, 1e-12);
  EXPECT_EQ(w.read_cpu[1], 0);
  EXPECT_NEAR(w.work[2], 1.0, 1e-12);
  EXPECT_EQ(w.read_cpu[2], 0);
}

TEST(OpWork, AFusedReadsCpuPhaseSharesTheCoresWithTheOpsBesideIt) {
  // One core: the fused op's CPU phase [0.7,1] and a decompression [0.7,1] shared it, half each, so its 0.3 s
  // of CPU took 0.6 s of wall time and its read only 0.4 s; the decompression's work is 0.15 s.
  const std::vector<TimelineEvent> tl{event(true, 0, 1, 0.3), event(false, 0.7, 1, 0.15)};
  const OpWork w = op_work(tl, 1, false, false);
  EXPECT_NEAR(w.work[0], 0.4, 1e-12);
  EXPECT_NEAR(w.read_cpu[0], 0.3, 1e-12);
  EXPECT_NEAR(w.work[1], 0.15, 1e-12);
}

}  // namespace
}  // namespace moesim::harness
