// SimPlatform: the Platform interface (core/platform.h) in simulated time. Ops go to the resource of
// their class: SSD reads through the single I/O thread to the SSD model, decompressions to the pool of L
// CPU workers, recovery and compute to the GPU stream(s), transfers to the host-device link; durations
// come from CostModel. Deterministic: ties are broken by event sequence numbers, never by addresses.
#pragma once

#include <cstdint>
#include <vector>

#include "core/platform.h"
#include "sim/cost_model.h"
#include "sim/event_queue.h"
#include "sim/resources.h"

namespace moesim::sim {

struct SimOptions {
  uint32_t io_depth = 1;     // reads the I/O thread keeps outstanding (1 = blocking reads, ZipMoE §3.3)
  uint32_t cpu_workers = 0;  // L; 0 = the profile's cpu.cores
  uint32_t gpu_streams = 1;
  uint32_t links = 1;
};

class SimPlatform : public Platform, private JobListener {
 public:
  SimPlatform(const HardwareProfile& hw, const SimOptions& opt = {});
  double now() const override { return engine_.now(); }
  void submit(const Op& op, OpSink* sink, uint32_t token) override;
  void run_until_idle() override;
  // ssd, io_thread, cpu_workers, gpu, link (in that order).
  std::vector<ResourceStats> resource_stats() const override;
  std::string describe() const override;
  double estimate(const Op& op) const override;
  uint32_t units(ResourceClass r) const override;
  // io_thread (reads waiting to be issued), ssd (requests waiting for a slot), cpu_workers, gpu, link.
  std::vector<std::string> queue_names() const override;
  void set_queue_observer(QueueObserver* observer) override;

  EventEngine& engine() { return engine_; }
  const CostModel& cost_model() const { return cost_; }

 private:
  void job_done(uint32_t job, const OpTiming& timing) override;
  struct Pending {
    OpSink* sink;
    uint32_t token;
  };
  CostModel cost_;
  SimOptions opt_;
  EventEngine engine_;
  Ssd ssd_;
  IoThread io_;
  ServerPool cpu_, gpu_, link_;
  std::vector<Pending> jobs_;
  std::vector<uint32_t> free_jobs_;
};

}  // namespace moesim::sim
