// prism: Prism's edge-cluster serving (Accelerating Edge Inference for Distributed MoE Models with
// Latency-Optimized Expert Placement, §III and §IV-C) as a cluster system of the registry: the request loop,
// the replica choice and migration (Eq. 3-4) of serving/cluster_serving.h, written against ClusterPlatform
// (core/cluster_platform.h) so that the simulated cluster and the emulated one run the same decisions. The
// placement is a PlacementRegistry policy (ClusterOptions::placement); every op it submits carries its layer.
//
// Work is tracked through the platform's completions: a token's top bits say what ended (an arrival's
// wake-up, a dense op, a local expert, a remote invocation, a migration check, a move's hop or load) and the
// rest which request, invocation or move.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "base/error.h"
#include "base/units.h"
#include "serving/cluster_serving.h"
#include "serving/cluster_work.h"
#include "serving/system.h"

namespace moesim::serving {
namespace {

enum Kind : uint32_t { kArrival, kDense, kLocal, kRemote, kCheck, kMoveBytes, kMoveLoad };
uint32_t token_of(Kind k, uint64_t id) {
  return cluster_token(k, id);
}

struct Req {
  uint32_t server = 0, plan = 0, pass = 0;
  uint32_t pending = 0;  // ops and messages of the pass still out
};

struct Msg {  // a remote invocation: the experts of one pass sent to one server
  uint32_t req = 0;
  uint64_t bytes = 0;
  double sent = 0;
  std::vector<RemoteWork> work;
};

class PrismServing final : private OpSink {
 public:
  PrismServing(const ClusterInput& in, const ClusterOptions& opt, ClusterPlatform& platform);
  ClusterResult run();

 private:
  void op_done(uint32_t token, const OpTiming& timing) override;
  void place();
  Op compute_op(OpKind kind, uint16_t layer, uint32_t tokens, uint16_t expert = kNoLabel) const;
  double expert_s(uint32_t server, uint32_t tokens) const;
  void schedule_arrival(uint32_t server);
  void arrive(uint32_t server);
  void start_pass(uint32_t r);
  void dispatch(uint32_t r);
  void returned(uint32_t m);
  void part_done(uint32_t r);
  void layer_end(uint32_t r);
  void migration_check();
  Op move_op(uint32_t i, ResourceClass r) const;  // a move's expert bytes, on the link or its GPU
  void move(uint32_t i);
  void load(uint32_t i);
  double remote_invocation_s() const;

  const ClusterInput& in_;
  const ClusterOptions& opt_;
  ClusterPlatform& p_;
  const uint32_t N_, L_, E_;
  const ClusterWork w_;  // the servers' sequences as passes
  uint64_t act_bytes_per_token_ = 0;

  PlacementInput place_in_;
  std::unique_ptr<PlacementPolicy> policy_;
  Placement current_, pending_;
  bool migrating_ = false;
  std::vector<std::vector<double>> run_load_;  // [server][key]: activations (tokens) so far
  std::vector<ExpertMove> moves_;              // of the migration under way
  uint32_t moves_left_ = 0;

  ClusterArrivals arrivals_;
  std::vector<Req> reqs_;
  std::vector<Msg> msgs_;
  std::vector<uint32_t> free_msgs_;
  std::vector<std::pair<uint32_t, uint32_t>> pass_msgs_;  // dispatch's scratch: (dst, message)

  double rt_sum_ = 0, rt_count_ = 0;  // remote invocations' round trips since the last placement change
  double rt_sum_all_ = 0, rt_count_all_ = 0;  // and over the run
  ClusterResult res_;
};

PrismServing::PrismServing(const ClusterInput& in, const ClusterOptions& opt, ClusterPlatform& platform)
    : in_(in),
      opt_(opt),
      p_(platform),
      N_(static_cast<uint32_t>(in.servers.size())),
      L_(in.model.moe_layers),
      E_(in.model.routed_experts),
      w_(build_cluster_work(in)),
      arrivals_(in, opt) {
  check_cluster_run(in, opt, platform);
  act_bytes_per_token_ =
      in.model.hidden_size * (opt.activation_bytes > 0 ? opt.activation_bytes : dtype_size(in.model.dtype));
  run_load_.assign(N_, std::vector<double>(static_cast<size_t>(L_) * E_, 0));
  res_.local_invocations.assign(N_, 0);
  res_.remote_invocations.assign(N_, 0);
  res_.passes.assign(N_, 0);
  res_.remote_passes.assign(N_, 0);
  res_.local_compute_s.assign(N_, 0);
  res_.remote_round_trip_s.assign(N_, 0);
  res_.bucket_s = opt.bucket_s;
  res_.bucket_local.assign(N_, {});
  res_.bucket_total.assign(N_, {});
  place();
}

Op PrismServing::compute_op(OpKind kind, uint16_t layer, uint32_t tokens, uint16_t expert) const {
  return cluster_compute_op(in_.model, kind, layer, tokens, expert);
}

double PrismServing::expert_s(uint32_t server, uint32_t tokens) const {
  return p_.server(server).estimate(compute_op(OpKind::kExpertCompute, 0, tokens));
}

void PrismServing::place() {
  place_in_.layers = L_;
  place_in_.experts = E_;
  place_in_.expert_bytes.clear();
  for (uint32_t l = 0; l < L_; ++l) place_in_.expert_bytes.push_back(in_.model.bytes_per_expert(l));
  place_in_.seed = opt_.seed;
  double fastest = 0;
  for (const auto& s : in_.servers) fastest = std::max(fastest, s.hw.gpu_bf16_flops);
  for (const auto& s : in_.servers) {
    PlacementServer ps;
    ps.name = s.name;
    for (uint32_t g = 0; g < s.gpus; ++g)
      ps.gpus.push_back({s.gpu_memory, fastest > 0 ? s.hw.gpu_bf16_flops / fastest : 1});
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

void PrismServing::schedule_arrival(uint32_t n) {
  const double t = arrivals_.next(n);
  if (t >= 0) p_.wake_at(t, this, token_of(kArrival, n));
}

void PrismServing::arrive(uint32_t n) {
  if (opt_.on_progress) opt_.on_progress(p_.now());
  const uint32_t plan = arrivals_.draw(n, w_);
  const auto r = static_cast<uint32_t>(reqs_.size());
  reqs_.push_back({n, plan, 0, 0});
  res_.requests.push_back({n, p_.now(), 0, 0, w_.plans[plan].tokens_after_first});
  start_pass(r);
  schedule_arrival(n);
}

void PrismServing::start_pass(uint32_t r) {
  const Req& q = reqs_[r];
  const ClusterPass& pass = w_.passes[w_.plans[q.plan].pass_begin + q.pass];
  p_.server(q.server).submit_on(0, compute_op(OpKind::kDenseCompute, pass.layer, pass.tokens), this,
                                token_of(kDense, r));
}

void PrismServing::dispatch(uint32_t r) {
  Req& q = reqs_[r];
  const uint32_t n = q.server;
  const ClusterPass& pass = w_.passes[w_.plans[q.plan].pass_begin + q.pass];
  const double now = p_.now();
  const auto bucket = static_cast<size_t>(now / opt_.bucket_s);
  if (res_.bucket_total[n].size() <= bucket) {
    res_.bucket_total[n].resize(bucket + 1, 0);
    res_.bucket_local[n].resize(bucket + 1, 0);
  }
  ServerPlatform& here = p_.server(n);
  q.pending = 0;
  pass_msgs_.clear();
  for (uint32_t i = pass.begin; i < pass.end; ++i) {
    const uint32_t key = pass.layer * E_ + w_.pass_expert[i];
    const uint32_t tokens = w_.pass_tokens[i];
    run_load_[n][key] += tokens;
    ++res_.bucket_total[n][bucket];
    const std::vector<Replica>& reps = current_.replicas[key];
    if (current_.on_server(key, n)) {
      uint32_t best = UINT32_MAX;
      for (const Replica& rep : reps)
        if (rep.server == n && (best == UINT32_MAX || here.unit_free_at(ResourceClass::kGpu, rep.gpu) <
                                                          here.unit_free_at(ResourceClass::kGpu, best)))
          best = rep.gpu;
      here.submit_on(best, compute_op(OpKind::kExpertCompute, pass.layer, tokens, w_.pass_expert[i]), this,
                     token_of(kLocal, r));
      ++q.pending;
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
      const double arrive = now + p_.route_latency(n, rep.server) +
                            static_cast<double>(bytes) * p_.route_inverse_bandwidth(n, rep.server);
      const double start = std::max(arrive, p_.server(rep.server).unit_free_at(ResourceClass::kGpu, rep.gpu));
      const double finish = start + expert_s(rep.server, tokens) + p_.route_latency(rep.server, n) +
                            static_cast<double>(bytes) * p_.route_inverse_bandwidth(rep.server, n);
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
      msg.bytes = 0;
      msg.sent = now;
      msg.work.clear();
      pass_msgs_.emplace_back(best->server, m);
    }
    msgs_[m].bytes += bytes;
    msgs_[m].work.push_back(
        {best->gpu, compute_op(OpKind::kExpertCompute, pass.layer, tokens, w_.pass_expert[i])});
  }
  ++res_.passes[n];
  res_.remote_passes[n] += !pass_msgs_.empty();
  for (const auto& [dst, m] : pass_msgs_) {
    p_.invoke(n, dst, pass.layer, msgs_[m].bytes, msgs_[m].work, this, token_of(kRemote, m));
    ++q.pending;
  }
  if (q.pending == 0) {  // a pass without experts ends with its dense part
    q.pending = 1;
    p_.wake_at(now, this, token_of(kLocal, r));
  }
}

void PrismServing::returned(uint32_t m) {
  const Msg& msg = msgs_[m];
  const double round_trip = p_.now() - msg.sent;
  res_.remote_round_trip_s[reqs_[msg.req].server] += round_trip;
  const double invocations = static_cast<double>(msg.work.size());
  rt_sum_ += round_trip * invocations;
  rt_count_ += invocations;
  rt_sum_all_ += round_trip * invocations;
  rt_count_all_ += invocations;
  const uint32_t r = msg.req;
  free_msgs_.push_back(m);
  part_done(r);
}

void PrismServing::part_done(uint32_t r) {
  if (--reqs_[r].pending == 0) layer_end(r);
}

void PrismServing::layer_end(uint32_t r) {
  Req& q = reqs_[r];
  const SequencePlan& plan = w_.plans[q.plan];
  RequestRecord& rec = res_.requests[r];
  if (q.pass == plan.first_token_pass) rec.first_token = p_.now();
  if (plan.pass_begin + ++q.pass < plan.pass_end) return start_pass(r);
  rec.end = p_.now();
  res_.end_s = std::max(res_.end_s, rec.end);
}

// Prism §IV-A prices a remote invocation by the mean of the executions since the last placement change; with
// none yet, by the run's mean; with none at all, by one token's idle round trip averaged over server pairs.
double PrismServing::remote_invocation_s() const {
  if (rt_count_ > 0) return rt_sum_ / rt_count_;
  if (rt_count_all_ > 0) return rt_sum_all_ / rt_count_all_;
  double sum = 0, pairs = 0;
  const auto bytes = static_cast<double>(act_bytes_per_token_);
  for (uint32_t a = 0; a < N_; ++a)
    for (uint32_t b = 0; b < N_; ++b) {
      if (a == b) continue;
      sum += p_.route_latency(a, b) + bytes * p_.route_inverse_bandwidth(a, b) + expert_s(b, 1) +
             p_.route_latency(b, a) + bytes * p_.route_inverse_bandwidth(b, a);
      ++pairs;
    }
  return pairs > 0 ? sum / pairs : 0;
}

void PrismServing::migration_check() {
  const double now = p_.now();
  if (now + opt_.migrate_every_s < opt_.duration_s)
    p_.wake_at(now + opt_.migrate_every_s, this, token_of(kCheck, 0));
  ++res_.migration_checks;
  if (migrating_) return;  // the last plan is still being loaded
  double total = 0;
  for (const auto& v : run_load_) total = std::accumulate(v.begin(), v.end(), total);
  if (total == 0) return;
  place_in_.load = run_load_;
  const Placement plan = policy_->place(place_in_);
  MigrationCosts costs;
  costs.remote_invocation_s = remote_invocation_s();
  for (const auto& s : in_.servers)
    costs.gpu_io_bytes_per_s.emplace_back(s.gpus, migration_io_bytes_per_s(s.hw));
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
  rec.experts_loaded = static_cast<uint32_t>(d.loads.size());
  rec.experts_dropped = static_cast<uint32_t>(d.drops.size());
  rec.bytes = d.bytes_loaded();
  res_.decisions.push_back(rec);
  res_.migrations.push_back(rec);
  pending_ = plan;
  migrating_ = true;
  moves_ = d.loads;
  moves_left_ = static_cast<uint32_t>(moves_.size());
  if (moves_.empty()) return p_.wake_at(now, this, token_of(kMoveLoad, 0));
  for (uint32_t i = 0; i < moves_.size(); ++i) move(i);
}

// A move's bytes go over the route from its source (when it has one on another server), then load into the
// target GPU; the new placement serves once the last load has ended.
Op PrismServing::move_op(uint32_t i, ResourceClass r) const {
  const ExpertMove& mv = moves_[i];
  Op op;
  op.kind = OpKind::kTransfer;
  op.resource = r;
  op.layer = static_cast<uint16_t>(mv.layer);
  op.expert = static_cast<uint16_t>(mv.expert);
  op.bytes = mv.bytes;
  return op;
}

void PrismServing::move(uint32_t i) {
  const ExpertMove& mv = moves_[i];
  if (!mv.has_source || mv.from.server == mv.to.server) return load(i);
  p_.send(mv.from.server, mv.to.server, move_op(i, ResourceClass::kLink), this, token_of(kMoveBytes, i));
}

void PrismServing::load(uint32_t i) {
  const ExpertMove& mv = moves_[i];
  p_.server(mv.to.server).submit_on(mv.to.gpu, move_op(i, ResourceClass::kGpu), this, token_of(kMoveLoad, i));
}

void PrismServing::op_done(uint32_t token, const OpTiming& timing) {
  const uint32_t id = cluster_token_id(token);
  switch (static_cast<Kind>(cluster_token_kind(token))) {
    case kArrival:
      return arrive(id);
    case kDense:
      res_.local_compute_s[reqs_[id].server] += timing.end - timing.start;
      return dispatch(id);
    case kLocal:
      res_.local_compute_s[reqs_[id].server] += timing.end - timing.start;
      return part_done(id);
    case kRemote:
      return returned(id);
    case kCheck:
      return migration_check();
    case kMoveBytes:
      return load(id);  // its bytes arrived
    case kMoveLoad:     // a load ended (or the migration had none)
      if (moves_left_ > 0 && --moves_left_ > 0) return;
      res_.migrations.back().done_s = res_.decisions.back().done_s = p_.now();
      current_ = std::move(pending_);
      migrating_ = false;
      rt_sum_ = rt_count_ = 0;
      return;
  }
}

ClusterResult PrismServing::run() {
  for (uint32_t n = 0; n < N_; ++n) schedule_arrival(n);
  if (opt_.migrate_every_s > 0 && opt_.migrate_every_s < opt_.duration_s)
    p_.wake_at(opt_.migrate_every_s, this, token_of(kCheck, 0));
  p_.run();
  res_.final_placement = current_;
  res_.proxy_cost_initial = proxy_cost(res_.initial_placement, run_load_);
  return std::move(res_);
}

class Prism final : public System, public ClusterSystem {
 public:
  std::unique_ptr<Residency> build(const SystemBuildContext&, const PolicySpec&, PipelineOptions&,
                                   RunResult&) const override {
    throw UsageError("system prism serves a cluster of servers: run it with `moesim cluster SERVERS.json`");
  }
  const ClusterSystem* cluster() const override { return this; }
  ClusterResult serve(const ClusterInput& in, const ClusterOptions& opt,
                      ClusterPlatform& platform) const override {
    PrismServing serving(in, opt, platform);
    return serving.run();
  }
};

}  // namespace

MOESIM_REGISTER(
    SystemRegistry, "prism",
    "Prism's edge cluster (`moesim cluster`): each server's requests computed layer by layer, experts "
    "placed elsewhere invoked remotely on the replica that finishes first, placements "
    "(--placement) re-planned and migrated when Eq. 4 holds",
    {}, [](const Params&) -> std::unique_ptr<System> { return std::make_unique<Prism>(); }, PolicyNeeds{},
    SystemTraits{.cluster = true, .places_experts = true});

}  // namespace moesim::serving
