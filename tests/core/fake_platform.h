// A fake Platform for unit tests of the serving pipeline without sim/: every op of a kind takes a fixed
// duration, each resource class has a fixed number of units, and an op waits for a free unit of its class
// in (priority, submission order), lower priority first -- the Platform contract of core/platform.h and
// nothing else. Times are exact (sums of the given durations), so expected schedules can be worked out by
// hand. Completions at the same time are reported in submission order. A fused read (Op::read_bytes: a
// decompression whose CPU worker reads its E-chunk itself) holds its CPU unit for fused_read() seconds, then for
// the decompression's duration; it takes no SSD unit (the device itself is the simulator's to model).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/platform.h"

namespace moesim::test {

class FakePlatform final : public Platform {
 public:
  FakePlatform() {
    duration_.fill(1.0);
    units_.fill(1);
  }
  FakePlatform& duration(OpKind k, double seconds) {
    duration_[static_cast<size_t>(k)] = seconds;
    return *this;
  }
  FakePlatform& fused_read(double seconds) {
    fused_read_ = seconds;
    return *this;
  }
  FakePlatform& units(ResourceClass r, uint32_t n) {
    units_[static_cast<size_t>(r)] = n;
    return *this;
  }

  double now() const override { return now_; }
  void submit(const Op& op, OpSink* sink, uint32_t token) override {
    const auto r = static_cast<size_t>(op.resource);
    waiting_[r].emplace(std::make_pair(op.priority, seq_++), Job{op, sink, token});
    ++stats_[r].ops;
    stats_[r].bytes += op.bytes;
  }
  void run_until_idle() override {
    for (;;) {
      start_what_fits();
      if (running_.empty()) return;
      auto first = running_.begin();  // earliest end, then earliest start order
      const auto [end, order] = first->first;
      Running done = first->second;
      running_.erase(first);
      now_ = end;
      busy_[static_cast<size_t>(done.job.op.resource)][done.unit] = false;
      done.job.sink->op_done(done.job.token, OpTiming{done.start, end, done.unit});
      (void)order;
    }
  }
  std::vector<ResourceStats> resource_stats() const override {
    std::vector<ResourceStats> v;
    for (size_t r = 0; r < kResourceClasses; ++r) {
      ResourceStats s = stats_[r];
      s.name = resource_class_name(static_cast<ResourceClass>(r));
      s.units = units_[r];
      v.push_back(s);
    }
    return v;
  }
  std::string describe() const override { return "fake platform (fixed durations)"; }
  double estimate(const Op& op) const override { return held(op); }
  uint32_t units(ResourceClass r) const override { return units_[static_cast<size_t>(r)]; }
  void memory_pools(const std::vector<PoolInfo>& pools) override { pools_ = pools; }
  void memory_event(const MemoryEvent& e) override { memory_events.push_back({now_, e}); }
  // Every memory event received, with the time it arrived.
  std::vector<std::pair<double, MemoryEvent>> memory_events;
  const std::vector<PoolInfo>& pools() const { return pools_; }

 private:
  struct Job {
    Op op;
    OpSink* sink;
    uint32_t token;
  };
  struct Running {
    Job job;
    double start;
    uint32_t unit;
  };
  void start_what_fits() {
    for (size_t r = 0; r < kResourceClasses; ++r) {
      auto& busy = busy_[r];
      busy.resize(units_[r], false);
      for (uint32_t u = 0; u < units_[r] && !waiting_[r].empty(); ++u) {
        if (busy[u]) continue;
        auto it = waiting_[r].begin();
        const Job job = it->second;
        waiting_[r].erase(it);
        busy[u] = true;
        const double d = held(job.op);
        stats_[r].busy_time += d;
        running_.emplace(std::make_pair(now_ + d, started_++), Running{job, now_, u});
      }
    }
  }

  double held(const Op& op) const {
    return duration_[static_cast<size_t>(op.kind)] + (op.fused_read() ? fused_read_ : 0.0);
  }

  double now_ = 0;
  double fused_read_ = 1.0;
  uint64_t seq_ = 0, started_ = 0;
  std::array<double, kOpKinds> duration_{};
  std::array<uint32_t, kResourceClasses> units_{};
  std::array<std::map<std::pair<int64_t, uint64_t>, Job>, kResourceClasses> waiting_;
  std::array<std::vector<bool>, kResourceClasses> busy_;
  std::map<std::pair<double, uint64_t>, Running> running_;
  std::array<ResourceStats, kResourceClasses> stats_{};
  std::vector<PoolInfo> pools_;
};

}  // namespace moesim::test
