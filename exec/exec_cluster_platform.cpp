#include "exec/exec_cluster_platform.h"

#include <algorithm>
#include <chrono>

#include "base/error.h"
#include "core/cost_model.h"

namespace moesim::exec {

// One server: ops become calls to its process; its units' expected free times are the coordinator's book.
class ExecClusterPlatform::Server : public ServerPlatform {
 public:
  Server(ExecClusterPlatform& c, uint32_t index, ExecClusterServer s)
      : c_(c), index_(index), s_(std::move(s)), cost_(s_.hw), free_at_(s_.gpus, 0.0) {}

  double now() const override { return c_.now(); }
  void submit(const Op& op, OpSink* sink, uint32_t token) override {
    const auto it = std::min_element(free_at_.begin(), free_at_.end());
    submit_on(static_cast<uint32_t>(it - free_at_.begin()), op, sink, token);
  }
  void submit_on(uint32_t unit, const Op& op, OpSink* sink, uint32_t token) override {
    if (unit >= s_.gpus)
      throw Error("cluster: server \"" + s_.name + "\" has no GPU " + std::to_string(unit));
    free_at_[unit] = std::max(free_at_[unit], now()) + estimate(op);
    ExecCallRecord rec;
    rec.server = index_;
    rec.unit = unit;
    rec.layer = op.layer;
    rec.expert = op.expert;
    rec.tokens = op.tokens;
    rec.bytes = op.bytes;
    rec.submitted = now();
    std::shared_ptr<ServerCalls> calls = s_.calls;
    const uint32_t layer = op.layer, expert = op.expert, tokens = op.tokens;
    switch (op.kind) {
      case OpKind::kDenseCompute:
        rec.kind = 0;
        return c_.launch(sink, token, push(rec), [=] { return calls->dense(unit, layer, tokens); });
      case OpKind::kExpertCompute:
        rec.kind = 1;
        return c_.launch(sink, token, push(rec), [=] { return calls->compute(unit, layer, expert, tokens); });
      default:  // a migration's load: the Push that carried the weights installed them
        rec.kind = 4;
        return c_.launch(sink, token, push(rec), [] {
          CallTiming t;
          t.start = t.end = monotonic_seconds();
          return t;
        });
    }
  }
  double unit_free_at(ResourceClass r, uint32_t unit) const override {
    return r == ResourceClass::kGpu && unit < free_at_.size() ? free_at_[unit] : 0;
  }
  void run_until_idle() override { c_.run(); }
  std::vector<ResourceStats> resource_stats() const override { return {}; }
  std::string describe() const override { return "exec: server " + s_.name; }
  double estimate(const Op& op) const override { return cluster_op_seconds(cost_, s_.hw, op); }
  uint32_t units(ResourceClass r) const override { return r == ResourceClass::kGpu ? s_.gpus : 0; }
  std::shared_ptr<ServerCalls> shared_calls() const { return s_.calls; }
  double& free_at_unit(uint32_t unit) { return free_at_.at(unit); }

 private:
  size_t push(const ExecCallRecord& rec) {
    c_.records_.push_back(rec);
    return c_.records_.size() - 1;
  }
  ExecClusterPlatform& c_;
  uint32_t index_;
  ExecClusterServer s_;
  CostModel cost_;
  std::vector<double> free_at_;
};

ExecClusterPlatform::ExecClusterPlatform(std::vector<ExecClusterServer> servers,
                                         const std::vector<ClusterLinkSpec>& links, uint32_t call_threads)
    : t0_(monotonic_seconds()), routes_([&] {
        std::vector<std::string> names;
        for (const auto& s : servers) names.push_back(s.name);
        return ClusterRoutes(names, links);
      }()) {
  const auto N = static_cast<uint32_t>(servers.size());
  for (uint32_t n = 0; n < N; ++n) {
    if (servers[n].gpus == 0) throw Error("cluster: server \"" + servers[n].name + "\" has no GPU");
    if (!servers[n].calls) throw Error("cluster: server \"" + servers[n].name + "\" has no process to call");
    servers_.push_back(std::make_unique<Server>(*this, n, std::move(servers[n])));
  }
  for (uint32_t i = 0; i < std::max(call_threads, 1u); ++i) pool_.emplace_back([this] { worker(); });
}

ExecClusterPlatform::~ExecClusterPlatform() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : pool_) t.join();
}

double ExecClusterPlatform::now() const {
  return monotonic_seconds() - t0_;
}

ServerPlatform& ExecClusterPlatform::server(uint32_t n) {
  return *servers_.at(n);
}
const ServerPlatform& ExecClusterPlatform::server(uint32_t n) const {
  return *servers_.at(n);
}

double ExecClusterPlatform::route_latency(uint32_t from, uint32_t to) const {
  return routes_.route_latency(from, to);
}
double ExecClusterPlatform::route_inverse_bandwidth(uint32_t from, uint32_t to) const {
  return routes_.route_inverse_bandwidth(from, to);
}

void ExecClusterPlatform::worker() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stopping_ || !work_.empty(); });
      if (work_.empty()) return;
      job = std::move(work_.front());
      work_.pop_front();
    }
    job();
  }
}

void ExecClusterPlatform::launch(OpSink* sink, uint32_t token, size_t record,
                                 std::function<CallTiming()> call) {
  const double submitted = now();
  const std::string where = servers_[records_[record].server]->describe();
  auto job = [this, sink, token, record, submitted, where, call = std::move(call)] {
    Done d;
    d.sink = sink;
    d.token = token;
    d.record = record;
    d.timing.submitted = submitted;
    try {
      d.call = call();
      d.timing.start = d.call.start - t0_;
      d.timing.end = now();
    } catch (const std::exception& e) {
      d.error = where + ": " + e.what();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back(std::move(d));
    }
    cv_.notify_one();
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++inflight_;
    work_.push_back(std::move(job));
  }
  work_cv_.notify_one();
}

void ExecClusterPlatform::invoke(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes,
                                 const std::vector<RemoteWork>& works, OpSink* sink, uint32_t token) {
  ExecCallRecord rec;
  rec.kind = 2;
  rec.server = from;
  rec.peer = to;
  rec.layer = layer;
  rec.bytes = bytes;
  rec.submitted = now();
  std::vector<std::array<uint32_t, 3>> w;
  for (const RemoteWork& r : works) {
    w.push_back({r.op.expert, r.unit, r.op.tokens});
    rec.tokens += r.op.tokens;
    double& f = servers_[to]->free_at_unit(r.unit);
    f = std::max(f, now()) + servers_[to]->estimate(r.op);
  }
  rec.works = w;
  records_.push_back(rec);
  std::shared_ptr<ServerCalls> calls = servers_[from]->shared_calls();
  launch(sink, token, records_.size() - 1, [calls, to, layer, w] { return calls->invoke(to, layer, w); });
}

void ExecClusterPlatform::send(uint32_t from, uint32_t to, const Op& op, OpSink* sink, uint32_t token) {
  ExecCallRecord rec;
  rec.kind = 3;
  rec.server = from;
  rec.peer = to;
  rec.layer = op.layer;
  rec.expert = op.expert;
  rec.bytes = op.bytes;
  rec.submitted = now();
  records_.push_back(rec);
  std::shared_ptr<ServerCalls> calls = servers_[from]->shared_calls();
  const uint32_t layer = op.layer, expert = op.expert;
  launch(sink, token, records_.size() - 1,
         [calls, to, layer, expert] { return calls->push(to, layer, expert); });
}

void ExecClusterPlatform::wake_at(double t, OpSink* sink, uint32_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  timers_.push({t, timer_seq_++, sink, token});
}

void ExecClusterPlatform::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!done_.empty()) {
      Done d = std::move(done_.front());
      done_.pop_front();
      --inflight_;
      lock.unlock();
      if (!d.error.empty()) throw Error("cluster: " + d.error);
      // The system hears of it now, when this thread takes it: the wake-up is the coordinator's, and part
      // of what a real run's latency holds.
      d.timing.end = now();
      ExecCallRecord& rec = records_[d.record];
      rec.returned = d.timing.end;
      rec.timing = d.call;
      for (double* t : {&rec.timing.start, &rec.timing.end, &rec.timing.peer_arrived, &rec.timing.peer_sent,
                        &rec.timing.received, &rec.timing.replied})
        if (*t != 0) *t -= t0_;
      for (auto& [a, b] : rec.timing.works) {
        a -= t0_;
        b -= t0_;
      }
      d.sink->op_done(d.token, d.timing);
      lock.lock();
      continue;
    }
    const double t = now();
    if (!timers_.empty() && timers_.top().t <= t) {
      const Timer w = timers_.top();
      timers_.pop();
      lock.unlock();
      OpTiming timing;
      timing.start = timing.end = t;
      w.sink->op_done(w.token, timing);
      lock.lock();
      continue;
    }
    if (inflight_ == 0 && timers_.empty()) return;
    if (timers_.empty()) {
      cv_.wait(lock);
    } else {
      cv_.wait_for(lock, std::chrono::duration<double>(timers_.top().t - t));
    }
  }
}

}  // namespace moesim::exec
