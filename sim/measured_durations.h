// Durations measured on a real run, fed back to the simulator (`moesim validate`'s structure check): the
// simulator then models only queueing, overlap, priorities and dependencies, and every op holds its resource
// for exactly as long as the same op did in the measured run.
//
// Ops are matched by identity -- (kind, fused read or not, resource, layer, expert, tensor, part, shard) -- and
// occurrence: the n-th op with an identity in the simulation takes the n-th measured duration of that identity
// (ops of one identity never overlap in either run, so occurrence order is submission order). An op with no measured
// counterpart left (the runs diverged, e.g. a prefetch decided by timing) falls back to the cost model and is
// counted as unmatched.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/op_graph.h"
#include "core/platform.h"

namespace moesim::sim {

class MeasuredDurations {
 public:
  // Appends a measured duration of `op`'s identity (call in the measured run's start-time order), the op's
  // measured hand-off and turnaround (OpTiming::handoff, OpTiming::turnaround; < 0: none) and, for an SSD
  // read, the I/O thread's CPU work after the `seconds` on the device (HardwareProfile::read_cpu; 0: none);
  // for a fused read (Op::read_bytes) `seconds` is its read's device time and cpu_tail its worker's CPU work
  // after it (the decompression).
  void add(const Op& op, double seconds, double handoff = -1, double turnaround = -1, double cpu_tail = 0);
  // The next measured duration of `op`'s identity; a negative value when none is left.
  double next(const Op& op);
  // One measured op: its duration, hand-off (< 0: it queued in the measured run), turnaround (< 0: it did
  // not wait for its unit) and CPU work after the duration (a read's; 0: none).
  struct Measured {
    double seconds, handoff, turnaround, cpu_tail;
  };
  // The measurements of the op that next(op) will return, without taking it; nullptr when none is left.
  const Measured* peek(const Op& op) const;
  // Starts over: every measured duration is available again and the counts are zero (for another simulation).
  void rewind();
  // The measured planning calls, in the measured run's order (one per graph): the simulator's n-th graph
  // takes the n-th one when it has as many ops, else the cost model's fit (counted as unmatched).
  void add_planning(const PlanningTime& p) { planning_.push_back(p); }
  bool next_planning(uint32_t ops, PlanningTime* out);
  uint64_t planning_matched() const { return planning_matched_; }
  uint64_t planning_unmatched() const { return planning_unmatched_; }
  uint64_t matched() const { return matched_; }
  uint64_t unmatched() const { return unmatched_; }
  size_t size() const { return total_; }

 private:
  static uint64_t identity(const Op& op);
  struct Queue {
    std::vector<Measured> m;
    size_t pos = 0;
  };
  std::unordered_map<uint64_t, Queue> by_identity_;
  std::vector<PlanningTime> planning_;
  size_t planning_pos_ = 0;
  uint64_t planning_matched_ = 0, planning_unmatched_ = 0;
  uint64_t matched_ = 0, unmatched_ = 0;
  size_t total_ = 0;
};

}  // namespace moesim::sim
