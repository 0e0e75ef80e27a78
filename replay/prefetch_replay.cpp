#include "replay/prefetch_replay.h"

#include <chrono>

#include "base/interrupt.h"
#include "core/counters.h"
#include "core/eviction.h"
#include "core/invocation_walker.h"
#include "core/prefetch.h"
#include "replay/replay_sweep.h"

namespace moesim::replay {
namespace {

class PrefetchReplay {
 public:
  PrefetchReplay(const WorkloadView& w, const CacheConfig& cfg, const std::string& cache_spec,
                 const std::string& prefetch_spec, uint64_t seed)
      : w_(w),
        cache_(cache_spec, cfg),
        policy_(make_prefetch_policy(prefetch_spec, PrefetchSetup{w.layers, w.experts, w.top_k, seed})),
        prefetched_(size_t{w.layers} * w.experts, 0),
        target_(size_t{w.layers} * w.experts, kNoInvocation),
        bytes_(cfg.expert_bytes) {}

  PrefetchCounters run() {
    const LookupView& v = w_.lookups;
    uint32_t step = 0;
    for (uint32_t inv = 0; inv < v.invocations(); ++inv) {
      if ((inv & 0xFFF) == 0) interrupt_point();  // every 4096 invocations (base/interrupt.h)
      while (inv >= w_.step_begin[step + 1]) ++step;
      evicted_.clear();
      InvocationWalker::walk_stream(
          cache_, v, inv,
          [&](uint32_t, uint32_t key, bool) {
            if (!prefetched_[key]) return;
            prefetched_[key] = 0;
            if (target_[key] == inv)
              ++c_.useful;
            else
              useless(key);
          },
          &evicted_);
      note_evictions();
      propose(inv, step, v.inv_layer[inv], v.inv_phase[inv] == 1);
    }
    for (uint32_t k = 0; k < prefetched_.size(); ++k)
      if (prefetched_[k]) useless(k);
    return c_;
  }

  const CacheCounters& counters() const { return cache_.counters(); }

 private:
  uint64_t expert_bytes(uint32_t layer) const {
    return bytes_.empty() ? 0 : bytes_[std::min<size_t>(layer, bytes_.size() - 1)];
  }
  void useless(uint32_t key) {
    ++c_.useless;
    c_.useless_bytes += expert_bytes(key / w_.experts);
  }
  void note_evictions() {
    for (uint32_t k : evicted_)
      if (prefetched_[k]) {
        prefetched_[k] = 0;
        useless(k);
      }
  }
  void propose(uint32_t inv, uint32_t step, uint32_t layer, bool decode) {
    proposals_.clear();
    policy_->propose(PrefetchContext{&w_, inv, step, layer, decode}, proposals_);
    for (const auto& pr : proposals_) {
      check_prefetch_request(pr, w_.layers, w_.experts);
      if (pr.layer == layer) continue;
      const uint32_t key = pr.layer * w_.experts + pr.expert;
      ++c_.proposed;
      if (prefetched_[key] || cache_.resident(key)) {
        ++c_.already_resident;
        continue;
      }
      const uint32_t next_use =
          pr.target_invocation != kNoInvocation ? pr.target_invocation : kNeverUsedAgain;
      evicted_.clear();
      const bool admitted = cache_.prefetch(pr.layer, key, next_use, &evicted_);
      note_evictions();
      if (!admitted) {
        ++c_.declined;
        continue;
      }
      ++c_.issued;
      c_.bytes += expert_bytes(pr.layer);
      prefetched_[key] = 1;
      target_[key] = pr.target_invocation != kNoInvocation
                         ? pr.target_invocation
                         : default_prefetch_target(w_.lookups, inv, pr.layer, w_.layers);
    }
  }

  const WorkloadView& w_;
  ExpertCache cache_;
  std::unique_ptr<PrefetchPolicy> policy_;
  std::vector<uint8_t> prefetched_;  // [keys] admitted by a prefetch and not looked up since
  std::vector<uint32_t> target_;     // [keys] the invocation a prefetch was for
  std::vector<uint64_t> bytes_;
  std::vector<PrefetchRequest> proposals_;
  std::vector<uint32_t> evicted_;
  PrefetchCounters c_;
};

PrefetchReplayResult run_one(const WorkloadView& w, const PrefetchReplayConfig& c, const CacheConfig& cfg,
                             uint64_t seed) {
  PrefetchReplayResult r;
  r.prefetch = c.prefetch;
  PrefetchReplay p(w, cfg, c.cache.policy, c.prefetch, seed);
  const auto t0 = std::chrono::steady_clock::now();
  r.counters = p.run();
  const auto t1 = std::chrono::steady_clock::now();
  r.replay = replay_result(c.cache, cfg, p.counters(), std::chrono::duration<double>(t1 - t0).count());
  return r;
}

}  // namespace

std::vector<PrefetchReplayResult> replay_prefetch_sweep(const ReplayInput& in, const WorkloadView& w,
                                                        const std::vector<PrefetchReplayConfig>& configs,
                                                        unsigned threads, uint64_t seed,
                                                        const std::function<void()>& on_done) {
  return replay_sweep_runs(
      configs, threads, on_done,
      [&](const PrefetchReplayConfig& c) {
        CacheConfig cfg = in.cache_config(c.cache);
        make_eviction_policy(c.cache.policy, cfg);
        make_prefetch_policy(c.prefetch, PrefetchSetup{w.layers, w.experts, w.top_k, seed});
        return cfg;
      },
      [&](const PrefetchReplayConfig& c, const CacheConfig& cfg) { return run_one(w, c, cfg, seed); });
}

Json to_json(const PrefetchReplayResult& r) {
  Json j = to_json(r.replay);
  j["prefetch_policy"] = r.prefetch;
  j["prefetch"] = prefetch_counters_json(r.counters, r.replay.counters.lookups, false);
  return j;
}

}  // namespace moesim::replay
