#include "replay/routing_replay.h"

#include <algorithm>
#include <chrono>

#include "base/error.h"
#include "base/interrupt.h"
#include "core/counters.h"
#include "core/expert_cache.h"
#include "core/invocation_walker.h"
#include "core/routing.h"
#include "replay/replay_sweep.h"

namespace moesim::replay {

RoutingReplayInput::RoutingReplayInput(const ReplayInput& base, const traces::Trace& trace)
    : base_(&base),
      tokens_(traces::build_token_routing(trace, base.stream())),
      view_(traces::token_routing_view(tokens_, trace)),
      setup_(traces::routing_setup(trace.info(), trace)) {
  const auto& s = base.stream();
  clock_.assign(s.invocations(), 0);
  uint64_t clock = 0;
  for (size_t st = 0; st < s.steps(); ++st) {
    for (uint32_t i = s.step_begin[st]; i < s.step_begin[st + 1]; ++i) clock_[i] = clock;
    clock += s.step_tokens[st];
  }
}

namespace {

double pct(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : 100.0 * static_cast<double>(a) / static_cast<double>(b);
}

// The routing an oracle is told about: each invocation's keys, and per key the invocations using it.
struct Reference {
  std::vector<uint32_t> inv_begin, keys;  // [invocations + 1], [lookups]
  std::vector<uint32_t> by_key_begin, by_key;
  std::vector<uint64_t> frequency;

  void index(uint32_t num_keys) {
    by_key_begin.assign(num_keys + 1, 0);
    for (uint32_t k : keys) ++by_key_begin[k + 1];
    for (uint32_t k = 0; k < num_keys; ++k) by_key_begin[k + 1] += by_key_begin[k];
    by_key.assign(keys.size(), 0);
    std::vector<uint32_t> fill(by_key_begin.begin(), by_key_begin.end() - 1);
    for (size_t i = 0; i + 1 < inv_begin.size(); ++i)
      for (uint32_t j = inv_begin[i]; j < inv_begin[i + 1]; ++j)
        by_key[fill[keys[j]]++] = static_cast<uint32_t>(i);
    frequency.assign(num_keys, 0);
    for (uint32_t k = 0; k < num_keys; ++k) frequency[k] = by_key_begin[k + 1] - by_key_begin[k];
  }
  // The first invocation after `inv` using `key`, or kNeverUsedAgain.
  uint32_t next_after(uint32_t key, uint32_t inv) const {
    const auto b = by_key.begin() + by_key_begin[key], e = by_key.begin() + by_key_begin[key + 1];
    const auto it = std::upper_bound(b, e, inv);
    return it == e ? kNeverUsedAgain : *it;
  }
  bool operator==(const Reference& o) const { return inv_begin == o.inv_begin && keys == o.keys; }
};

class CacheResidency final : public ResidencyView {
 public:
  CacheResidency(const BasicCache<EvictionPolicy>& c, uint32_t experts) : c_(c), experts_(experts) {}
  ExpertState state(uint32_t layer, uint32_t expert) const override {
    return c_.resident(layer * experts_ + expert) ? ExpertState::kFull : ExpertState::kMissed;
  }

 private:
  const BasicCache<EvictionPolicy>& c_;
  uint32_t experts_;
};

// One pass. `ref` (null: the stream itself) is the routing the oracle sees; `rewritten`, when given,
// receives the routing this pass produced.
RoutingReplayResult run_pass(const RoutingReplayInput& in, const RoutingReplayConfig& rc,
                             const Reference* ref, Reference* rewritten) {
  const ReplayInput& base = in.base();
  const traces::LookupStream& s = base.stream();
  CacheConfig cc = base.cache_config(ReplayConfig{rc.eviction, rc.scope, rc.capacity});
  if (ref) cc.key_frequency = ref->frequency;
  auto eviction = make_eviction_policy(rc.eviction, cc);
  BasicCache<EvictionPolicy> cache(cc, *eviction);
  auto routing = make_routing_policy(rc.routing, in.setup());
  const bool identity = routing->identity();
  const CacheResidency residency(cache, s.experts);
  const TokenRoutingView& tv = in.tokens();
  const uint32_t K = tv.top_k;

  RoutingReplayResult r;
  LifetimeTracker life(size_t{s.layers} * s.experts);
  std::vector<uint16_t> out;
  std::vector<uint32_t> pos(s.experts, kNoSlot);
  InvocationWalker walker(s.experts);
  std::vector<ExpertDemand> demands;
  std::vector<uint32_t> evicted;
  if (rewritten) {
    rewritten->inv_begin.assign(1, 0);
    rewritten->keys.clear();
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < s.invocations(); ++i) {
    if ((i & 0xFFF) == 0) interrupt_point();  // every 4096 invocations (base/interrupt.h)
    const uint32_t layer = s.inv_layer[i];
    const bool decode = s.inv_phase[i] == 1;
    const uint64_t clock = in.clock(i);
    const uint32_t base_key = layer * s.experts;
    demands.clear();
    if (identity) {
      for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j)
        demands.push_back(ExpertDemand{static_cast<uint16_t>(s.key[j] - base_key), s.tokens[j],
                                       ref ? ref->next_after(s.key[j], i) : s.next_use[j]});
    } else {
      const InvocationTokens tok(tv, i);
      out.resize(size_t{tok.size()} * K);
      for (uint32_t t = 0; t < tok.size(); ++t)
        std::copy_n(tok.ids(t).begin(), K, out.begin() + size_t{t} * K);
      const RoutingContext ctx{layer, decode, K, &residency, &tok};
      routing->route(ctx, out);
      r.deviation.add(tok, out);
      derive_demands(out, K, s.experts, pos, demands);
      for (auto& d : demands) {
        const uint32_t key = base_key + d.expert;
        if (ref) {
          d.next_use = ref->next_after(key, i);
        } else {  // the router's routing: the stream's next use for the experts it asked for
          d.next_use = kNeverUsedAgain;
          for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j)
            if (s.key[j] == key) d.next_use = s.next_use[j];
        }
      }
    }
    // The pipeline's walk (core/invocation_walker.h), so replay and run agree; for identity routing the
    // demands are the stream's own lookups, so the refreshes are exactly the fast path's.
    evicted.clear();
    walker.walk_demands(
        cache, base.view(), i, demands,
        [&](const ExpertDemand&, uint32_t key, bool hit) {
          if (!hit) life.admit(key, clock);
          if (rewritten) rewritten->keys.push_back(key);
        },
        &evicted);
    for (uint32_t v : evicted) life.evict(v, clock);
    if (rewritten) rewritten->inv_begin.push_back(static_cast<uint32_t>(rewritten->keys.size()));
  }
  const auto t1 = std::chrono::steady_clock::now();
  r.replay = replay_result(ReplayConfig{rc.eviction, rc.scope, rc.capacity}, cc, cache.counters(),
                           std::chrono::duration<double>(t1 - t0).count());
  const ReplayResult& rr = r.replay;
  r.routing = routing_canonical_name(rc.routing);
  r.router_lookups = s.lookups();
  r.router_decode_lookups = s.decode_lookups();
  r.miss_pct = pct(rr.counters.lookups - rr.counters.hits, r.router_lookups);
  r.decode_miss_pct = pct(rr.counters.decode_lookups - rr.counters.decode_hits, r.router_decode_lookups);
  r.lifetime = life.finish();
  r.routing_counters = routing->counters();
  return r;
}

}  // namespace

RoutingReplayResult replay_routing(const RoutingReplayInput& in, const RoutingReplayConfig& rc) {
  const ReplayInput& base = in.base();
  const PolicyNeeds& needs = oracle_needs(rc.eviction);
  const bool oracle = needs.next_use || needs.frequency;
  const bool identity = make_routing_policy(rc.routing, in.setup())->identity();
  if (!oracle || identity) {
    RoutingReplayResult r = run_pass(in, rc, nullptr, nullptr);
    r.oracle = oracle;
    return r;
  }
  if (rc.oracle_passes == 0) throw Error("replay: --oracle-passes must be at least 1");
  const uint32_t keys = base.stream().layers * base.stream().experts;
  Reference ref;
  ref.inv_begin.assign(base.stream().inv_begin.begin(), base.stream().inv_begin.end());
  ref.keys.assign(base.stream().key.begin(), base.stream().key.end());
  ref.index(keys);
  RoutingReplayResult r;
  double seconds = 0;
  for (uint32_t pass = 1;; ++pass) {
    Reference produced;
    r = run_pass(in, rc, &ref, &produced);
    seconds += r.replay.seconds;
    r.passes = pass;
    r.converged = produced == ref;
    if (r.converged || pass == rc.oracle_passes) break;
    ref = std::move(produced);
    ref.index(keys);
  }
  r.oracle = true;
  r.replay.seconds = seconds;
  r.replay.lookups_per_s =
      seconds > 0 ? static_cast<double>(r.replay.counters.lookups) * r.passes / seconds : 0;
  return r;
}

std::vector<RoutingReplayResult> replay_routing_sweep(const RoutingReplayInput& in,
                                                      const std::vector<RoutingReplayConfig>& configs,
                                                      unsigned threads,
                                                      const std::function<void()>& on_done) {
  return replay_sweep_runs(
      configs, threads, on_done,
      [&](const RoutingReplayConfig& rc) {
        const CacheConfig cc = in.base().cache_config(ReplayConfig{rc.eviction, rc.scope, rc.capacity});
        make_eviction_policy(rc.eviction, cc);
        make_routing_policy(rc.routing, in.setup());
        if (rc.oracle_passes == 0) throw Error("replay: --oracle-passes must be at least 1");
        return true;  // validated; each run builds its own policies
      },
      [&](const RoutingReplayConfig& rc, bool) { return replay_routing(in, rc); });
}

Json to_json(const RoutingReplayResult& r) {
  Json j = to_json(r.replay);
  j["routing"] = r.routing;
  j["router_lookups"] = r.router_lookups;
  j["router_decode_lookups"] = r.router_decode_lookups;
  j["miss_rate_vs_router"] = r.miss_pct / 100.0;
  j["decode_miss_rate_vs_router"] = r.decode_miss_pct / 100.0;
  j["cache_lifetime"] = r.lifetime.to_json();
  j["routing_deviation"] = r.deviation.to_json();
  j["routing_policy_counters"] = r.routing_counters;
  j["oracle"] = r.oracle;
  j["oracle_passes"] = r.passes;
  j["oracle_converged"] = r.converged;
  return j;
}

}  // namespace moesim::replay
