// CpuCores: the machine's cores, shared by the engine's CPU-bound threads (processor sharing). On a small
// machine the engine runs more busy threads than it has cores -- on a 2-core machine without a GPU: the L = 2
// decompression workers and the thread that plays the GPU stream -- and the kernel's scheduler time-slices
// them: with n ops running on C < n cores, each progresses at C / n of its speed alone. A server pool
// attached to CpuCores (ServerPool::share_cores) hands it every op it starts with the op's *work* (its time
// alone on a core); the op ends when it has had that much, at the rate of the moment. Without contention
// (n <= C) an op takes exactly its work, so attaching changes nothing on a machine with cores to spare.
//
// The scheduler's time slices are milliseconds, an op tens to hundreds of microseconds: equal shares over an
// op are the fluid limit of round-robin slicing, not a model of the slices themselves (an op that starts
// on a busy machine starts at once, at a share, where a real thread may wait for a slice to end first).
//
// cpu_work() is the model's inverse for measurements: given the wall-clock intervals of every CPU-bound op
// of a real run, each op's work. `moesim calibrate` fits the cost model to work, not to wall time, so that
// the simulator can put the contention back for whatever mix of ops another trace produces.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/event_queue.h"

namespace moesim::sim {

class CpuCores : public EventHandler {
 public:
  // cores >= 1.
  CpuCores(EventEngine& engine, uint32_t cores);
  // An op of `work` seconds (>= 0) starts now; done->on_event(arg) is called once it has had them. Ops
  // that finish at the same instant are reported in the order they started.
  void start(EventHandler* done, uint64_t arg, double work);
  void on_event(uint64_t generation) override;
  uint32_t cores() const { return cores_; }
  uint32_t running() const { return static_cast<uint32_t>(jobs_.size()); }

 private:
  double rate() const;  // the share of a core each running op gets
  void advance();       // the running ops' progress up to now
  void reschedule();    // the next completion event (older ones go stale)
  struct Job {
    EventHandler* done;
    uint64_t arg;
    double remaining;  // seconds of work
  };
  EventEngine& engine_;
  uint32_t cores_;
  std::vector<Job> jobs_, finished_;
  double last_ = 0;
  uint64_t generation_ = 0;
};

// The work of each of `intervals` (start, end in seconds; the wall-clock spans of all the CPU-bound ops of
// a run) on `cores` cores shared equally: the integral over the op's span of min(1, cores / n(t)), n(t) the
// number of intervals open at t. So an op that ran alone keeps its duration and two ops that overlapped on
// one core for their whole spans get half of theirs each. Same order as the input.
std::vector<double> cpu_work(const std::vector<std::pair<double, double>>& intervals, uint32_t cores);

}  // namespace moesim::sim
