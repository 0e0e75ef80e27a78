// The classic caches as a Residency: counters equal the replay fast path's bit for bit for every registered
// policy; memory events account for exactly the resident bytes; prefetch admission; the two-tier cache.
#include "serving/classic_residency.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/rng.h"

namespace moesim {
namespace {

constexpr uint32_t kLayers = 4, kExperts = 16;

// A random stream of invocations: each layer in turn, 1-3 unique experts, skewed towards low ids; a third of
// the invocations refresh some of their keys in a random order (duplicate touches, traces/lookup_stream.h).
struct Stream {
  std::vector<uint32_t> inv_begin{0}, key, next_use, refresh_begin{0}, refresh;
  std::vector<uint16_t> layer;
  std::vector<uint8_t> phase;
  explicit Stream(uint64_t seed, size_t invocations = 3000) {
    Rng rng(seed);
    for (size_t i = 0; i < invocations; ++i) {
      const auto l = static_cast<uint16_t>(i % kLayers);
      const uint32_t n = 1 + static_cast<uint32_t>(rng.below(3));
      std::vector<uint32_t> keys;
      while (keys.size() < n) {
        const auto e = static_cast<uint32_t>(rng.below(kExperts) * rng.below(kExperts) / kExperts);
        const uint32_t k = l * kExperts + e;
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      }
      const auto first = static_cast<uint32_t>(key.size());
      for (uint32_t k : keys) key.push_back(k);
      if (rng.below(3) == 0)
        for (uint32_t r = 0; r < n; ++r) refresh.push_back(first + static_cast<uint32_t>(rng.below(n)));
      refresh_begin.push_back(static_cast<uint32_t>(refresh.size()));
      inv_begin.push_back(static_cast<uint32_t>(key.size()));
      layer.push_back(l);
      phase.push_back(i % 7 == 0 ? 0 : 1);
    }
    next_use.assign(key.size(), kNeverUsedAgain);
    std::map<uint32_t, uint32_t> later;  // key -> next invocation using it
    for (size_t i = layer.size(); i-- > 0;)
      for (uint32_t j = inv_begin[i]; j < inv_begin[i + 1]; ++j) {
        auto it = later.find(key[j]);
        if (it != later.end()) next_use[j] = it->second;
        later[key[j]] = static_cast<uint32_t>(i);
      }
  }
  LookupView view() const {
    return LookupView{inv_begin, layer, phase, key, next_use, refresh_begin, refresh};
  }
};

CacheConfig config(const Stream& s, uint64_t capacity, std::vector<uint64_t>& freq) {
  CacheConfig cc =
      make_cache_config(kLayers, kExperts, 3, CacheScope::kGlobal,
                        CacheCapacity{CacheCapacity::Unit::kExperts, capacity}, std::vector<uint64_t>{1000});
  cc.next_use_available = true;
  freq = key_frequencies(s.key, cc.keys());
  cc.key_frequency = freq;
  return cc;
}

// Sums the bytes of every pool from the events.
struct Ledger final : MemoryListener {
  std::map<uint32_t, int64_t> bytes;
  std::map<std::pair<uint32_t, uint32_t>, int> held;  // (pool, key) -> 1 while held
  void memory_event(const MemoryEvent& e) override {
    bytes[e.pool] += e.adds() ? static_cast<int64_t>(e.bytes) : -static_cast<int64_t>(e.bytes);
    held[{e.pool, e.key}] += e.adds() ? 1 : -1;
  }
};

void drive(Residency& r, const Stream& s) {
  for (size_t i = 0; i + 1 < s.inv_begin.size(); ++i) {
    r.begin_invocation(s.layer[i], s.phase[i] == 1);
    for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j) r.lookup(s.key[j], s.next_use[j], 1);
    for (uint32_t q = s.refresh_begin[i]; q < s.refresh_begin[i + 1]; ++q) r.refresh(s.key[s.refresh[q]]);
    r.end_invocation(s.inv_begin[i + 1] - s.inv_begin[i]);
  }
}

TEST(ClassicResidency, SinglePoolCountersEqualTheReplayFastPathForEveryPolicy) {
  const Stream s(11);
  for (const auto& entry : EvictionRegistry::instance().entries()) {
    std::vector<uint64_t> freq;
    const CacheConfig cc = config(s, 3, freq);
    auto fast = make_eviction_policy(entry.name, cc);
    const CacheCounters expected = fast->replay(s.view());
    auto r =
        serving::make_classic_residency(PolicySpec::parse(entry.name), cc, MemoryTier::kUnified, nullptr);
    Ledger ledger;
    r->set_listener(&ledger);
    drive(*r, s);
    EXPECT_EQ(r->counters(), expected) << entry.name;
    // The events add up to the resident experts.
    int64_t resident = 0;
    for (uint32_t k = 0; k < cc.keys(); ++k) {
      const bool in = r->peek(k).state == ExpertState::kFull;
      resident += in ? 1000 : 0;
      EXPECT_EQ((ledger.held[{0u, k}]), in ? 1 : 0) << entry.name << " key " << k;
    }
    EXPECT_EQ(ledger.bytes[0], resident) << entry.name;
    EXPECT_LE(resident, 3 * kLayers * 1000) << entry.name;
  }
}

TEST(ClassicResidency, PrefetchAdmitsWithinCapacityForEveryPolicy) {
  const Stream s(5, 400);
  for (const auto& entry : EvictionRegistry::instance().entries()) {
    std::vector<uint64_t> freq;
    const CacheConfig cc = config(s, 3, freq);
    auto r =
        serving::make_classic_residency(PolicySpec::parse(entry.name), cc, MemoryTier::kUnified, nullptr);
    Ledger ledger;
    r->set_listener(&ledger);
    const CacheCounters before = r->counters();
    // Between invocations, prefetch keys of the next layer; a prefetch is no lookup.
    for (size_t i = 0; i + 1 < s.inv_begin.size(); ++i) {
      r->begin_invocation(s.layer[i], true);
      for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j) r->lookup(s.key[j], s.next_use[j], 1);
      r->end_invocation(s.inv_begin[i + 1] - s.inv_begin[i]);
      const uint32_t next = (s.layer[i] + 1) % kLayers;
      ExpertState target = ExpertState::kMissed;
      const uint32_t k = next * kExperts + static_cast<uint32_t>(i % kExperts);
      const ExpertState from = r->prefetch(next, k, kNeverUsedAgain, &target);
      if (from == ExpertState::kMissed) {
        EXPECT_EQ(target, r->peek(k).state) << entry.name;
      } else {
        EXPECT_EQ(from, ExpertState::kFull);
      }
      ASSERT_LE(ledger.bytes[0], static_cast<int64_t>(cc.total_capacity_bytes())) << entry.name;
    }
    EXPECT_EQ(r->counters().lookups - before.lookups, s.key.size()) << entry.name;
  }
}

TEST(ClassicResidency, TwoTiersServeDeviceMissesFromHostMemory) {
  const Stream s(3);
  std::vector<uint64_t> freq;
  const CacheConfig device = config(s, 3, freq);  // 12 experts in VRAM
  CacheConfig host = config(s, 8, freq);          // 32 in DRAM
  auto r = serving::make_classic_residency(PolicySpec::parse("lru"), device, MemoryTier::kDevice, &host);
  ASSERT_EQ(r->pools().size(), 2u);
  EXPECT_EQ(r->pools()[0].tier, MemoryTier::kDevice);
  EXPECT_EQ(r->pools()[1].tier, MemoryTier::kHost);
  Ledger ledger;
  r->set_listener(&ledger);
  std::set<uint32_t> seen;
  uint64_t host_hits = 0, misses = 0;
  for (size_t i = 0; i + 1 < s.inv_begin.size(); ++i) {
    r->begin_invocation(s.layer[i], true);
    for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j) {
      const LookupResult found = r->lookup(s.key[j], s.next_use[j], 1);
      if (found.state == ExpertState::kFull && found.tier == MemoryTier::kHost) {
        ++host_hits;
        EXPECT_TRUE(seen.count(s.key[j])) << "a host hit on an expert never read";
      }
      if (found.state == ExpertState::kMissed) ++misses;
      seen.insert(s.key[j]);
    }
    r->end_invocation(s.inv_begin[i + 1] - s.inv_begin[i]);
    ASSERT_LE(ledger.bytes[0], 12 * 1000);
    ASSERT_LE(ledger.bytes[1], 32 * 1000);
    // Filled inclusively: an expert just read from the SSD is in both tiers.
    for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j)
      ASSERT_EQ((ledger.held[{0u, s.key[j]}]), 1);
  }
  EXPECT_GT(host_hits, 0u);
  // The device tier alone would have missed host_hits more times.
  auto single =
      serving::make_classic_residency(PolicySpec::parse("lru"), device, MemoryTier::kDevice, nullptr);
  drive(*single, s);
  EXPECT_EQ(single->counters().lookups - single->counters().hits, misses + host_hits);
}

TEST(ClassicResidency, TwoTiersRefreshTheTiersThatLookedTheKeyUp) {
  // The device tier sees every lookup and refresh; the host tier only the device's misses and their
  // refreshes. Reference: two plain caches driven that way. (Refreshing a key the host never looked up
  // would corrupt its LRU list.)
  const Stream s(17);
  ASSERT_GT(s.refresh.size(), 100u);
  std::vector<uint64_t> freq;
  const CacheConfig device = config(s, 3, freq);
  CacheConfig host = config(s, 6, freq);
  auto r = serving::make_classic_residency(PolicySpec::parse("lru"), device, MemoryTier::kDevice, &host);
  ExpertCache dev_ref("lru", device), host_ref("lru", host);
  uint64_t host_hits = 0, ref_host_hits = 0;
  for (size_t i = 0; i + 1 < s.inv_begin.size(); ++i) {
    r->begin_invocation(s.layer[i], true);
    dev_ref.begin_invocation(s.layer[i], true);
    host_ref.begin_invocation(s.layer[i], true);
    std::set<uint32_t> via_host;
    for (uint32_t j = s.inv_begin[i]; j < s.inv_begin[i + 1]; ++j) {
      const LookupResult found = r->lookup(s.key[j], s.next_use[j], 1);
      host_hits += found.state == ExpertState::kFull && found.tier == MemoryTier::kHost;
      if (!dev_ref.lookup(s.key[j], s.next_use[j])) {
        via_host.insert(s.key[j]);
        ref_host_hits += host_ref.lookup(s.key[j], s.next_use[j]);
      }
    }
    for (uint32_t q = s.refresh_begin[i]; q < s.refresh_begin[i + 1]; ++q) {
      const uint32_t k = s.key[s.refresh[q]];
      r->refresh(k);
      dev_ref.refresh(k);
      if (via_host.count(k)) host_ref.refresh(k);
    }
    const auto n = static_cast<uint32_t>(s.inv_begin[i + 1] - s.inv_begin[i]);
    r->end_invocation(n);
    dev_ref.end_invocation(n);
    host_ref.end_invocation(static_cast<uint32_t>(via_host.size()));
  }
  EXPECT_EQ(r->counters(), dev_ref.counters());
  EXPECT_EQ(host_hits, ref_host_hits);
  EXPECT_GT(host_hits, 0u);
}

}  // namespace
}  // namespace moesim
