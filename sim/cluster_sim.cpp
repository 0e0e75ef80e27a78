// The cluster's event loop (sim/cluster_sim.h has the model). One EventHandler; an event's argument is its
// kind in the top bits and a request, message or server index below.
#include "sim/cluster_sim.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "base/error.h"
#include "core/op_graph.h"
#include "base/rng.h"
#include "base/units.h"
#include "sim/cluster_work.h"
#include "sim/cost_model.h"
#include "sim/event_queue.h"
#include "sim/network.h"

namespace moesim::sim {
namespace {

enum Kind : uint64_t { kArrival, kDenseDone, kHop, kComputeDone, kLayerEnd, kMigrationCheck, kMigrationDone };
constexpr int kKindShift = 58;
constexpr uint64_t kIdMask = (uint64_t{1} << kKindShift) - 1;
constexpr double kMaxRequests = 20e6;  // about 1 GB of request state
uint64_t event_arg(Kind k, uint64_t id) { return (static_cast<uint64_t>(k) << kKindShift) | id; }

struct Req {
  uint32_t server = 0, plan = 0, pass = 0;
  uint32_t pending = 0;  // messages out
  double local_end = 0;  // the pass's last local expert
};

struct Msg {
  uint32_t req = 0, src = 0, dst = 0, hop = 0;
  bool back = false;
  uint16_t layer = 0;
  uint64_t bytes = 0;
  double sent = 0;
  std::vector<std::pair<uint32_t, uint32_t>> work;  // (GPU of dst, tokens)
};

class ClusterSim : public EventHandler {
 public:
  ClusterSim(const ClusterInput& in, const ClusterOptions& opt);
  ClusterResult run();
  void on_event(uint64_t arg) override;

 private:
  void place();
  double gpu_submit(uint32_t server, uint32_t gpu, double ready, double seconds, uint8_t kind, uint16_t layer);
  double hop(uint32_t link, double ready, uint64_t bytes, uint8_t kind, uint16_t layer);
  double expert_s(uint32_t server, uint32_t tokens) const;
  double dense_s(uint32_t server, uint32_t tokens) const;
  void schedule_arrival(uint32_t server);
  void arrive(uint32_t server);
  void start_pass(uint32_t r);
  void dispatch(uint32_t r);
  void hop_done(uint32_t m);
  void compute_done(uint32_t m);
  void returned(uint32_t m);
  void layer_end(uint32_t r);
  void migration_check();
  double remote_invocation_s() const;

  const ClusterInput& in_;
  const ClusterOptions& opt_;
  const uint32_t N_, L_, E_;
  const ClusterWork w_;  // the servers' sequences as passes
  EventEngine engine_;
  Network net_;
  std::vector<CostModel> costs_;
  std::vector<double> expert1_s_, dense1_s_;  // one token's costs per server
  std::vector<uint32_t> gpu_base_;
  std::vector<FifoUnit> gpus_;
  std::vector<double> route_latency_, route_inv_bw_;  // [from * N + to]: idle transfer = lat + bytes * inv_bw
  uint64_t act_bytes_per_token_ = 0;

  PlacementInput place_in_;
  std::unique_ptr<PlacementPolicy> policy_;
  Placement current_, pending_;
  bool migrating_ = false;
  std::vector<std::vector<double>> run_load_;  // [server][key]: activations (tokens) so far

  std::vector<Rng> arrival_rng_, draw_rng_;
  std::vector<uint64_t> arrivals_, next_timestamp_;
  std::vector<Req> reqs_;
  std::vector<Msg> msgs_;
  std::vector<uint32_t> free_msgs_;
  std::vector<std::pair<uint32_t, uint32_t>> pass_msgs_;  // dispatch's scratch: (dst, message)

  double rt_sum_ = 0, rt_count_ = 0;          // remote invocations' round trips since the last placement change
  double rt_sum_all_ = 0, rt_count_all_ = 0;  // and over the run
  ClusterResult res_;
};

ClusterSim::ClusterSim(const ClusterInput& in, const ClusterOptions& opt)
    : in_(in),
      opt_(opt),
      N_(static_cast<uint32_t>(in.servers.size())),
      L_(in.model.moe_layers),
      E_(in.model.routed_experts),
      w_(build_cluster_work(in)),
      net_([&] {
        std::vector<std::string> names;
        for (const auto& s : in.servers) names.push_back(s.name);
        return names;
      }(), in.links, [&] {
        std::vector<double> nic;
        for (const auto& s : in.servers) nic.push_back(s.nic_bandwidth);
        return std::any_of(nic.begin(), nic.end(), [](double b) { return b > 0; }) ? nic : std::vector<double>{};
      }()) {
  if (N_ == 0) throw Error("cluster: no servers");
  if (!(opt.duration_s > 0)) throw UsageError("--duration must be positive");
  if (!(opt.bucket_s > 0)) throw UsageError("the time bucket must be positive");
  act_bytes_per_token_ = in.model.hidden_size * dtype_size(in.model.dtype);
  // Every request is kept until the end (its latency), so an arrival rate far beyond what a cluster can
  // serve would exhaust memory instead of finishing: refuse it up front.
  double expected = 0;
  for (const ClusterServer& s : in.servers)
    expected += s.arrival.kind == ArrivalSpec::Kind::kPoisson
                    ? opt.duration_s / s.arrival.mean_interval_s
                    : static_cast<double>(std::lower_bound(s.arrival.times_s.begin(), s.arrival.times_s.end(),
                                                           opt.duration_s) - s.arrival.times_s.begin());
  if (expected > kMaxRequests)
    throw Error("cluster: the arrivals would bring about " + std::to_string(std::llround(expected)) +
                " requests in " + format_seconds(opt.duration_s) + ", more than " +
                std::to_string(static_cast<uint64_t>(kMaxRequests)) +
                " the simulation keeps: shorten --duration or lengthen the arrival intervals");
  for (uint32_t n = 0; n < N_; ++n) {
    const ClusterServer& s = in.servers[n];
    if (s.gpus == 0) throw Error("cluster: server \"" + s.name + "\" has no GPU");
    costs_.emplace_back(s.hw);
    gpu_base_.push_back(static_cast<uint32_t>(gpus_.size()));
    gpus_.resize(gpus_.size() + s.gpus);
  }
  for (uint32_t n = 0; n < N_; ++n) {
    expert1_s_.push_back(expert_s(n, 1));
    dense1_s_.push_back(dense_s(n, 1));
  }
  route_latency_.assign(static_cast<size_t>(N_) * N_, 0);
  route_inv_bw_.assign(static_cast<size_t>(N_) * N_, 0);
  for (uint32_t a = 0; a < N_; ++a)
    for (uint32_t b = 0; b < N_; ++b)
      for (uint32_t l : net_.route(a, b)) {
        route_latency_[a * N_ + b] += net_.links()[l].params.latency;
        route_inv_bw_[a * N_ + b] += net_.hop_inverse_bandwidth(l);
      }
  const Rng base(opt.seed);
  for (uint32_t n = 0; n < N_; ++n) {
    arrival_rng_.push_back(base.split(2 * n));
    draw_rng_.push_back(base.split(2 * n + 1));
  }
  arrivals_.assign(N_, 0);
  next_timestamp_.assign(N_, 0);
  run_load_.assign(N_, std::vector<double>(static_cast<size_t>(L_) * E_, 0));
  res_.local_invocations.assign(N_, 0);
  res_.remote_invocations.assign(N_, 0);
  res_.bucket_s = opt.bucket_s;
  res_.bucket_local.assign(N_, {});
  res_.bucket_total.assign(N_, {});
  place();
}

double ClusterSim::expert_s(uint32_t server, uint32_t tokens) const {
  Op op;
  op.kind = OpKind::kExpertCompute;
  op.resource = ResourceClass::kGpu;
  op.bytes = in_.model.bytes_per_expert();
  op.flops = in_.model.expert_flops_per_token() * tokens;
  op.tokens = tokens;
  return costs_[server].duration(op);
}

double ClusterSim::dense_s(uint32_t server, uint32_t tokens) const {
  Op op;
  op.kind = OpKind::kDenseCompute;
  op.resource = ResourceClass::kGpu;
  op.bytes = in_.model.dense_bytes_per_layer();
  op.flops = 2.0 * static_cast<double>(op.bytes / dtype_size(in_.model.dtype)) * tokens;
  op.tokens = tokens;
  return costs_[server].duration(op);
}

void ClusterSim::place() {
  place_in_.layers = L_;
  place_in_.experts = E_;
  place_in_.expert_bytes.assign(L_, in_.model.bytes_per_expert());
  place_in_.seed = opt_.seed;
  double fastest = 0;
  for (const auto& s : in_.servers) fastest = std::max(fastest, s.hw.gpu_bf16_flops);
  for (const auto& s : in_.servers) {
    PlacementServer ps;
    ps.name = s.name;
    for (uint32_t g = 0; g < s.gpus; ++g) ps.gpus.push_back({s.gpu_memory, fastest > 0 ? s.hw.gpu_bf16_flops / fastest : 1});
    place_in_.servers.push_back(ps);
  }
  // The profile: each server's first sequences holding profile_tokens tokens.
  place_in_.load.assign(N_, std::vector<double>(static_cast<size_t>(L_) * E_, 0));
  for (uint32_t n = 0; n < N_; ++n) {
    uint64_t tokens = 0;
    for (uint32_t id : w_.server_plans[n]) {
      if (tokens >= opt_.profile_tokens) break;
      const SequencePlan& plan = w_.plans[id];
      tokens += plan.tokens;
      for (uint32_t p = plan.pass_begin; p < plan.pass_end; ++p)
        for (uint32_t i = w_.passes[p].begin; i < w_.passes[p].end; ++i)
          place_in_.load[n][w_.passes[p].layer * E_ + w_.pass_expert[i]] += w_.pass_tokens[i];
    }
  }
  policy_ = PlacementRegistry::instance().create(opt_.placement, "placement");
  current_ = policy_->place(place_in_);
  res_.initial_placement = current_;
}

double ClusterSim::gpu_submit(uint32_t server, uint32_t gpu, double ready, double seconds, uint8_t kind,
                              uint16_t layer) {
  const double end = gpus_[gpu_base_[server] + gpu].submit(ready, seconds);
  if (opt_.record_timeline && end - seconds >= opt_.timeline_from_s && end - seconds <= opt_.timeline_to_s)
    res_.timeline.push_back({server, gpu, end - seconds, end, kind, layer});
  return end;
}

double ClusterSim::hop(uint32_t link, double ready, uint64_t bytes, uint8_t kind, uint16_t layer) {
  const double arrive = net_.send_hop(link, ready, bytes);
  if (opt_.record_timeline) {
    const DirectedLink& l = net_.links()[link];
    const double end = l.fifo.free_at, start = end - static_cast<double>(bytes) / l.params.bandwidth;
    if (start >= opt_.timeline_from_s && start <= opt_.timeline_to_s)
      res_.timeline.push_back({N_ + link / 2, link % 2, start, end, kind, layer});
  }
  return arrive;
}

void ClusterSim::schedule_arrival(uint32_t n) {
  const ArrivalSpec& a = in_.servers[n].arrival;
  double t = 0;
  if (a.kind == ArrivalSpec::Kind::kPoisson) {
    t = engine_.now() - a.mean_interval_s * std::log(1 - arrival_rng_[n].uniform());
  } else {
    if (next_timestamp_[n] >= a.times_s.size()) return;
    t = a.times_s[next_timestamp_[n]++];
  }
  if (t < opt_.duration_s) engine_.schedule(t, this, event_arg(kArrival, n));
}

void ClusterSim::arrive(uint32_t n) {
  if (opt_.on_progress) opt_.on_progress(engine_.now());
  const std::vector<uint32_t>& pool = w_.server_plans[n];
  const uint64_t k = opt_.random_draw ? draw_rng_[n].below(pool.size()) : arrivals_[n] % pool.size();
  ++arrivals_[n];
  const auto r = static_cast<uint32_t>(reqs_.size());
  reqs_.push_back({n, pool[k], 0, 0, 0});
  res_.requests.push_back({n, engine_.now(), 0, 0, w_.plans[pool[k]].tokens_after_first});
  start_pass(r);
  schedule_arrival(n);
}

void ClusterSim::start_pass(uint32_t r) {
  const Req& q = reqs_[r];
  const ClusterPass& p = w_.passes[w_.plans[q.plan].pass_begin + q.pass];
  const double d = p.tokens == 1 ? dense1_s_[q.server] : dense_s(q.server, p.tokens);
  engine_.schedule(gpu_submit(q.server, 0, engine_.now(), d, 0, p.layer), this, event_arg(kDenseDone, r));
}

void ClusterSim::dispatch(uint32_t r) {
  Req& q = reqs_[r];
  const uint32_t n = q.server;
  const ClusterPass& p = w_.passes[w_.plans[q.plan].pass_begin + q.pass];
  const double now = engine_.now();
  const auto bucket = static_cast<size_t>(now / opt_.bucket_s);
  if (res_.bucket_total[n].size() <= bucket) {
    res_.bucket_total[n].resize(bucket + 1, 0);
    res_.bucket_local[n].resize(bucket + 1, 0);
  }
  q.local_end = now;
  pass_msgs_.clear();
  for (uint32_t i = p.begin; i < p.end; ++i) {
    const uint32_t key = p.layer * E_ + w_.pass_expert[i];
    const uint32_t tokens = w_.pass_tokens[i];
    run_load_[n][key] += tokens;
    ++res_.bucket_total[n][bucket];
    const std::vector<Replica>& reps = current_.replicas[key];
    if (current_.on_server(key, n)) {
      uint32_t best = UINT32_MAX;
      for (const Replica& rep : reps)
        if (rep.server == n && (best == UINT32_MAX || gpus_[gpu_base_[n] + rep.gpu].free_at <
                                                          gpus_[gpu_base_[n] + best].free_at))
          best = rep.gpu;
      const double d = tokens == 1 ? expert1_s_[n] : expert_s(n, tokens);
      q.local_end = std::max(q.local_end, gpu_submit(n, best, now, d, 1, p.layer));
      ++res_.local_invocations[n];
      ++res_.bucket_local[n][bucket];
      continue;
    }
    // Remote (Prism: 1_remote(n, e) = 1): the replica with the earliest expected finish on idle links.
    ++res_.remote_invocations[n];
    res_.proxy_cost += tokens;
    const uint64_t bytes = tokens * act_bytes_per_token_;
    const Replica* best = nullptr;
    double best_finish = 0;
    for (const Replica& rep : reps) {
      const size_t there = n * N_ + rep.server, back = rep.server * N_ + n;
      const double arrive = now + route_latency_[there] + static_cast<double>(bytes) * route_inv_bw_[there];
      const double start = std::max(arrive, gpus_[gpu_base_[rep.server] + rep.gpu].free_at);
      const double finish = start + (tokens == 1 ? expert1_s_[rep.server] : expert_s(rep.server, tokens)) +
                            route_latency_[back] + static_cast<double>(bytes) * route_inv_bw_[back];
      if (!best || finish < best_finish) {
        best = &rep;
        best_finish = finish;
      }
    }
    uint32_t m = UINT32_MAX;
    for (const auto& [dst, id] : pass_msgs_)
      if (dst == best->server) m = id;
    if (m == UINT32_MAX) {
      if (free_msgs_.empty()) {
        m = static_cast<uint32_t>(msgs_.size());
        msgs_.emplace_back();
      } else {
        m = free_msgs_.back();
        free_msgs_.pop_back();
      }
      Msg& msg = msgs_[m];
      msg.req = r;
      msg.src = n;
      msg.dst = best->server;
      msg.hop = 0;
      msg.back = false;
      msg.layer = p.layer;
      msg.bytes = 0;
      msg.sent = now;
      msg.work.clear();
      pass_msgs_.emplace_back(best->server, m);
    }
    msgs_[m].bytes += bytes;
    msgs_[m].work.emplace_back(best->gpu, tokens);
  }
  q.pending = static_cast<uint32_t>(pass_msgs_.size());
  for (const auto& [dst, m] : pass_msgs_) {
    const Msg& msg = msgs_[m];
    engine_.schedule(hop(net_.route(n, dst)[0], now, msg.bytes, 2, msg.layer), this, event_arg(kHop, m));
  }
  if (q.pending == 0) engine_.schedule(q.local_end, this, event_arg(kLayerEnd, r));
}

void ClusterSim::hop_done(uint32_t m) {
  Msg& msg = msgs_[m];
  const std::vector<uint32_t>& route = msg.back ? net_.route(msg.dst, msg.src) : net_.route(msg.src, msg.dst);
  if (++msg.hop < route.size()) {
    engine_.schedule(hop(route[msg.hop], engine_.now(), msg.bytes, 2, msg.layer), this, event_arg(kHop, m));
    return;
  }
  if (msg.back) return returned(m);
  double done = engine_.now();
  for (const auto& [gpu, tokens] : msg.work) {
    const double d = tokens == 1 ? expert1_s_[msg.dst] : expert_s(msg.dst, tokens);
    done = std::max(done, gpu_submit(msg.dst, gpu, engine_.now(), d, 1, msg.layer));
  }
  engine_.schedule(done, this, event_arg(kComputeDone, m));
}

void ClusterSim::compute_done(uint32_t m) {
  Msg& msg = msgs_[m];
  msg.back = true;
  msg.hop = 0;
  engine_.schedule(hop(net_.route(msg.dst, msg.src)[0], engine_.now(), msg.bytes, 2, msg.layer), this,
                   event_arg(kHop, m));
}

void ClusterSim::returned(uint32_t m) {
  const Msg& msg = msgs_[m];
  const double now = engine_.now();
  const double invocations = static_cast<double>(msg.work.size());
  rt_sum_ += (now - msg.sent) * invocations;
  rt_count_ += invocations;
  rt_sum_all_ += (now - msg.sent) * invocations;
  rt_count_all_ += invocations;
  Req& q = reqs_[msg.req];
  const uint32_t r = msg.req;
  free_msgs_.push_back(m);
  if (--q.pending > 0) return;
  if (q.local_end > now) return engine_.schedule(q.local_end, this, event_arg(kLayerEnd, r));
  layer_end(r);
}

void ClusterSim::layer_end(uint32_t r) {
  Req& q = reqs_[r];
  const SequencePlan& plan = w_.plans[q.plan];
  RequestRecord& rec = res_.requests[r];
  if (q.pass == plan.first_token_pass) rec.first_token = engine_.now();
  if (plan.pass_begin + ++q.pass < plan.pass_end) return start_pass(r);
  rec.end = engine_.now();
  res_.end_s = std::max(res_.end_s, rec.end);
}

// Prism §IV-A prices a remote invocation by the mean of the executions since the last placement change; with
// none yet, by the run's mean; with none at all, by one token's idle round trip averaged over server pairs.
double ClusterSim::remote_invocation_s() const {
  if (rt_count_ > 0) return rt_sum_ / rt_count_;
  if (rt_count_all_ > 0) return rt_sum_all_ / rt_count_all_;
  double sum = 0, pairs = 0;
  for (uint32_t a = 0; a < N_; ++a)
    for (uint32_t b = 0; b < N_; ++b) {
      if (a == b) continue;
      const double bytes = static_cast<double>(act_bytes_per_token_);
      sum += route_latency_[a * N_ + b] + bytes * route_inv_bw_[a * N_ + b] + expert1_s_[b] +
             route_latency_[b * N_ + a] + bytes * route_inv_bw_[b * N_ + a];
      ++pairs;
    }
  return pairs > 0 ? sum / pairs : 0;
}

void ClusterSim::migration_check() {
  const double now = engine_.now();
  if (now + opt_.migrate_every_s < opt_.duration_s)
    engine_.schedule(now + opt_.migrate_every_s, this, event_arg(kMigrationCheck, 0));
  ++res_.migration_checks;
  if (migrating_) return;  // the last plan is still being loaded
  double total = 0;
  for (const auto& v : run_load_) total = std::accumulate(v.begin(), v.end(), total);
  if (total == 0) return;
  place_in_.load = run_load_;
  const Placement plan = policy_->place(place_in_);
  MigrationCosts costs;
  costs.remote_invocation_s = remote_invocation_s();
  for (const auto& s : in_.servers) {
    const double io = s.hw.link_kind == "pcie" && s.hw.link_bandwidth > 0 ? s.hw.link_bandwidth
                                                                          : s.hw.gpu_memory_bandwidth;
    costs.gpu_io_bytes_per_s.emplace_back(s.gpus, io);
  }
  const MigrationDecision d = decide_migration(current_, plan, run_load_, place_in_.expert_bytes, costs);
  MigrationRecord rec;
  rec.migrated = d.migrate;
  rec.time_s = rec.done_s = now;
  rec.cost_current_s = d.cost_current_s;
  rec.cost_new_s = d.cost_new_s;
  rec.migration_s = d.migration_s;
  if (!d.migrate) {
    res_.decisions.push_back(rec);
    return;
  }
  for (const ExpertMove& mv : d.loads) {
    double ready = now;
    if (mv.has_source && mv.from.server != mv.to.server)
      for (uint32_t l : net_.route(mv.from.server, mv.to.server))
        ready = hop(l, ready, mv.bytes, 3, static_cast<uint16_t>(mv.layer));
    rec.done_s = std::max(rec.done_s, gpu_submit(mv.to.server, mv.to.gpu, ready, mv.seconds, 3,
                                                 static_cast<uint16_t>(mv.layer)));
  }
  rec.experts_loaded = static_cast<uint32_t>(d.loads.size());
  rec.experts_dropped = static_cast<uint32_t>(d.drops.size());
  rec.bytes = d.bytes_loaded();
  res_.decisions.push_back(rec);
  res_.migrations.push_back(rec);
  pending_ = plan;
  migrating_ = true;
  engine_.schedule(rec.done_s, this, event_arg(kMigrationDone, res_.migrations.size() - 1));
}

void ClusterSim::on_event(uint64_t arg) {
  const auto id = static_cast<uint32_t>(arg & kIdMask);
  switch (static_cast<Kind>(arg >> kKindShift)) {
    case kArrival: return arrive(id);
    case kDenseDone: return dispatch(id);
    case kHop: return hop_done(id);
    case kComputeDone: return compute_done(id);
    case kLayerEnd: return layer_end(id);
    case kMigrationCheck: return migration_check();
    case kMigrationDone:
      current_ = std::move(pending_);
      migrating_ = false;
      rt_sum_ = rt_count_ = 0;
      return;
  }
}

ClusterResult ClusterSim::run() {
  for (uint32_t n = 0; n < N_; ++n) schedule_arrival(n);
  if (opt_.migrate_every_s > 0 && opt_.migrate_every_s < opt_.duration_s)
    engine_.schedule(opt_.migrate_every_s, this, event_arg(kMigrationCheck, 0));
  engine_.run();
  res_.final_placement = current_;
  res_.proxy_cost_initial = proxy_cost(res_.initial_placement, run_load_);
  for (const DirectedLink& l : net_.links())
    res_.links.push_back({l.from, l.to, l.fifo.bytes, l.fifo.jobs, l.fifo.busy_s});
  for (uint32_t n = 0; n < N_ && net_.has_nic_queues(); ++n)
    res_.nics.push_back({net_.nic_bandwidth(n), net_.nic_out(n).bytes, net_.nic_in(n).bytes, net_.nic_out(n).busy_s,
                         net_.nic_in(n).busy_s});
  res_.events = engine_.fired();
  return std::move(res_);
}

}  // namespace

ClusterResult run_cluster(const ClusterInput& input, const ClusterOptions& options) {
  ClusterSim sim(input, options);
  return sim.run();
}

}  // namespace moesim::sim
