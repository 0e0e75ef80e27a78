#include "replay/mrc.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "base/error.h"
#include "base/hash64.h"
#include "traces/lookup_stream.h"

namespace moesim::replay {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One partition's recency stack as a Fenwick tree over touch times: a key's slot is the time of its last
// touch, holding its weight; the weights of slots at or after a key's slot are its stack distance. Slots run
// out after `size` touches: the live keys are then renumbered in order (compact), so the tree stays 2x the
// keys.
class Stack {
 public:
  explicit Stack(uint32_t keys)
      : size_(2 * keys + 16), tree_(size_ + 1, 0), key_at_(size_, kNone), w_at_(size_, 0) {}

  // Weights of the keys touched at or after slot s.
  uint64_t distance(uint32_t s) const {
    uint64_t before = 0;
    for (uint32_t i = s; i > 0; i -= i & (~i + 1)) before += tree_[i];
    return total_ - before;
  }

  // Key `key` (weight w, currently at `slot`, kNone if never touched) becomes the most recent.
  void touch(uint32_t key, uint64_t w, std::vector<uint32_t>& slot) {
    uint32_t s = slot[key];
    if (s != kNone) {
      add(s, ~w + 1);  // -w, modulo 2^64
      key_at_[s] = kNone;
      total_ -= w;
    }
    if (next_ == size_) compact(slot);
    s = next_++;
    add(s, w);
    key_at_[s] = key;
    w_at_[s] = w;
    total_ += w;
    slot[key] = s;
  }

  // Weights of the live keys, most recent first.
  std::vector<uint64_t> weights_most_recent_first() const {
    std::vector<uint64_t> w;
    for (uint32_t s = next_; s-- > 0;)
      if (key_at_[s] != kNone) w.push_back(w_at_[s]);
    return w;
  }

 private:
  void add(uint32_t s, uint64_t w) {
    for (uint32_t i = s + 1; i <= size_; i += i & (~i + 1)) tree_[i] += w;
  }

  void compact(std::vector<uint32_t>& slot) {
    uint32_t n = 0;
    for (uint32_t s = 0; s < next_; ++s)
      if (key_at_[s] != kNone) {
        key_at_[n] = key_at_[s];
        w_at_[n] = w_at_[s];
        slot[key_at_[n]] = n;
        ++n;
      }
    std::fill(key_at_.begin() + n, key_at_.end(), kNone);
    std::fill(w_at_.begin() + n, w_at_.end(), 0);
    std::fill(tree_.begin(), tree_.end(), 0);
    for (uint32_t i = 1; i <= size_; ++i) {  // linear-time build
      tree_[i] += w_at_[i - 1];
      const uint32_t j = i + (i & (~i + 1));
      if (j <= size_) tree_[j] += tree_[i];
    }
    next_ = n;
  }

  uint32_t size_;
  std::vector<uint64_t> tree_;  // 1-based Fenwick tree over slots
  std::vector<uint32_t> key_at_;
  std::vector<uint64_t> w_at_;
  uint32_t next_ = 0;
  uint64_t total_ = 0;
};

// One pass over the stream for the configurations `cfgs` (indices `which` into it), which share one key
// weighting; fills counters[which[i]] and layer_hits[which[i]].
void lru_pass(const LookupView& v, const std::vector<CacheConfig>& cfgs, const std::vector<size_t>& which,
              std::vector<CacheCounters>& counters, std::vector<std::vector<uint64_t>>& layer_hits) {
  const CacheConfig& c0 = cfgs[which.front()];
  const uint32_t layers = c0.layers, experts = c0.experts, parts = c0.partitions();
  const uint32_t keys_per_part = parts == 1 ? c0.keys() : experts;
  // Each partition's capacities, sorted and unique; thr_index[i][p]: configuration i's capacity among them.
  std::vector<std::vector<uint64_t>> thr(parts);
  for (size_t i : which)
    for (uint32_t p = 0; p < parts; ++p) thr[p].push_back(cfgs[i].capacity[p]);
  size_t width = 0;
  for (auto& t : thr) {
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    width = std::max(width, t.size() + 1);
  }
  // Lookups per (layer, phase) by the index of the smallest capacity they hit at (thr.size(): none).
  std::vector<uint64_t> hist(size_t{layers} * 2 * width, 0);
  // Invocations per partition by the index of the smallest capacity that holds them (over capacity below it).
  std::vector<uint64_t> need_hist(size_t{parts} * width, 0);
  std::vector<uint64_t> max_need(parts, 0);
  // Capacities in experts: a distance is at most the partition's keys, so a table gives its capacity index
  // directly (a binary search per lookup, its branches unpredictable, cost as much as the rest of the pass).
  const bool unit_weights = !c0.weights_are_bytes;
  std::vector<std::vector<uint32_t>> index_of(unit_weights ? parts : 0);
  for (uint32_t p = 0; p < index_of.size(); ++p) {
    index_of[p].resize(size_t{keys_per_part} + 1);
    for (uint32_t d = 0; d <= keys_per_part; ++d)
      index_of[p][d] =
          static_cast<uint32_t>(std::lower_bound(thr[p].begin(), thr[p].end(), d) - thr[p].begin());
  }
  std::vector<Stack> stacks(parts, Stack(keys_per_part));
  std::vector<uint32_t> slot(c0.keys(), kNone);
  const uint64_t* weight = c0.key_weight.data();
  const uint32_t* key = v.key.data();
  const bool refreshes = !v.refresh_begin.empty();
  for (size_t inv = 0; inv < v.invocations(); ++inv) {
    const uint32_t layer = v.inv_layer[inv], p = c0.partition_of_layer(layer);
    const uint32_t b = v.inv_begin[inv], e = v.inv_begin[inv + 1];
    Stack& st = stacks[p];
    const std::vector<uint64_t>& t = thr[p];
    uint64_t* row = hist.data() + (size_t{layer} * 2 + (v.inv_phase[inv] == 1 ? 1 : 0)) * width;
    if (unit_weights) {
      const uint32_t* idx_of = index_of[p].data();
      for (uint32_t j = b; j < e; ++j) {
        const uint32_t s = slot[key[j]];
        ++row[s == kNone ? t.size() : idx_of[st.distance(s)]];
      }
    } else {
      for (uint32_t j = b; j < e; ++j) {
        const uint32_t s = slot[key[j]];
        size_t idx = t.size();
        if (s != kNone) idx = std::lower_bound(t.begin(), t.end(), st.distance(s)) - t.begin();
        ++row[idx];
      }
    }
    const uint64_t need = uint64_t{e - b} * weight[size_t{layer} * experts];
    ++need_hist[size_t{p} * width + (std::lower_bound(t.begin(), t.end(), need) - t.begin())];
    max_need[p] = std::max(max_need[p], need);
    for (uint32_t j = b; j < e; ++j) st.touch(key[j], weight[key[j]], slot);
    if (refreshes)
      for (uint32_t r = v.refresh_begin[inv]; r < v.refresh_begin[inv + 1]; ++r) {
        const uint32_t k = key[v.refresh[r]];
        st.touch(k, weight[k], slot);
      }
  }
  std::vector<std::vector<uint64_t>> final_weights(parts);
  for (uint32_t p = 0; p < parts; ++p) final_weights[p] = stacks[p].weights_most_recent_first();

  for (size_t i : which) {
    const CacheConfig& cfg = cfgs[i];
    CacheCounters& c = counters[i];
    c.invocations = v.invocations();
    layer_hits[i].assign(layers, 0);
    for (uint32_t l = 0; l < layers; ++l) {
      const uint32_t p = cfg.partition_of_layer(l);
      const size_t ic = std::lower_bound(thr[p].begin(), thr[p].end(), cfg.capacity[p]) - thr[p].begin();
      uint64_t hits[2] = {0, 0}, looks[2] = {0, 0};
      for (int ph = 0; ph < 2; ++ph) {
        const uint64_t* row = hist.data() + (size_t{l} * 2 + ph) * width;
        for (size_t x = 0; x <= thr[p].size(); ++x) {
          looks[ph] += row[x];
          if (x <= ic) hits[ph] += row[x];
        }
      }
      c.lookups += looks[0] + looks[1];
      c.hits += hits[0] + hits[1];
      c.decode_lookups += looks[1];
      c.decode_hits += hits[1];
      layer_hits[i][l] = hits[0] + hits[1];
      if (!cfg.expert_bytes.empty())
        c.read_bytes += (looks[0] + looks[1] - hits[0] - hits[1]) * cfg.expert_bytes[l];
    }
    uint64_t resident = 0;
    for (uint32_t p = 0; p < parts; ++p) {
      const uint64_t cap = cfg.capacity[p];
      const size_t ic = std::lower_bound(thr[p].begin(), thr[p].end(), cap) - thr[p].begin();
      for (size_t x = ic + 1; x <= thr[p].size(); ++x)
        c.over_capacity_invocations += need_hist[p * width + x];
      if (max_need[p] > cap) c.max_over_capacity = std::max(c.max_over_capacity, max_need[p] - cap);
      uint64_t sum = 0;
      for (uint64_t w : final_weights[p]) {
        if (sum + w > cap) break;
        sum += w;
        ++resident;
      }
    }
    c.evictions = c.lookups - c.hits - resident;
  }
}

std::vector<CacheConfig> configs_for(const ReplayInput& in, const std::string& policy, CacheScope scope,
                                     const std::vector<CacheCapacity>& capacities) {
  if (capacities.empty()) throw Error("miss-ratio curve: no capacity given");
  std::vector<CacheConfig> cfgs;
  for (const auto& cap : capacities) cfgs.push_back(in.cache_config({policy, scope, cap}));
  return cfgs;
}

// The stream restricted to the sampled keys (see the header), as a stream of its own.
traces::LookupStream sample(const LookupView& v, const std::vector<char>& keep, uint32_t keys) {
  traces::LookupStream s;
  s.inv_begin = {0};
  s.refresh_begin = {0};
  std::vector<uint32_t> new_index;  // per lookup of the open invocation
  const bool refreshes = !v.refresh_begin.empty();
  for (size_t inv = 0; inv < v.invocations(); ++inv) {
    const uint32_t b = v.inv_begin[inv], e = v.inv_begin[inv + 1];
    new_index.assign(e - b, kNone);
    for (uint32_t j = b; j < e; ++j)
      if (keep[v.key[j]]) {
        new_index[j - b] = static_cast<uint32_t>(s.key.size());
        s.key.push_back(v.key[j]);
      }
    if (s.key.size() == s.inv_begin.back()) continue;  // nothing sampled: no invocation
    if (refreshes)
      for (uint32_t r = v.refresh_begin[inv]; r < v.refresh_begin[inv + 1]; ++r)
        if (new_index[v.refresh[r] - b] != kNone) s.refresh.push_back(new_index[v.refresh[r] - b]);
    s.inv_begin.push_back(static_cast<uint32_t>(s.key.size()));
    s.inv_layer.push_back(v.inv_layer[inv]);
    s.inv_phase.push_back(v.inv_phase[inv]);
    s.refresh_begin.push_back(static_cast<uint32_t>(s.refresh.size()));
  }
  s.next_use.assign(s.key.size(), kNeverUsedAgain);
  std::vector<uint32_t> next(keys, kNeverUsedAgain);
  for (size_t inv = s.inv_layer.size(); inv-- > 0;)
    for (uint32_t j = s.inv_begin[inv]; j < s.inv_begin[inv + 1]; ++j) {
      s.next_use[j] = next[s.key[j]];
      next[s.key[j]] = static_cast<uint32_t>(inv);
    }
  return s;
}

}  // namespace

MrcResult lru_mrc(const ReplayInput& in, CacheScope scope, const std::vector<CacheCapacity>& capacities) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<CacheConfig> cfgs = configs_for(in, "lru", scope, capacities);
  std::vector<CacheCounters> counters(cfgs.size());
  MrcResult m;
  m.method = "stack-distance";
  m.layer_hits.resize(cfgs.size());
  // Capacities in experts weigh every key 1, a global byte budget over mixed expert sizes weighs bytes: one
  // pass per weighting.
  for (bool bytes : {false, true}) {
    std::vector<size_t> which;
    for (size_t i = 0; i < cfgs.size(); ++i)
      if (cfgs[i].weights_are_bytes == bytes) which.push_back(i);
    if (!which.empty()) lru_pass(in.view(), cfgs, which, counters, m.layer_hits);
  }
  m.seconds = seconds_since(t0);
  m.layer_lookups.assign(cfgs.front().layers, 0);
  for (size_t inv = 0; inv < in.view().invocations(); ++inv)
    m.layer_lookups[in.view().inv_layer[inv]] += in.view().inv_begin[inv + 1] - in.view().inv_begin[inv];
  for (size_t i = 0; i < cfgs.size(); ++i)
    m.points.push_back(replay_result({"lru", scope, capacities[i]}, cfgs[i], counters[i], m.seconds));
  return m;
}

MrcResult shards_mrc(const ReplayInput& in, const std::string& policy, CacheScope scope,
                     const std::vector<CacheCapacity>& capacities, const ShardsOptions& opt) {
  if (!(opt.rate > 0 && opt.rate <= 1))
    throw Error("miss-ratio curve: the sample rate must be in (0, 1], got " + std::to_string(opt.rate));
  if (opt.salts == 0) throw Error("miss-ratio curve: at least one sample (salt) is needed");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<CacheConfig> cfgs = configs_for(in, policy, scope, capacities);
  for (const auto& cfg : cfgs) make_eviction_policy(policy, cfg);  // unknown policy, missing oracle data
  const LookupView& v = in.view();
  const uint32_t keys = cfgs.front().keys(), parts = cfgs.front().partitions();
  const uint32_t keys_per_part = parts == 1 ? keys : cfgs.front().experts;
  const size_t n = cfgs.size();
  std::vector<double> sum(n, 0), sum2(n, 0), dec(n, 0), read(n, 0);
  for (uint32_t salt = 1; salt <= opt.salts; ++salt) {
    std::vector<char> keep(keys, 0);
    std::vector<uint32_t> kept(parts, 0);
    for (uint32_t k = 0; k < keys; ++k) {
      const uint64_t h = hash64(&k, sizeof k, salt);
      keep[k] = static_cast<double>(h >> 11) * 0x1p-53 < opt.rate;
      if (keep[k]) ++kept[cfgs.front().partition_of_layer(k / cfgs.front().experts)];
    }
    const traces::LookupStream s = sample(v, keep, keys);
    const LookupView sv = traces::lookup_view(s);
    std::vector<uint64_t> freq;
    if (oracle_needs(policy).frequency) freq = key_frequencies(s.key, keys);
    for (size_t i = 0; i < n; ++i) {
      CacheConfig c = cfgs[i];
      for (uint32_t p = 0; p < parts; ++p) {
        const double scaled = static_cast<double>(c.capacity[p]) * kept[p] / keys_per_part;
        c.capacity[p] = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(scaled)));
      }
      c.next_use_available = true;
      c.key_frequency = freq;
      const CacheCounters cc = s.key.empty() ? CacheCounters{} : make_eviction_policy(policy, c)->replay(sv);
      const double ratio = cc.lookups ? static_cast<double>(cc.hits) / static_cast<double>(cc.lookups) : 0;
      sum[i] += ratio;
      sum2[i] += ratio * ratio;
      dec[i] += cc.decode_lookups
                    ? static_cast<double>(cc.decode_hits) / static_cast<double>(cc.decode_lookups)
                    : 0;
      read[i] += cc.lookups ? static_cast<double>(cc.read_bytes) / static_cast<double>(cc.lookups) : 0;
    }
  }
  MrcResult m;
  m.method = "shards";
  m.sample_rate = opt.rate;
  m.salts = opt.salts;
  m.seconds = seconds_since(t0);
  uint64_t lookups = v.key.size(), decode_lookups = 0;
  for (size_t inv = 0; inv < v.invocations(); ++inv)
    if (v.inv_phase[inv] == 1) decode_lookups += v.inv_begin[inv + 1] - v.inv_begin[inv];
  const double salts = opt.salts;
  for (size_t i = 0; i < n; ++i) {
    const double mean = sum[i] / salts;
    CacheCounters c;
    c.invocations = v.invocations();
    c.lookups = lookups;
    c.hits = static_cast<uint64_t>(std::llround(mean * static_cast<double>(lookups)));
    c.decode_lookups = decode_lookups;
    c.decode_hits = static_cast<uint64_t>(std::llround(dec[i] / salts * static_cast<double>(decode_lookups)));
    c.read_bytes = static_cast<uint64_t>(std::llround(read[i] / salts * static_cast<double>(lookups)));
    m.points.push_back(replay_result({policy, scope, capacities[i]}, cfgs[i], c, m.seconds));
    const double var = opt.salts > 1 ? std::max(0.0, (sum2[i] - sum[i] * mean) / (salts - 1)) : 0;
    m.hit_pct_stderr.push_back(opt.salts > 1 ? 100 * std::sqrt(var / salts) : std::nan(""));
  }
  return m;
}

Json to_json(const MrcResult& m) {
  Json j;
  j["method"] = m.method;
  j["exact"] = m.method == "stack-distance";
  if (m.method == "shards") {
    j["sample_rate"] = m.sample_rate;
    j["salts"] = m.salts;
  }
  j["mrc_s"] = m.seconds;
  if (!m.layer_lookups.empty()) j["layer_lookups"] = m.layer_lookups;
  j["points"] = Json::array();
  for (size_t i = 0; i < m.points.size(); ++i) {
    Json p = to_json(m.points[i]);
    p.erase("replay_s");
    p.erase("lookups_per_s");
    const CacheCounters& c = m.points[i].counters;
    p["miss_rate"] = fraction_or_null(c.lookups - c.hits, c.lookups);
    if (m.method == "shards") {
      p.erase("evictions");
      p.erase("over_capacity_invocations");
      p.erase("max_over_capacity");
      p["estimated"] = true;
      if (std::isnan(m.hit_pct_stderr[i]))
        p["hit_rate_stderr"] = nullptr;
      else
        p["hit_rate_stderr"] = m.hit_pct_stderr[i] / 100;
    }
    if (i < m.layer_hits.size() && !m.layer_hits[i].empty()) p["layer_hits"] = m.layer_hits[i];
    j["points"].push_back(std::move(p));
  }
  return j;
}

}  // namespace moesim::replay
