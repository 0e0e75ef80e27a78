// TinyLFU and W-TinyLFU admission in front of any eviction policy: Einziger, Friedman and Manes, "TinyLFU: A
// Highly Efficient Cache Admission Policy", ACM Transactions on Storage 13(4), 2017 (the admission scheme of
// its Figure 1; W-TinyLFU, the window in front of it, in its Section 5). TinyLFU keeps an approximate
// frequency of recent accesses (a sketch of every access, all counters halved after each W = `sample`
// accesses, the "reset") and admits a new key only when it is more frequent than the victim the eviction
// policy would give for it:
//
//   on every access x: freq(x) += 1; after W accesses: freq(y) = freq(y) / 2 for every y
//   W-TinyLFU: a new key enters the window, an LRU of `window` x the capacity; the main cache (the inner
//   eviction policy) has the rest
//   when the window is over its size: c = the LRU key of the window
//     if the main cache has room: c enters it
//     else: v = the victim the inner policy chooses; if freq(c) > freq(v): evict v, c enters the main cache
//                                                     else: evict c (v stays)
//   window = 0 is plain TinyLFU: every new key is a candidate against the inner policy's victim
//
// Defaults are libCacheSim's WTinyLFU (window-size=0.01; a reset after 32 x the main cache's capacity of
// accesses); its main cache defaults to SLRU, which moesim has not, so the default inner policy is LRU
// (libCacheSim's main-cache=LRU). The counts are exact per key instead of a count-min sketch: moesim's keys
// are few and dense, so the sketch's collisions (and its doorkeeper) would only add error.
//
// The inner policy is any registered one that needs no oracle, as a spec: inner=lru, inner=lfu:history=1; an
// inner policy with several parameters writes them separated by '+' (inner=s3fifo:small=0.2+ghost=0.8), since
// ',' separates this policy's own. It is built with the main cache's capacity.
//
// The victim v stays where the inner policy had it: the policy has no "peek", so v is taken with evict() and,
// when it wins, kept resident in a reprieve list and offered again (first) at the next duel; a hit on a
// reprieved key hands it back to the inner policy as an admission (for LRU exactly what a hit does).
//
// Invocation semantics (docs/architecture.md §4): every lookup counts. A candidate that loses its duel while
// it is in use (a key of the current invocation) cannot be evicted yet: the eviction is deferred and the
// cache lets the key pass through after the invocation (it was loaded and used, and is not kept) -- by
// design, as static-freq's pass-through; the cache does not count it as over capacity. A refresh moves a
// window key to the front of the window and is passed to the inner policy for a main key.
#include <algorithm>
#include <memory>

#include "core/eviction.h"
#include "policies/eviction/key_lists.h"

namespace moesim::policies {
namespace {

class TinyLfu final : public EvictionPolicyBase<TinyLfu> {
 public:
  TinyLfu(const CacheConfig& cfg, const std::string& inner, double window, double sample)
      : EvictionPolicyBase(cfg),
        weight_(config().key_weight),
        window_(cfg.keys(), cfg.partitions()),
        reprieved_(cfg.keys(), cfg.partitions()),
        where_(cfg.keys(), kNone),
        count_(cfg.keys(), 0),
        next_use_(cfg.keys(), kNeverUsedAgain),
        stamps_(cfg.keys()),
        parts_(cfg.partitions()) {
    CacheConfig main_cfg = cfg;
    for (uint32_t p = 0; p < cfg.partitions(); ++p) {
      Part& q = parts_[p];
      q.win_cap = static_cast<uint64_t>(static_cast<double>(cfg.capacity[p]) * window);
      q.main_cap = cfg.capacity[p] - q.win_cap;
      q.period = std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(q.main_cap) * sample));
      main_cfg.capacity[p] = q.main_cap;
    }
    inner_ = make_eviction_policy(inner, main_cfg);
  }

  void on_layer(uint32_t layer, bool decode) override { inner_->on_layer(layer, decode); }
  void begin_invocation(uint32_t part) override {
    stamps_.next_epoch();
    inner_->begin_invocation(part);
  }
  void on_hit(uint32_t key, uint32_t part, uint32_t next_use) override {
    access(key, part, next_use);
    if (where_[key] == kWindow) {
      window_.unlink(key);
      window_.push_front(part, key);
    } else if (where_[key] == kMain) {
      inner_->on_hit(key, part, next_use);
    } else {  // reprieved: back to the inner policy
      reprieved_.unlink(key);
      where_[key] = kMain;
      inner_->on_admit(key, part, next_use);
    }
  }
  void on_admit(uint32_t key, uint32_t part, uint32_t next_use) override {
    access(key, part, next_use);
    window_.push_front(part, key);
    where_[key] = kWindow;
    parts_[part].win_w += weight_[key];
  }
  void on_refresh(uint32_t key, uint32_t part) override {
    if (where_[key] == kWindow) {
      window_.unlink(key);
      window_.push_front(part, key);
    } else if (where_[key] == kMain) {
      inner_->on_refresh(key, part);
    }
  }
  uint32_t evict(uint32_t part) override {
    Part& q = parts_[part];
    bool deferred = false;  // an in-use candidate lost its duel: its eviction waits for the invocation's end
    for (uint32_t c = window_.back(part); c != kNoKey && q.win_w > q.win_cap;) {
      const uint32_t next = window_.toward_front(c);
      if (q.main_w + weight_[c] <= q.main_cap) {
        to_main(part, c);
      } else if (const uint32_t v = main_victim(part); v == kNoKey || count_[c] <= count_[v]) {
        if (!stamps_.in_use(c)) return drop_window(part, c);
        deferred = true;
      } else {
        drop_reprieved(part, v);
        to_main(part, c);
        return v;
      }
      c = next;
    }
    if (deferred) return kNoKey;
    if (const uint32_t v = main_victim(part); v != kNoKey) return drop_reprieved(part, v);
    for (uint32_t c = window_.back(part); c != kNoKey; c = window_.toward_front(c))
      if (!stamps_.in_use(c)) return drop_window(part, c);
    return kNoKey;
  }
  void end_invocation(uint32_t part) override {
    inner_->end_invocation(part);
    stamps_.next_epoch();
  }

 private:
  enum : uint8_t { kWindow, kMain, kReprieved, kNone };
  struct Part {
    uint64_t win_cap = 0, main_cap = 0, period = 1;
    uint64_t win_w = 0, main_w = 0;  // main_w: the inner policy's keys and the reprieved ones
    uint64_t samples = 0;
  };

  void access(uint32_t key, uint32_t part, uint32_t next_use) {
    stamps_.mark(key);
    next_use_[key] = next_use;
    ++count_[key];
    Part& q = parts_[part];
    if (++q.samples < q.period) return;
    q.samples = 0;  // the reset: halve every count of the partition
    const CacheConfig& cfg = config();
    const uint32_t first = cfg.scope == CacheScope::kGlobal ? 0 : part * cfg.experts;
    const uint32_t last = cfg.scope == CacheScope::kGlobal ? cfg.keys() : first + cfg.experts;
    for (uint32_t k = first; k < last; ++k) count_[k] /= 2;
  }
  void to_main(uint32_t part, uint32_t c) {
    window_.unlink(c);
    Part& q = parts_[part];
    q.win_w -= weight_[c];
    q.main_w += weight_[c];
    where_[c] = kMain;
    inner_->on_admit(c, part, next_use_[c]);
  }
  uint32_t drop_window(uint32_t part, uint32_t c) {
    window_.unlink(c);
    parts_[part].win_w -= weight_[c];
    where_[c] = kNone;
    return c;
  }
  // The inner policy's victim, without evicting it: the first reprieved key, or a new one taken from the
  // inner policy (none when every key of the main cache is in use).
  uint32_t main_victim(uint32_t part) {
    uint32_t v = reprieved_.back(part);
    if (v != kNoKey) return v;
    v = inner_->evict(part);
    if (v == kNoKey) return kNoKey;
    reprieved_.push_front(part, v);
    where_[v] = kReprieved;
    return v;
  }
  uint32_t drop_reprieved(uint32_t part, uint32_t v) {
    reprieved_.unlink(v);
    parts_[part].main_w -= weight_[v];
    where_[v] = kNone;
    return v;
  }

  const std::vector<uint64_t>& weight_;  // config().key_weight
  std::unique_ptr<EvictionPolicy> inner_;
  KeyLists window_;             // per partition: the window LRU, front = most recent
  KeyLists reprieved_;          // per partition: victims of the inner policy that won their duel
  std::vector<uint8_t> where_;  // [keys]
  std::vector<uint32_t> count_;
  std::vector<uint32_t> next_use_;  // [keys] the last next use given with a lookup (for the inner policy)
  InUseStamps stamps_;
  std::vector<Part> parts_;
};

}  // namespace

MOESIM_REGISTER(
    EvictionRegistry, "tinylfu",
    "(W-)TinyLFU admission (Einziger et al., ACM ToS 2017) in front of an inner eviction policy: an "
    "LRU window, then a new expert replaces the inner policy's victim only if it is more frequent",
    {{"inner", "lru", "the eviction policy of the main cache (its own parameters joined by '+')"},
     {"window", "0.01", "share of the capacity for the LRU window (0: plain TinyLFU)", ParamType::kReal,
      ParamRange::closed_open(0, 1)},
     {"sample", "32", "accesses between two resets (all counts halved), x the main cache's capacity",
      ParamType::kReal, ParamRange::above(0)}},
    [](const Params& p, const CacheConfig& cfg) -> std::unique_ptr<EvictionPolicy> {
      std::string inner = p.get("inner");
      std::replace(inner.begin(), inner.end(), '+', ',');
      const double window = p.get_double("window"), sample = p.get_double("sample");
      const PolicyNeeds& needs =
          EvictionRegistry::instance().find(PolicySpec::parse(inner).name, "eviction").needs;
      if (needs.next_use || needs.frequency)
        throw UsageError("tinylfu: inner policy '" + inner +
                         "' is an oracle (it reads the future or whole-trace frequencies); "
                         "admission in front of it is not supported");
      return std::make_unique<TinyLfu>(cfg, inner, window, sample);
    });

}  // namespace moesim::policies
