#include "sim/sim_cluster_platform.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::sim {
namespace {

uint8_t slice_kind(const Op& op) {
  switch (op.kind) {
    case OpKind::kDenseCompute:
      return 0;
    case OpKind::kExpertCompute:
      return 1;
    default:
      return op.expert != kNoLabel ? 3 : 2;  // a transfer naming an expert moves its weights
  }
}

std::vector<std::string> names_of(const std::vector<SimClusterServer>& servers) {
  std::vector<std::string> names;
  for (const auto& s : servers) names.push_back(s.name);
  return names;
}

std::vector<double> nics_of(const std::vector<SimClusterServer>& servers) {
  std::vector<double> nic;
  for (const auto& s : servers) nic.push_back(s.nic_bandwidth);
  return std::any_of(nic.begin(), nic.end(), [](double b) { return b > 0; }) ? nic : std::vector<double>{};
}

}  // namespace

// One server: its GPUs as FIFO units on the cluster's clock.
class SimClusterPlatform::Server : public ServerPlatform {
 public:
  Server(SimClusterPlatform& c, uint32_t index, const SimClusterServer& s)
      : c_(c), index_(index), name_(s.name), hw_(s.hw), cost_(s.hw), gpus_(s.gpus), host_links_(s.gpus) {}

  double now() const override { return c_.now(); }
  void submit(const Op& op, OpSink* sink, uint32_t token) override {
    uint32_t best = 0;
    for (uint32_t g = 1; g < gpus_.size(); ++g)
      if (gpus_[g].free_at < gpus_[best].free_at) best = g;
    submit_on(best, op, sink, token);
  }
  // Queues `op` on GPU `unit` (or, an op on kLink, on that GPU's host link), ready at `ready` (now or later);
  // returns its start and end.
  std::pair<double, double> run_on(uint32_t unit, const Op& op, double ready) {
    if (unit >= gpus_.size())
      throw Error("cluster: server \"" + name_ + "\" has no GPU " + std::to_string(unit));
    const double replayed = c_.opt_.unit_seconds ? c_.opt_.unit_seconds(index_, op) : -1;
    double d = replayed >= 0 ? replayed : estimate(op);
    const bool host_link = op.resource == ResourceClass::kLink;
    if (replayed < 0 && c_.opt_.shared_cores > 0 && !host_link)
      d *= std::max(1.0, c_.working_units(ready) / c_.opt_.shared_cores);
    const double end = (host_link ? host_links_ : gpus_)[unit].submit(ready, d, op.bytes);
    // A host link's slices go on threads after the GPUs'.
    c_.record(index_, host_link ? static_cast<uint32_t>(gpus_.size()) + unit : unit, end - d, end,
              host_link ? 4 : slice_kind(op), op.layer);
    return {end - d, end};
  }
  void submit_on(uint32_t unit, const Op& op, OpSink* sink, uint32_t token) override {
    const double pre = c_.call_seconds(index_, op, false), post = c_.call_seconds(index_, op, true);
    ++c_.calls_in_flight_;
    const auto [start, end] = run_on(unit, op, c_.now() + pre);
    Pending p;
    p.sink = sink;
    p.token = token;
    p.timing.start = start;
    p.timing.end = end + post;
    p.timing.unit = unit;
    p.timing.submitted = c_.now();
    p.call = true;
    c_.engine_.schedule(end + post, &c_, c_.pend(p));
  }
  const std::vector<FifoUnit>& gpus() const { return gpus_; }
  double unit_free_at(ResourceClass r, uint32_t unit) const override {
    if (r == ResourceClass::kLink) return unit < host_links_.size() ? host_links_[unit].free_at : 0;
    return r == ResourceClass::kGpu && unit < gpus_.size() ? gpus_[unit].free_at : 0;
  }
  void run_until_idle() override { c_.run(); }
  std::vector<ResourceStats> resource_stats() const override {
    ResourceStats s{resource_pool_name(ResourceClass::kGpu), static_cast<uint32_t>(gpus_.size()), 0, 0, 0};
    for (const FifoUnit& g : gpus_) {
      s.busy_time += g.busy_s;
      s.ops += g.jobs;
      s.bytes += g.bytes;
    }
    return {s};
  }
  std::string describe() const override { return "sim: server " + name_ + " (" + hw_.name + ")"; }
  // The cost model's duration; a decode token's (one token, the model's expert) is asked for at every
  // invocation, so the last one-token answer per kind is kept.
  double estimate(const Op& op) const override {
    if (op.kind == OpKind::kTransfer) return cluster_op_seconds(cost_, hw_, op);
    const int k = op.kind == OpKind::kDenseCompute ? 0 : 1;
    Memo& m = memo_[k];
    if (op.tokens == 1 && m.valid && m.bytes == op.bytes && m.flops == op.flops) return m.seconds;
    const double d = cluster_op_seconds(cost_, hw_, op);
    if (op.tokens == 1) m = {true, op.bytes, op.flops, d};
    return d;
  }
  uint32_t units(ResourceClass r) const override {
    return r == ResourceClass::kGpu || r == ResourceClass::kLink ? static_cast<uint32_t>(gpus_.size()) : 0;
  }

 private:
  struct Memo {
    bool valid = false;
    uint64_t bytes = 0;
    double flops = 0, seconds = 0;
  };
  SimClusterPlatform& c_;
  uint32_t index_;
  std::string name_;
  HardwareProfile hw_;
  CostModel cost_;
  std::vector<FifoUnit> gpus_;
  std::vector<FifoUnit> host_links_;  // [gpu]: host memory -> that GPU (its PCIe link)
  mutable Memo memo_[2];
};

SimClusterPlatform::SimClusterPlatform(const std::vector<SimClusterServer>& servers,
                                       const std::vector<ClusterLinkSpec>& links,
                                       const SimClusterOptions& opt)
    : opt_(opt), net_(names_of(servers), links, nics_of(servers)) {
  const auto N = static_cast<uint32_t>(servers.size());
  for (uint32_t n = 0; n < N; ++n) {
    if (servers[n].gpus == 0) throw Error("cluster: server \"" + servers[n].name + "\" has no GPU");
    servers_.push_back(std::make_unique<Server>(*this, n, servers[n]));
  }
}

SimClusterPlatform::~SimClusterPlatform() = default;

ServerPlatform& SimClusterPlatform::server(uint32_t n) {
  return *servers_.at(n);
}
const ServerPlatform& SimClusterPlatform::server(uint32_t n) const {
  return *servers_.at(n);
}

double SimClusterPlatform::route_latency(uint32_t from, uint32_t to) const {
  return net_.route_latency(from, to);
}
double SimClusterPlatform::route_inverse_bandwidth(uint32_t from, uint32_t to) const {
  return net_.route_inverse_bandwidth(from, to);
}

uint32_t SimClusterPlatform::pend(Pending p) {
  if (free_.empty()) {
    pending_.push_back(std::move(p));
    return static_cast<uint32_t>(pending_.size() - 1);
  }
  const uint32_t id = free_.back();
  free_.pop_back();
  pending_[id] = std::move(p);
  return id;
}

void SimClusterPlatform::record(uint32_t process, uint32_t thread, double start, double end, uint8_t kind,
                                uint16_t layer) {
  if (opt_.record_timeline && start >= opt_.timeline_from_s && start <= opt_.timeline_to_s)
    timeline_.push_back({process, thread, start, end, kind, layer});
}

double SimClusterPlatform::hop(uint32_t link, double ready, uint64_t bytes, uint8_t kind, uint16_t layer) {
  const double arrive = net_.send_hop(link, ready, bytes);
  if (opt_.record_timeline) {
    const DirectedLink& l = net_.links()[link];
    const double end = l.fifo.free_at;
    record(servers() + link / 2, link % 2, end - static_cast<double>(bytes) / l.params.bandwidth, end, kind,
           layer);
  }
  return arrive;
}

double SimClusterPlatform::working_units(double at) const {
  double n = 1;  // the one about to start
  for (const auto& s : servers_)
    for (const FifoUnit& g : s->gpus()) n += g.free_at > at ? 1 : 0;
  return n;
}

double SimClusterPlatform::call_seconds(uint32_t server, const Op& op, bool after) const {
  const double replayed = opt_.call_seconds ? opt_.call_seconds(server, op, after) : -1;
  if (replayed >= 0) return replayed;
  return (opt_.call_overhead_s + opt_.call_overhead_per_inflight_s * static_cast<double>(calls_in_flight_)) /
         2;
}

void SimClusterPlatform::start_route(uint32_t id, double ready) {
  Pending& p = pending_[id];
  p.hop = 0;
  p.direct = false;
  if (p.stage != Pending::kMessage && opt_.transfer_seconds) {
    const bool back =
        p.stage == Pending::kBack;  // then from and to are swapped: the invocation's are to, from
    const double t =
        opt_.transfer_seconds(back ? p.to : p.from, back ? p.from : p.to, p.layer, p.bytes, back);
    if (t >= 0) {
      p.direct = true;
      engine_.schedule(ready + t, this, id);
      return;
    }
  }
  const std::vector<uint32_t>& route = net_.route(p.from, p.to);
  engine_.schedule(route.empty() ? ready : hop(route[0], ready, p.bytes, p.kind, p.layer), this, id);
}

SimClusterPlatform::Pending SimClusterPlatform::message(uint32_t from, uint32_t to, uint64_t bytes,
                                                        uint16_t layer, OpSink* sink, uint32_t token) const {
  Pending p;
  p.sink = sink;
  p.token = token;
  p.timing.start = p.timing.submitted = now();
  p.from = from;
  p.to = to;
  p.bytes = bytes;
  p.layer = layer;
  return p;
}

void SimClusterPlatform::send(uint32_t from, uint32_t to, const Op& op, OpSink* sink, uint32_t token) {
  Pending p = message(from, to, op.bytes, op.layer, sink, token);
  p.kind = slice_kind(op);
  p.stage = Pending::kMessage;
  start_route(pend(std::move(p)), now());
}

void SimClusterPlatform::invoke(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes,
                                const std::vector<RemoteWork>& works, OpSink* sink, uint32_t token) {
  Pending p = message(from, to, bytes, layer, sink, token);
  p.kind = 2;
  p.stage = Pending::kThere;
  p.works = works;
  Op call;
  call.kind = OpKind::kTransfer;
  call.resource = ResourceClass::kLink;
  call.layer = layer;
  call.bytes = bytes;
  const double pre = call_seconds(from, call, false) + opt_.invoke_overhead_s / 2;
  p.post = call_seconds(from, call, true) + opt_.invoke_overhead_s / 2;
  p.call = true;
  ++calls_in_flight_;
  start_route(pend(std::move(p)), now() + pre);
}

void SimClusterPlatform::wake_at(double t, OpSink* sink, uint32_t token) {
  Pending p;
  p.sink = sink;
  p.token = token;
  p.timing.start = p.timing.end = std::max(t, now());
  engine_.schedule(p.timing.end, this, pend(std::move(p)));
}

void SimClusterPlatform::on_event(uint64_t arg) {
  const auto id = static_cast<uint32_t>(arg);
  Pending& p = pending_[id];
  if (!p.direct &&
      (p.stage == Pending::kMessage || p.stage == Pending::kThere || p.stage == Pending::kBack)) {
    const std::vector<uint32_t>& route = net_.route(p.from, p.to);
    if (++p.hop < route.size()) {
      engine_.schedule(hop(route[p.hop], now(), p.bytes, p.kind, p.layer), this, id);
      return;
    }
  }
  if (p.stage == Pending::kThere) {  // arrived: every work queues on its GPU now
    double done = now();
    for (const RemoteWork& w : p.works)
      done = std::max(done, servers_[p.to]->run_on(w.unit, w.op, now()).second);
    p.stage = Pending::kComputed;
    engine_.schedule(done, this, id);
    return;
  }
  if (p.stage == Pending::kComputed) {  // the results go back
    std::swap(p.from, p.to);
    p.stage = Pending::kBack;
    return start_route(id, now());
  }
  if (p.stage == Pending::kBack && p.post > 0) {  // back: the coordinator hears of it after the call's tail
    p.stage = Pending::kPost;
    engine_.schedule(now() + p.post, this, id);
    return;
  }
  if (p.stage != Pending::kDone) p.timing.end = now();
  OpSink* sink = p.sink;
  const uint32_t token = p.token;
  const OpTiming timing = p.timing;
  if (p.call) --calls_in_flight_;
  free_.push_back(id);  // before the sink runs: it may submit, and reuse the slot
  sink->op_done(token, timing);
}

void SimClusterPlatform::run() {
  engine_.run();
}

}  // namespace moesim::sim
