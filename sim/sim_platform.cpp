#include "sim/sim_platform.h"

namespace moesim::sim {

SimPlatform::SimPlatform(const HardwareProfile& hw, const SimOptions& opt)
    : cost_(hw),
      opt_(opt),
      ssd_(engine_, hw.ssd_read_bandwidth, hw.ssd_read_latency, hw.ssd_queue_depth, &io_),
      io_(ssd_, engine_, opt.io_depth, this),
      cpu_(engine_, "cpu_workers", opt.cpu_workers ? opt.cpu_workers : hw.cpu_cores, this),
      gpu_(engine_, "gpu", opt.gpu_streams, this),
      link_(engine_, "link", opt.links, this) {
  if (opt_.cpu_workers == 0) opt_.cpu_workers = hw.cpu_cores;
}

void SimPlatform::submit(const Op& op, OpSink* sink, uint32_t token) {
  uint32_t job;
  if (!free_jobs_.empty()) {
    job = free_jobs_.back();
    free_jobs_.pop_back();
    jobs_[job] = Pending{sink, token};
  } else {
    job = static_cast<uint32_t>(jobs_.size());
    jobs_.push_back(Pending{sink, token});
  }
  switch (op.resource) {
    case ResourceClass::kSsd:
      io_.submit(job, op.priority, op.bytes);
      return;
    case ResourceClass::kCpu:
      cpu_.add_bytes(op.bytes);
      cpu_.submit(job, op.priority, cost_.duration(op));
      return;
    case ResourceClass::kGpu:
      gpu_.add_bytes(op.bytes);
      gpu_.submit(job, op.priority, cost_.duration(op));
      return;
    case ResourceClass::kLink:
      link_.add_bytes(op.bytes);
      link_.submit(job, op.priority, cost_.duration(op));
      return;
  }
}

void SimPlatform::job_done(uint32_t job, const OpTiming& timing) {
  const Pending p = jobs_[job];
  free_jobs_.push_back(job);
  p.sink->op_done(p.token, timing);
}

void SimPlatform::run_until_idle() {
  engine_.run();
}

std::vector<ResourceStats> SimPlatform::resource_stats() const {
  return {ssd_.stats(), io_.stats(), cpu_.stats(), gpu_.stats(), link_.stats()};
}

std::vector<std::string> SimPlatform::queue_names() const {
  return {"io_thread", "ssd", "cpu_workers", "gpu", "link"};
}

void SimPlatform::set_queue_observer(QueueObserver* observer) {
  io_.set_queue_observer(observer, 0);
  ssd_.set_queue_observer(observer, 1);
  cpu_.set_queue_observer(observer, 2);
  gpu_.set_queue_observer(observer, 3);
  link_.set_queue_observer(observer, 4);
}

double SimPlatform::estimate(const Op& op) const {
  if (op.resource == ResourceClass::kSsd) {
    // An idle SSD: the per-request latency plus the bytes at full bandwidth (sim/resources.h's Ssd).
    const HardwareProfile& hw = cost_.hardware();
    return hw.ssd_read_latency + static_cast<double>(op.bytes) / hw.ssd_read_bandwidth;
  }
  return cost_.duration(op);
}

uint32_t SimPlatform::units(ResourceClass r) const {
  switch (r) {
    case ResourceClass::kSsd:
      return opt_.io_depth;
    case ResourceClass::kCpu:
      return opt_.cpu_workers ? opt_.cpu_workers : cost_.hardware().cpu_cores;
    case ResourceClass::kGpu:
      return opt_.gpu_streams;
    case ResourceClass::kLink:
      return opt_.links;
  }
  return 1;
}

std::string SimPlatform::describe() const {
  return "sim: " + cost_.hardware().name;
}

}  // namespace moesim::sim
