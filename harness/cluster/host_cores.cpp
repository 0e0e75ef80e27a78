#include "harness/cluster/host_cores.h"

#include <algorithm>

#include "harness/cluster/call_load.h"

namespace moesim::harness {

HostCores::HostCores(const HostCoresParams& p) : p_(p) {
  density_ = p.call_s > 0 ? std::clamp(p.call_cpu_s / p.call_s, 0.0, 1.0) : 0.0;
}

void HostCores::prune(double now) {
  // Nothing is priced before `now` any more: what ended by then can go.
  std::erase_if(busy_, [now](const Busy& b) { return b.to <= now; });
}

double HostCores::demand(double t) const {
  double d = 0;
  for (const Busy& b : busy_) d += b.from <= t && t < b.to ? b.weight : 0;
  return d;
}

double HostCores::stretch(double now, double own) const {
  if (p_.cores == 0) return 1;
  return std::max(1.0, (demand(now) + own) / static_cast<double>(p_.cores));
}

double HostCores::work(double now, double seconds) {
  prune(now);
  return seconds * stretch(now, 1);
}

double HostCores::call(double now) {
  prune(now);
  const double cpu = std::min(p_.call_cpu_s, p_.call_s);
  return p_.call_s - cpu + cpu * stretch(now, density_);
}

void HostCores::add_handoff(double from, double to) {
  if (to > from && density_ > 0) busy_.push_back({from, to, density_});
}

void HostCores::add_work(double from, double to) {
  if (to > from) busy_.push_back({from, to, 1});
}

namespace {

// The simulator's hooks and CountedCluster's observer over one HostCores book: a server op is priced when it
// is made (its hand-offs and its work at the moment of the call) and entered once the simulator has queued it
// (its work's end is then its unit's expected free time); an invocation's remote works are priced and entered
// when they arrive.
class Pricer : public CallObserver {
 public:
  Pricer(const HostCoresParams& p, sim::SimClusterOptions& co) : cores_(p) {
    co.call_overhead_s = co.call_overhead_per_inflight_s = 0;
    co.shared_cores = 0;
    co.call_seconds = [this](uint32_t, const Op&, bool after) {
      if (!after) pre_ = post_ = cores_.call(sim_->now()) / 2;
      return after ? post_ : pre_;
    };
    co.unit_seconds = [this](uint32_t server, const Op& op) {
      if (op.kind != OpKind::kDenseCompute && op.kind != OpKind::kExpertCompute) return -1.0;
      const double now = sim_->now();
      const double d = cores_.work(now, sim_->server(server).estimate(op));
      if (in_call_) {
        work_ = d;
      } else {  // an invocation's work, queued on its unit as it arrives
        cores_.add_work(now, now + d);
      }
      return d;
    };
  }
  void attach(sim::SimClusterPlatform& sim) { sim_ = &sim; }
  void before(uint64_t) override {
    in_call_ = true;
    work_ = 0;
  }
  void after(uint32_t server, uint32_t unit) override {
    in_call_ = false;
    const double now = sim_->now();
    cores_.add_handoff(now, now + pre_);
    if (unit == UINT32_MAX) return;
    const double end = sim_->server(server).unit_free_at(ResourceClass::kGpu, unit);
    cores_.add_work(end - work_, end);
    cores_.add_handoff(end, end + post_);
  }

 private:
  HostCores cores_;
  sim::SimClusterPlatform* sim_ = nullptr;
  double pre_ = 0, post_ = 0, work_ = 0;
  bool in_call_ = false;
};

}  // namespace

serving::ClusterResult serve_on_host_cores(const serving::ClusterInput& in,
                                           const serving::ClusterOptions& opt,
                                           const std::vector<sim::SimClusterServer>& servers,
                                           sim::SimClusterOptions co, const HostCoresParams& p) {
  Pricer pricer(p, co);
  sim::SimClusterPlatform sim(servers, in.links, co);
  pricer.attach(sim);
  CountedCluster counted(sim, pricer);
  return serving::serve_cluster(in, opt, counted);
}

}  // namespace moesim::harness
