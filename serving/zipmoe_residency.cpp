// ZipMoE §3.4 "Pool Dispatching" (see the header for the contract).
//
//   lookup(key):                       state = state of pool[key]
//     count[key] += 1; move key up the layer's frequency order (ties: earlier first activation, lower id)
//     every active pool's eviction policy sees the lookup (on_hit, or on_admit when it does not track key)
//   refresh(key):                      the policies' on_refresh (LRU: the most recent use); no count
//   end_invocation: for each key of the invocation: r = its rank now; target = first active pool p with
//     r < tau_p = sum_{q <= p} S_q + delta, else none; move it there (a use produced every component: no
//     I/O; none: evicted right after execution); then while a pool of the layer holds more than S_p:
//     evict the pool policy's choice (freq: lowest count), skipping and dropping the experts its policy
//     still tracks but the pool no longer holds; never an expert of this invocation unless only they are
//     left (degenerate, counted)
//
// Ranks are kept incrementally: an increment moves an expert up past the experts it now beats, so a
// lookup costs O(1) amortized on skewed workloads instead of a sort.
#include "serving/zipmoe_residency.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "base/error.h"
#include "core/eviction.h"

namespace moesim::serving {
namespace {

constexpr int8_t kNone = -1;
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

ExpertState state_of(int8_t pool) {
  switch (pool) {
    case 0:
      return ExpertState::kFull;
    case 1:
      return ExpertState::kCompressed;
    case 2:
      return ExpertState::kSM;
    case 3:
      return ExpertState::kE;
    default:
      return ExpertState::kMissed;
  }
}

TensorPart part_of(int8_t pool) {
  return pool == 2 ? TensorPart::kSm : pool == 3 ? TensorPart::kE : TensorPart::kWhole;
}

class ZipMoeResidency final : public Residency {
 public:
  explicit ZipMoeResidency(const ZipMoePoolsConfig& c) : cfg_(c) {
    if (c.layers == 0 || c.experts == 0) throw Error("zipmoe pools: no layers or experts");
    const size_t keys = size_t{c.layers} * c.experts;
    pool_.assign(keys, kNone);
    count_.assign(keys, 0);
    first_.assign(keys, kNever);
    order_.resize(keys);
    pos_.resize(keys);
    for (uint32_t l = 0; l < c.layers; ++l)
      for (uint32_t e = 0; e < c.experts; ++e) {
        order_[l * c.experts + e] = static_cast<uint16_t>(e);
        pos_[l * c.experts + e] = static_cast<uint16_t>(e);
      }
    size_.assign(size_t{c.layers} * 4, 0);
    uint32_t tau = 0;
    for (int p = 0; p < 4; ++p) {
      tau += c.capacity[p];
      tau_[p] = tau + c.delta;
      if (c.capacity[p] == 0) continue;
      // The policy sees a per-layer cache of the pool's capacity; it only ranks, the pool keeps the count.
      CacheConfig pc;
      pc.layers = c.layers;
      pc.experts = c.experts;
      pc.top_k = 1;
      pc.scope = CacheScope::kPerLayer;
      pc.requested = CacheCapacity{CacheCapacity::Unit::kExperts, c.capacity[p]};
      pc.capacity.assign(c.layers, c.capacity[p]);
      pc.key_weight.assign(keys, 1);
      try {
        policy_[p] = make_eviction_policy(c.evict, pc);
      } catch (const Error& e) {
        throw Error(std::string("zipmoe pools: in-pool eviction: ") + e.what());
      }
      held_[p].assign(keys, 0);
    }
    evict_name_ = eviction_canonical_name(c.evict);
  }

  std::vector<PoolInfo> pools() const override {
    static const char* names[4] = {"F", "C", "S", "E"};
    std::vector<PoolInfo> v;
    for (int p = 0; p < 4; ++p)
      v.push_back(
          PoolInfo{names[p], cfg_.tier[p], uint64_t{cfg_.capacity[p]} * cfg_.expert_bytes[p] * cfg_.layers});
    return v;
  }
  std::string name() const override {
    return "zipmoe-dispatch:delta=" + std::to_string(cfg_.delta) + ",evict=" + evict_name_;
  }

  void begin_invocation(uint32_t layer, bool decode) override {
    layer_ = layer;
    decode_ = decode;
    current_.clear();
    ++counters_.invocations;
    for (auto& pol : policy_)
      if (pol) {
        pol->on_layer(layer, decode);
        pol->begin_invocation(layer);
      }
  }

  LookupResult lookup(uint32_t key, uint32_t, uint32_t) override {
    const int8_t had = pool_[key];
    const LookupResult found{state_of(had), had == kNone ? MemoryTier::kUnified : cfg_.tier[had]};
    // A hit is an expert found in any pool (F, C, S or E: the lookup reads less than the whole tensor, or
    // nothing), as every system's hit rate means "found resident"; the split by state is the metrics'
    // `states` (serving/metrics.h).
    const bool resident = found.state != ExpertState::kMissed;
    ++counters_.lookups;
    counters_.hits += resident;
    if (decode_) {
      ++counters_.decode_lookups;
      counters_.decode_hits += resident;
    }
    current_.push_back(key);
    ++tick_;
    bump(key);
    // Every pool's policy sees every activation, so its order is the layer's whole history whichever pool
    // the expert sits in (see the header).
    for (int p = 0; p < 4; ++p) touch(p, key);
    return found;
  }

  // A duplicate touch inside the invocation: the policies' on_refresh (the most recent use for LRU); not an
  // activation (frequency ranks are unchanged).
  void refresh(uint32_t key) override {
    for (int p = 0; p < 4; ++p)
      if (policy_[p] && held_[p][key]) policy_[p]->on_refresh(key, key / cfg_.experts);
  }

  void end_invocation(uint32_t) override {
    // Dispatch by the ranks after every count of the invocation: an expert looked up early may be overtaken
    // by the later ones. Past every threshold it is evicted right after execution.
    for (uint32_t key : current_) move(key, dispatch(key));
    bool degenerate = false;
    uint64_t excess = 0;
    std::array<bool, 4> lifted{};
    for (int p = 0; p < 4; ++p) {
      uint32_t& n = size_[layer_ * 4 + p];
      while (n > cfg_.capacity[p]) {
        uint32_t v = victim(p, layer_);
        if (v == kNoKey) {  // only this invocation's experts are left: the pool cannot hold them
          if (!degenerate) excess = n - cfg_.capacity[p];
          degenerate = true;
          policy_[p]->end_invocation(layer_);
          lifted[p] = true;
          v = victim(p, layer_);
        }
        move(v, kNone);
      }
    }
    for (int p = 0; p < 4; ++p)
      if (policy_[p] && !lifted[p]) policy_[p]->end_invocation(layer_);
    if (degenerate) {
      ++counters_.over_capacity_invocations;
      counters_.max_over_capacity = std::max(counters_.max_over_capacity, excess);
    }
  }

  ExpertState prefetch(uint32_t layer, uint32_t key, uint32_t, ExpertState* target) override {
    const int8_t had = pool_[key];
    const int8_t to = dispatch(key);
    if (to == kNone || to == had) {
      *target = state_of(had);
      return state_of(had);
    }
    move(key, to);
    // Between invocations: the policy's invocation protects the prefetched expert alone.
    EvictionPolicy& pol = *policy_[to];
    pol.begin_invocation(layer);
    touch(to, key);
    uint32_t& n = size_[layer * 4 + to];
    while (n > cfg_.capacity[to]) {
      const uint32_t v = victim(to, layer);
      if (v == kNoKey) {
        pol.end_invocation(layer);
        move(key, had);  // nothing else can go: give the prefetch up
        *target = state_of(had);
        return state_of(had);
      }
      move(v, kNone);
    }
    pol.end_invocation(layer);
    *target = state_of(to);
    return state_of(had);
  }

  LookupResult peek(uint32_t key) const override {
    const int8_t p = pool_[key];
    return {state_of(p), p == kNone ? MemoryTier::kUnified : cfg_.tier[p]};
  }
  CacheCounters counters() const override { return counters_; }
  uint64_t capacity_experts() const override {
    uint64_t n = 0;
    for (uint32_t c : cfg_.capacity) n += c;
    return n * cfg_.layers;
  }

 private:
  // Whether a beats b in the layer's frequency order.
  bool before(uint32_t a, uint32_t b) const {
    if (count_[a] != count_[b]) return count_[a] > count_[b];
    if (first_[a] != first_[b]) return first_[a] < first_[b];
    return a < b;
  }
  void bump(uint32_t key) {
    ++count_[key];
    if (first_[key] == kNever) first_[key] = tick_;
    const uint32_t layer = key / cfg_.experts, base = layer * cfg_.experts;
    uint32_t i = pos_[key];
    while (i > 0) {
      const uint32_t prev = base + order_[base + i - 1];
      if (!before(key, prev)) break;
      order_[base + i] = order_[base + i - 1];
      pos_[prev] = static_cast<uint16_t>(i);
      --i;
    }
    order_[base + i] = static_cast<uint16_t>(key - base);
    pos_[key] = static_cast<uint16_t>(i);
  }
  int8_t dispatch(uint32_t key) const {
    const uint32_t r = pos_[key];
    for (int p = 0; p < 4; ++p)
      if (cfg_.capacity[p] > 0 && r < tau_[p]) return static_cast<int8_t>(p);
    return kNone;
  }
  // Pool p's policy sees a use of key: a hit when it already tracks the key, an admission otherwise.
  void touch(int p, uint32_t key) {
    if (!policy_[p]) return;
    const uint32_t layer = key / cfg_.experts;
    if (held_[p][key]) {
      policy_[p]->on_hit(key, layer, kNeverUsedAgain);
    } else {
      held_[p][key] = 1;
      policy_[p]->on_admit(key, layer, kNeverUsedAgain);
    }
  }
  // Pool p's policy's choice among the pool's experts of `layer` (never one its invocation protects).
  // The policy also tracks experts that have left the pool; those choices are dropped from it until the
  // expert is used again. kNoKey when no member is eligible.
  uint32_t victim(int p, uint32_t layer) {
    for (;;) {
      const uint32_t v = policy_[p]->evict(layer);
      if (v == kNoKey) return kNoKey;
      held_[p][v] = 0;
      if (pool_[v] == p) return v;
    }
  }
  void send(MemoryEvent::Kind kind, int8_t pool, uint32_t key, bool leaving) {
    emit(
        MemoryEvent{kind, static_cast<uint32_t>(pool), key, part_of(pool), cfg_.expert_bytes[pool], leaving});
  }
  // Moves key to pool `to` (kNone: out of every pool), with its memory events and the pools' sizes.
  void move(uint32_t key, int8_t to) {
    const int8_t from = pool_[key];
    if (from == to) return;
    const uint32_t layer = key / cfg_.experts;
    if (from != kNone) --size_[layer * 4 + from];
    if (to != kNone) ++size_[layer * 4 + to];
    pool_[key] = to;
    if (from == kNone) {
      send(MemoryEvent::Kind::kAdmit, to, key, false);
    } else if (to == kNone) {
      ++counters_.evictions;
      send(MemoryEvent::Kind::kEvict, from, key, true);
    } else {
      const auto kind = to > from ? MemoryEvent::Kind::kDemote : MemoryEvent::Kind::kPromote;
      send(kind, from, key, true);
      send(kind, to, key, false);
    }
  }

  ZipMoePoolsConfig cfg_;
  std::string evict_name_;
  std::array<std::unique_ptr<EvictionPolicy>, 4> policy_;  // null for an inactive pool
  std::array<std::vector<uint8_t>, 4> held_;               // [pool][key]: the pool's policy tracks key
  std::array<uint32_t, 4> tau_{};
  std::vector<int8_t> pool_;
  std::vector<uint64_t> count_, first_;
  std::vector<uint16_t> order_, pos_;  // per layer: experts in frequency order; each key's position
  std::vector<uint32_t> size_;         // [layer * 4 + pool]: experts in the pool
  std::vector<uint32_t> current_;
  uint32_t layer_ = 0;
  bool decode_ = false;
  uint64_t tick_ = 0;
  CacheCounters counters_;
};

}  // namespace

std::unique_ptr<Residency> make_zipmoe_residency(const ZipMoePoolsConfig& cfg) {
  return std::make_unique<ZipMoeResidency>(cfg);
}

}  // namespace moesim::serving
