#include "replay/cache_replay.h"

#include <algorithm>
#include <chrono>

#include "base/error.h"
#include "core/counters.h"
#include "replay/replay_sweep.h"

namespace moesim::replay {

ReplayInput::ReplayInput(const traces::LookupStream& stream, uint32_t top_k,
                         std::vector<uint64_t> expert_bytes)
    : stream_(&stream),
      layers_(stream.layers),
      experts_(stream.experts),
      top_k_(top_k),
      expert_bytes_(std::move(expert_bytes)) {
  const uint64_t keys = uint64_t{stream.layers} * stream.experts;
  if (keys == 0) throw Error("replay: the lookup stream has no layers or no experts");
  if (keys >= kNoKey) throw Error("replay: too many (layer, expert) keys");
  if (stream.inv_begin.size() != stream.invocations() + 1 ||
      (!stream.next_use.empty() && stream.next_use.size() != stream.lookups()) ||
      (!stream.refresh_begin.empty() && (stream.refresh_begin.size() != stream.invocations() + 1 ||
                                         stream.refresh_begin.back() != stream.refreshes())) ||
      stream.inv_phase.size() != stream.invocations() || stream.inv_begin.back() != stream.lookups())
    throw Error("replay: inconsistent lookup stream");
  for (uint16_t l : stream.inv_layer)
    if (l >= stream.layers) throw Error("replay: invocation of layer " + std::to_string(l) + " out of range");
  // A refresh names a lookup of its own invocation (the cache refreshes keys in use only).
  for (size_t i = 0; i + 1 < stream.refresh_begin.size(); ++i)
    for (uint32_t r = stream.refresh_begin[i]; r < stream.refresh_begin[i + 1]; ++r)
      if (r >= stream.refreshes() || stream.refresh[r] < stream.inv_begin[i] ||
          stream.refresh[r] >= stream.inv_begin[i + 1])
        throw Error("replay: refresh " + std::to_string(r) + " is not a lookup of invocation " +
                    std::to_string(i));
  if (!stream.key.empty() && *std::max_element(stream.key.begin(), stream.key.end()) >= keys)
    throw Error("replay: lookup key " +
                std::to_string(*std::max_element(stream.key.begin(), stream.key.end())) + " out of range");
  view_ = traces::lookup_view(stream);
}

ReplayInput::ReplayInput(const LookupView& view, uint32_t layers, uint32_t experts, uint32_t top_k,
                         std::vector<uint64_t> expert_bytes)
    : layers_(layers), experts_(experts), top_k_(top_k), expert_bytes_(std::move(expert_bytes)), view_(view) {
  const uint64_t keys = uint64_t{layers} * experts;
  if (keys == 0) throw Error("replay: the lookup stream has no layers or no experts");
  if (keys >= kNoKey) throw Error("replay: too many (layer, expert) keys");
}

const traces::LookupStream& ReplayInput::stream() const {
  if (!stream_) throw Error("replay: this input is a lookup view without a stream");
  return *stream_;
}

CacheConfig ReplayInput::cache_config(const ReplayConfig& rc) const {
  CacheConfig c = make_cache_config(layers_, experts_, top_k_, rc.scope, rc.capacity, expert_bytes_);
  c.next_use_available = !view_.next_use.empty();
  if (oracle_needs(rc.policy).frequency) {
    std::call_once(frequency_once_, [this] { frequency_ = key_frequencies(view_.key, layers_ * experts_); });
    c.key_frequency = frequency_;
  }
  return c;
}

namespace {

double pct(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : 100.0 * static_cast<double>(a) / static_cast<double>(b);
}

ReplayResult run_one(const ReplayInput& in, const ReplayConfig& rc, const CacheConfig& cfg) {
  auto policy = make_eviction_policy(rc.policy, cfg);
  const auto t0 = std::chrono::steady_clock::now();
  const CacheCounters counters = policy->replay(in.view());
  const auto t1 = std::chrono::steady_clock::now();
  return replay_result(rc, cfg, counters, std::chrono::duration<double>(t1 - t0).count());
}

}  // namespace

const PolicyNeeds& oracle_needs(const std::string& policy) {
  return EvictionRegistry::instance().find(PolicySpec::parse(policy).name, "eviction").needs;
}

ReplayResult replay_result(const ReplayConfig& rc, const CacheConfig& cfg, const CacheCounters& counters,
                           double seconds) {
  ReplayResult r;
  r.policy = eviction_canonical_name(rc.policy);
  r.scope = rc.scope;
  r.capacity = cfg.requested;  // a relative capacity as it resolved for this trace
  r.capacity_experts = cfg.total_capacity_experts();
  r.capacity_bytes = cfg.total_capacity_bytes();
  r.expert_sizes_known = !cfg.expert_bytes.empty();
  r.counters = counters;
  r.seconds = seconds;
  r.lookups_per_s = r.seconds > 0 ? static_cast<double>(r.counters.lookups) / r.seconds : 0;
  r.hit_pct = pct(r.counters.hits, r.counters.lookups);
  r.decode_hit_pct = pct(r.counters.decode_hits, r.counters.decode_lookups);
  return r;
}

ReplayResult replay(const ReplayInput& in, const ReplayConfig& rc) {
  return run_one(in, rc, in.cache_config(rc));
}

std::vector<ReplayResult> replay_sweep(const ReplayInput& in, const std::vector<ReplayConfig>& configs,
                                       unsigned threads, const std::function<void()>& on_done) {
  return replay_sweep_runs(
      configs, threads, on_done,
      [&](const ReplayConfig& rc) {
        CacheConfig cfg = in.cache_config(rc);
        make_eviction_policy(rc.policy, cfg);  // unknown policy/parameter, missing oracle data
        return cfg;
      },
      [&](const ReplayConfig& rc, const CacheConfig& cfg) { return run_one(in, rc, cfg); });
}

Json to_json(const ReplayResult& r) {
  const auto& c = r.counters;
  Json j;
  j["eviction"] = r.policy;
  j["scope"] = scope_name(r.scope);
  j["capacity"] = r.capacity.to_string();
  j["capacity_unit"] = r.capacity.unit == CacheCapacity::Unit::kExperts ? "experts_per_layer" : "bytes";
  j["capacity_value"] = r.capacity.value;
  j["capacity_experts"] = r.capacity_experts;
  if (r.capacity_bytes)
    j["capacity_bytes"] = r.capacity_bytes;
  else
    j["capacity_bytes"] = nullptr;
  j.update(cache_counters_json(c, r.expert_sizes_known));
  j["replay_s"] = r.seconds;
  j["lookups_per_s"] = r.lookups_per_s;
  return j;
}

}  // namespace moesim::replay
