// moe-infinity: every edge server serves its requests by itself, with the whole model and its experts
// offloaded to host memory, as Prism's first baseline (Accelerating Edge Inference for Distributed MoE Models
// with Latency-Optimized Expert Placement, §II-B, Table I "MoE-Infinity"): MoE-Infinity's single-machine
// offloading, every expert in host RAM, the frequently used ones kept on the GPU, a missing one loaded RAM ->
// GPU over PCIe. No remote expert calls. With redirect=1 it is Table I's "MoE-Infinity (w/ LB)": an arriving
// request is rerouted to the least loaded server, which runs it the same way.
//
// A cluster system of the registry (serving/cluster_serving.h), on the same ClusterPlatform as prism:
//   * a pass (ClusterWork: the dense part, then each routed expert with its tokens) runs on the server
//     serving the request: the dense part on its GPU 0, then each expert on GPU key % gpus (key = layer x
//     experts + expert: the experts spread over the server's GPUs as MoE-Infinity spreads them);
//   * each GPU holds an expert cache of the server's gpu_memory bytes (core/expert_cache.h, global scope, one
//     invocation per pass). A hit computes at once (queued on its GPU); a miss is admitted, loads over that
//     GPU's host link (a kTransfer op on kLink unit g: bytes / migration_io_bytes_per_s(hw) in simulation,
//     core/cluster_platform.h) and computes when its load ends; a lookup that finds its expert's load still
//     in flight waits for that load instead of loading again. Eviction is the cache's (at the end of the
//     pass); an expert evicted while it loads or computes still finishes the passes that wait for it;
//   * cache=lfu (the default) evicts the expert the server has activated least often, its counts kept across
//     evictions (lfu:history=1): MoE-Infinity keeps the experts its activation history says are used most.
//     The registry's activation-aware eviction is MoE-Infinity's per-request rule, but it reads one request's
//     activation matrix and starts a new request at every first-layer prefill; a server here interleaves the
//     passes of many requests, so its "current request" would be whichever passed last. cache=lru for
//     comparison;
//   * redirect=1: an arriving request goes to the server with the fewest requests in flight per GPU (its own
//     on a tie, then the lowest index): requests are not batched and start as they arrive, so that server
//     starts its passes soonest. The request's token ids (4 bytes per token of its sequence) travel the route
//     there, and as many back when it ends; its latency and TTFT are reported by the server it arrived at
//     (the first token is out when the serving server has it). Prefetching is not modelled: every load is on
//     demand.
// Deterministic: same inputs and seed, bit-identical results.
#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "base/error.h"
#include "core/expert_cache.h"
#include "serving/cluster_serving.h"
#include "serving/cluster_work.h"
#include "serving/system.h"

namespace moesim::serving {
namespace {

enum Kind : uint32_t { kArrival, kHandoff, kDense, kExpert, kLoad, kReply };
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint64_t kRequestBytesPerToken = 4;  // a token id
// The cache parameter's choices, as eviction specs: lfu keeps its counts across evictions (the server's
// activation history).
const std::map<std::string, PolicySpec> kCacheEviction = {{"lfu", PolicySpec{"lfu", {{"history", "1"}}}},
                                                          {"lru", PolicySpec{"lru", {}}}};
uint32_t token_of(Kind k, uint64_t id) {
  return cluster_token(k, id);
}

struct Req {
  uint32_t origin = 0, server = 0, plan = 0, pass = 0;
  uint32_t pending = 0;  // expert ops of the pass still out
};

struct Load {  // an expert on its way host -> GPU, and the computes that wait for it
  uint32_t server = 0, gpu = 0, key = 0;
  std::vector<std::pair<uint32_t, uint32_t>> waiters;  // (request, tokens)
};

class OffloadServing final : private OpSink {
 public:
  OffloadServing(const ClusterInput& in, const ClusterOptions& opt, ClusterPlatform& platform,
                 const PolicySpec& eviction, bool redirect);
  ClusterResult run();

 private:
  void op_done(uint32_t token, const OpTiming& timing) override;
  void schedule_arrival(uint32_t n);
  void arrive(uint32_t n);
  uint32_t choose_server(uint32_t origin) const;
  void start_pass(uint32_t r);
  void dispatch(uint32_t r);
  void compute(uint32_t r, uint32_t gpu, uint32_t key, uint32_t tokens);
  void loaded(uint32_t id);
  void layer_end(uint32_t r);
  void finish(uint32_t r);

  const ClusterInput& in_;
  const ClusterOptions& opt_;
  ClusterPlatform& p_;
  const uint32_t N_, E_;
  const bool redirect_;
  const ClusterWork w_;
  ClusterArrivals arrivals_;
  std::vector<std::vector<ExpertCache>> caches_;             // [server][gpu]
  std::vector<std::vector<std::vector<uint32_t>>> loading_;  // [server][gpu][key]: its Load, or kNone
  std::vector<Load> loads_;
  std::vector<uint32_t> free_loads_;
  std::vector<uint32_t> gpu_lookups_;  // dispatch's scratch: lookups per GPU of the pass
  std::vector<uint64_t> in_flight_;    // [server] requests it serves that have not ended
  std::vector<Req> reqs_;
  ClusterResult res_;
};

OffloadServing::OffloadServing(const ClusterInput& in, const ClusterOptions& opt, ClusterPlatform& platform,
                               const PolicySpec& eviction, bool redirect)
    : in_(in),
      opt_(opt),
      p_(platform),
      N_(static_cast<uint32_t>(in.servers.size())),
      E_(in.model.routed_experts),
      redirect_(redirect),
      w_(build_cluster_work(in)),
      arrivals_(in, opt) {
  check_cluster_run(in, opt, platform);
  const uint32_t L = in.model.moe_layers;
  std::vector<uint64_t> expert_bytes;
  for (uint32_t l = 0; l < L; ++l) expert_bytes.push_back(in.model.bytes_per_expert(l));
  for (uint32_t n = 0; n < N_; ++n) {
    const ClusterServer& s = in.servers[n];
    if (p_.server(n).units(ResourceClass::kLink) < s.gpus)
      throw Error(
          "cluster: system moe-infinity loads experts over each GPU's host link, which this platform's "
          "server \"" +
          s.name + "\" does not have (the simulated cluster has them: --platform sim)");
    CacheCapacity capacity;
    capacity.unit = CacheCapacity::Unit::kBytes;
    capacity.value = s.gpu_memory;
    CacheConfig cfg;
    try {
      cfg = make_cache_config(L, E_, in.model.top_k, CacheScope::kGlobal, capacity, expert_bytes);
    } catch (const Error& e) {
      throw Error("cluster: server \"" + s.name + "\": its gpu_memory as an expert cache: " + e.what());
    }
    caches_.emplace_back();
    for (uint32_t g = 0; g < s.gpus; ++g) caches_.back().emplace_back(eviction, cfg);
    loading_.emplace_back(s.gpus, std::vector<uint32_t>(static_cast<size_t>(L) * E_, kNone));
  }
  in_flight_.assign(N_, 0);
  res_.local_invocations.assign(N_, 0);
  res_.remote_invocations.assign(N_, 0);
  res_.passes.assign(N_, 0);
  res_.remote_passes.assign(N_, 0);
  res_.local_compute_s.assign(N_, 0);
  res_.remote_round_trip_s.assign(N_, 0);
  res_.bucket_s = opt.bucket_s;
  res_.bucket_local.assign(N_, {});
  res_.bucket_total.assign(N_, {});
  res_.offload.assign(N_, {});
}

void OffloadServing::schedule_arrival(uint32_t n) {
  const double t = arrivals_.next(n);
  if (t >= 0) p_.wake_at(t, this, token_of(kArrival, n));
}

// The server with the fewest requests in flight per GPU; the origin on a tie, then the lowest index.
uint32_t OffloadServing::choose_server(uint32_t origin) const {
  if (!redirect_) return origin;
  uint32_t best = origin;
  for (uint32_t m = 0; m < N_; ++m)
    if (in_flight_[m] * in_.servers[best].gpus < in_flight_[best] * in_.servers[m].gpus) best = m;
  return best;
}

void OffloadServing::arrive(uint32_t n) {
  if (opt_.on_progress) opt_.on_progress(p_.now());
  const uint32_t plan = arrivals_.draw(n, w_);
  const uint32_t s = choose_server(n);
  const auto r = static_cast<uint32_t>(reqs_.size());
  reqs_.push_back({n, s, plan, 0, 0});
  res_.requests.push_back({n, p_.now(), 0, 0, w_.plans[plan].tokens_after_first});
  ++in_flight_[s];
  ++res_.offload[s].served;
  if (s == n) {
    start_pass(r);
  } else {
    ++res_.offload[n].redirected;
    Op request;
    request.kind = OpKind::kTransfer;
    request.resource = ResourceClass::kLink;
    request.bytes = w_.plans[plan].tokens * kRequestBytesPerToken;
    p_.send(n, s, request, this, token_of(kHandoff, r));
  }
  schedule_arrival(n);
}

void OffloadServing::start_pass(uint32_t r) {
  const Req& q = reqs_[r];
  const ClusterPass& pass = w_.passes[w_.plans[q.plan].pass_begin + q.pass];
  p_.server(q.server).submit_on(0,
                                cluster_compute_op(in_.model, OpKind::kDenseCompute, pass.layer, pass.tokens),
                                this, token_of(kDense, r));
}

void OffloadServing::compute(uint32_t r, uint32_t gpu, uint32_t key, uint32_t tokens) {
  const auto layer = static_cast<uint16_t>(key / E_), expert = static_cast<uint16_t>(key % E_);
  p_.server(reqs_[r].server)
      .submit_on(gpu, cluster_compute_op(in_.model, OpKind::kExpertCompute, layer, tokens, expert), this,
                 token_of(kExpert, r));
}

void OffloadServing::dispatch(uint32_t r) {
  Req& q = reqs_[r];
  const uint32_t s = q.server, gpus = in_.servers[s].gpus;
  const SequencePlan& plan = w_.plans[q.plan];
  const ClusterPass& pass = w_.passes[plan.pass_begin + q.pass];
  const auto bucket = static_cast<size_t>(p_.now() / opt_.bucket_s);
  std::vector<uint64_t>&total = res_.bucket_total[q.origin], &local = res_.bucket_local[q.origin];
  if (total.size() <= bucket) {
    total.resize(bucket + 1, 0);
    local.resize(bucket + 1, 0);
  }
  ClusterResult::Offload& off = res_.offload[s];
  gpu_lookups_.assign(gpus, 0);
  for (uint32_t g = 0; g < gpus; ++g)
    caches_[s][g].begin_invocation(pass.layer, q.pass > plan.first_token_pass);
  q.pending = pass.end - pass.begin;
  for (uint32_t i = pass.begin; i < pass.end; ++i) {
    const uint32_t key = pass.layer * E_ + w_.pass_expert[i], g = key % gpus, tokens = w_.pass_tokens[i];
    const bool resident = caches_[s][g].lookup(key, kNeverUsedAgain);
    ++gpu_lookups_[g];
    ++off.lookups;
    uint32_t& id = loading_[s][g][key];
    if (resident && id == kNone) {
      ++off.hits;
      compute(r, g, key, tokens);
      continue;
    }
    if (id != kNone) {  // its load is in flight (the expert may have been evicted since): wait for it
      ++off.hits;
      loads_[id].waiters.emplace_back(r, tokens);
      continue;
    }
    if (free_loads_.empty()) {
      id = static_cast<uint32_t>(loads_.size());
      loads_.emplace_back();
    } else {
      id = free_loads_.back();
      free_loads_.pop_back();
    }
    loads_[id].server = s;
    loads_[id].gpu = g;
    loads_[id].key = key;
    loads_[id].waiters.assign(1, {r, tokens});
    Op load;
    load.kind = OpKind::kTransfer;
    load.resource = ResourceClass::kLink;
    load.layer = pass.layer;
    load.expert = w_.pass_expert[i];
    load.bytes = in_.model.bytes_per_expert(pass.layer);
    ++off.loads;
    off.load_bytes += load.bytes;
    p_.server(s).submit_on(g, load, this, token_of(kLoad, id));
  }
  for (uint32_t g = 0; g < gpus; ++g) caches_[s][g].end_invocation(gpu_lookups_[g]);
  res_.local_invocations[q.origin] += q.pending;
  total[bucket] += q.pending;
  local[bucket] += q.pending;
  ++res_.passes[q.origin];
  if (q.pending == 0) {  // a pass without experts ends with its dense part
    q.pending = 1;
    p_.wake_at(p_.now(), this, token_of(kExpert, r));
  }
}

void OffloadServing::loaded(uint32_t id) {
  Load& ld = loads_[id];
  loading_[ld.server][ld.gpu][ld.key] = kNone;
  for (const auto& [r, tokens] : ld.waiters) compute(r, ld.gpu, ld.key, tokens);
  ld.waiters.clear();
  free_loads_.push_back(id);
}

void OffloadServing::layer_end(uint32_t r) {
  Req& q = reqs_[r];
  const SequencePlan& plan = w_.plans[q.plan];
  RequestRecord& rec = res_.requests[r];
  if (q.pass == plan.first_token_pass) rec.first_token = p_.now();
  if (plan.pass_begin + ++q.pass < plan.pass_end) return start_pass(r);
  --in_flight_[q.server];
  if (q.server == q.origin) return finish(r);
  Op reply;
  reply.kind = OpKind::kTransfer;
  reply.resource = ResourceClass::kLink;
  reply.bytes = plan.tokens * kRequestBytesPerToken;
  p_.send(q.server, q.origin, reply, this, token_of(kReply, r));
}

void OffloadServing::finish(uint32_t r) {
  RequestRecord& rec = res_.requests[r];
  rec.end = p_.now();
  res_.end_s = std::max(res_.end_s, rec.end);
}

void OffloadServing::op_done(uint32_t token, const OpTiming& timing) {
  const uint32_t id = cluster_token_id(token);
  switch (static_cast<Kind>(cluster_token_kind(token))) {
    case kArrival:
      return arrive(id);
    case kHandoff:
      return start_pass(id);
    case kDense:
      res_.local_compute_s[reqs_[id].origin] += timing.end - timing.start;
      return dispatch(id);
    case kExpert:
      res_.local_compute_s[reqs_[id].origin] += timing.end - timing.start;
      if (--reqs_[id].pending == 0) layer_end(id);
      return;
    case kLoad:
      return loaded(id);
    case kReply:
      return finish(id);
  }
}

ClusterResult OffloadServing::run() {
  for (uint32_t n = 0; n < N_; ++n) schedule_arrival(n);
  p_.run();
  return std::move(res_);
}

class MoeInfinity final : public System, public ClusterSystem {
 public:
  explicit MoeInfinity(const Params& params)
      : eviction_(kCacheEviction.at(params.get("cache"))), redirect_(params.get_uint("redirect") == 1) {}
  std::unique_ptr<Residency> build(const SystemBuildContext&, const PolicySpec&, PipelineOptions&,
                                   RunResult&) const override {
    throw UsageError(
        "system moe-infinity serves a cluster of servers: run it with `moesim cluster SERVERS.json`");
  }
  const ClusterSystem* cluster() const override { return this; }
  ClusterResult serve(const ClusterInput& in, const ClusterOptions& opt,
                      ClusterPlatform& platform) const override {
    OffloadServing serving(in, opt, platform, eviction_, redirect_);
    return serving.run();
  }

 private:
  PolicySpec eviction_;
  bool redirect_;
};

}  // namespace

MOESIM_REGISTER(
    SystemRegistry, "moe-infinity",
    "each edge server runs the whole model alone with its experts offloaded to host memory (MoE-Infinity, "
    "Prism's Table I baseline, `moesim cluster`): a GPU expert cache, misses loaded over PCIe, no remote "
    "calls; redirect=1 sends each request to the least loaded server",
    {{"cache",
      "lfu",
      "eviction of each GPU's expert cache: lfu (counts over the server's whole history) or lru",
      ParamType::kChoice,
      {},
      {"lfu", "lru"}},
     {"redirect", "0",
      "1: each arriving request runs on the server with the fewest requests in flight per GPU",
      ParamType::kWhole, ParamRange::closed(0, 1)}},
    [](const Params& p) -> std::unique_ptr<System> { return std::make_unique<MoeInfinity>(p); },
    PolicyNeeds{}, SystemTraits{.cluster = true});

}  // namespace moesim::serving
