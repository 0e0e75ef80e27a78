// The replay fast path: properties on the real traces, lookup semantics on hand-built traces, thread
// and seed determinism, and bad configurations. Golden tables: replay_golden_test.cpp.
#include <algorithm>
#include <list>
#include <map>
#include <set>

#include "base/rng.h"
#include "tests/replay/replay_test_util.h"

namespace moesim::testing {
namespace {

uint64_t misses(const replay::ReplayResult& r) {
  return r.counters.lookups - r.counters.hits;
}

TEST(Replay, BeladyNeverMissesMoreThanOnlinePolicies) {
  for (const auto& t : real_traces())
    for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
      for (uint64_t cap : {8, 16, 32, 64, 96}) {
        const uint64_t opt = misses(replay::replay(*t->input, experts_config("belady", scope, cap)));
        for (const char* p : {"lru", "lfu", "fifo", "marking", "random", "marking:seed=9", "random:seed=9"}) {
          const uint64_t m = misses(replay::replay(*t->input, experts_config(p, scope, cap)));
          EXPECT_LE(opt, m) << t->name << " " << p << " " << scope_name(scope) << " capacity " << cap;
        }
      }
}

TEST(Replay, HitRateIsMonotoneInCapacityForLruAndBelady) {
  for (const auto& t : real_traces())
    for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
      for (const char* p : {"lru", "belady"}) {
        uint64_t prev_hits = 0;
        for (uint64_t cap = 6; cap <= 128; cap += 2) {
          const uint64_t hits = replay::replay(*t->input, experts_config(p, scope, cap)).counters.hits;
          EXPECT_GE(hits, prev_hits) << t->name << " " << p << " " << scope_name(scope) << " capacity "
                                     << cap;
          prev_hits = hits;
        }
      }
}

TEST(Replay, FullCapacityMissesOnlyColdKeys) {
  for (const auto& t : real_traces()) {
    std::set<uint32_t> distinct(t->stream.key.begin(), t->stream.key.end());
    for (const char* p : {"lru", "lfu", "fifo", "random", "marking", "belady", "static-freq"}) {
      const auto r = replay::replay(*t->input, experts_config(p, CacheScope::kPerLayer, t->stream.experts));
      EXPECT_EQ(misses(r), distinct.size()) << t->name << " " << p;
      EXPECT_EQ(r.counters.evictions, 0u);
    }
  }
}

TEST(Replay, SweepResultsDoNotDependOnThreadsOrRuns) {
  const auto& in = *real_traces()[2]->input;
  std::vector<replay::ReplayConfig> cfgs;
  for (const char* p : {"lru", "lfu", "fifo", "random:seed=3", "marking:seed=5", "belady", "static-freq"})
    for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
      for (uint64_t cap : {8, 24, 48}) cfgs.push_back(experts_config(p, scope, cap));
  const auto one = replay::replay_sweep(in, cfgs, 1);
  const auto four = replay::replay_sweep(in, cfgs, 4);
  const auto again = replay::replay_sweep(in, cfgs, 4);
  ASSERT_EQ(one.size(), cfgs.size());
  for (size_t i = 0; i < cfgs.size(); ++i) {
    EXPECT_EQ(one[i].counters, four[i].counters) << one[i].policy;
    EXPECT_EQ(four[i].counters, again[i].counters) << one[i].policy;
    EXPECT_EQ(one[i].policy, four[i].policy);
  }
}

TEST(Replay, SeedsChangeRandomizedPolicies) {
  const auto& in = *real_traces()[2]->input;
  for (const char* p : {"random", "marking"}) {
    std::set<uint64_t> hits;
    for (int seed = 1; seed <= 4; ++seed)
      hits.insert(replay::replay(in, experts_config(std::string(p) + ":seed=" + std::to_string(seed),
                                                    CacheScope::kPerLayer, 32))
                      .counters.hits);
    EXPECT_GT(hits.size(), 1u) << p << ": four seeds gave the same hit count";
  }
}

TEST(Replay, ResultNamesPolicyWithAllParameters) {
  const auto r = replay::replay(*real_traces()[1]->input, experts_config("marking", CacheScope::kGlobal, 16));
  EXPECT_EQ(r.policy, "marking:seed=1");
  EXPECT_EQ(r.capacity_experts, 16u * 36);
  EXPECT_GT(r.lookups_per_s, 0);
  const Json j = replay::to_json(r);
  EXPECT_EQ(j["eviction"], "marking:seed=1");
  EXPECT_FALSE(j.contains("policy"));
  EXPECT_EQ(j["scope"], "global");
  EXPECT_DOUBLE_EQ(j["hit_rate"].get<double>(),
                   static_cast<double>(r.counters.hits) / static_cast<double>(r.counters.lookups));
  EXPECT_EQ(j["lookups"], r.counters.lookups);
}

// ---- lookup semantics on a hand-built trace
// ----------------------------------------------------------------

traces::Trace tiny_trace() {
  traces::TraceInfo info;
  info.model = "tiny";
  info.layers = 2;
  info.experts = 8;
  info.top_k = 2;
  info.expert_bytes = {1000, 1000};
  traces::TraceBuilder b(info, false, false, "tiny");
  auto add = [&](traces::Phase ph, uint32_t step, uint32_t layer, std::vector<uint32_t> e) {
    b.add(0, ph, step, layer, e, {}, {}, 0);
  };
  // Prefill of 3 tokens: layer 0 uses {0,1}, {1,2}, {0,2} -> ONE invocation with 3 unique experts.
  add(traces::Phase::kPrefill, 0, 0, {0, 1});
  add(traces::Phase::kPrefill, 1, 0, {1, 2});
  add(traces::Phase::kPrefill, 2, 0, {0, 2});
  add(traces::Phase::kPrefill, 0, 1, {4, 5});
  add(traces::Phase::kPrefill, 1, 1, {4, 5});
  add(traces::Phase::kPrefill, 2, 1, {5, 4});
  // Two decode tokens.
  add(traces::Phase::kDecode, 0, 0, {2, 3});
  add(traces::Phase::kDecode, 0, 1, {4, 6});
  add(traces::Phase::kDecode, 1, 0, {0, 3});
  add(traces::Phase::kDecode, 1, 1, {6, 7});
  return std::move(b).finish();
}

TEST(ReplaySemantics, DuplicateExpertsOfAPrefillInvocationCountOnce) {
  const traces::Trace t = tiny_trace();
  const traces::LookupStream s = traces::build_lookup_stream(t);
  ASSERT_EQ(s.invocations(), 6u);
  const replay::ReplayInput in(s, 2, t.info().expert_bytes);
  // capacity 8 per layer: only cold misses. Lookups: prefill 3 + 2, decode 2+2+2+2.
  const auto r = replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 8));
  EXPECT_EQ(r.counters.lookups, 13u);
  EXPECT_EQ(r.counters.decode_lookups, 8u);
  // Cold keys: layer 0 {0,1,2,3}, layer 1 {4,5,6,7} -> 8 misses, 5 hits (2, 4 in decode 0; 0, 3, 6 in decode
  // 1).
  EXPECT_EQ(r.counters.hits, 5u);
  EXPECT_EQ(r.counters.decode_hits, 5u);
  EXPECT_EQ(r.counters.read_bytes, 8u * 1000);
}

TEST(ReplaySemantics, PrefillOverCapacityIsReportedAndPassesThrough) {
  const traces::Trace t = tiny_trace();
  const traces::LookupStream s = traces::build_lookup_stream(t);
  const replay::ReplayInput in(s, 2, t.info().expert_bytes);
  // capacity 2 per layer: layer 0's prefill needs 3 experts -> degenerate, counted; the cache ends at 2.
  for (const char* p : {"lru", "lfu", "fifo", "random", "marking", "belady", "static-freq"}) {
    const auto r = replay::replay(in, experts_config(p, CacheScope::kPerLayer, 2));
    EXPECT_EQ(r.counters.over_capacity_invocations, 1u) << p;
    EXPECT_EQ(r.counters.max_over_capacity, 1u) << p;
  }
  // LRU by hand: prefill L0 touches 0 1 1 2 0 2: lookups {0,1,2}, recency (oldest first) 1, 0, 2 after the
  // refreshes; the pass-through trims 1 -> {0,2}. L1 touches 4 5 4 5 5 4 -> {5,4}. decode0 L0 {2 H, 3 M}
  // -> evict 0 -> {2,3}; L1 {4 H, 6 M} -> evict 5. decode1 L0 {0 M, 3 H} -> evict 2; L1 {6 H, 7 M} ->
  // evict 4.  Hits: 2, 4, 3, 6.
  const auto lru = replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 2));
  EXPECT_EQ(lru.counters.hits, 4u);
}

// One layer, 5 experts, top-2: a prefill pass of two tokens {0,1} {2,0} (touches 0, 1, 2, then 0 again),
// then decode tokens {3,4} and {0,3}.
traces::Trace refresh_trace() {
  traces::TraceInfo info;
  info.model = "refresh";
  info.layers = 1;
  info.experts = 5;
  info.top_k = 2;
  traces::TraceBuilder b(info, false, false, "refresh");
  b.add(0, traces::Phase::kPrefill, 0, 0, std::vector<uint32_t>{0, 1}, {}, {}, 1);
  b.add(0, traces::Phase::kPrefill, 1, 0, std::vector<uint32_t>{2, 0}, {}, {}, 2);
  b.add(0, traces::Phase::kDecode, 0, 0, std::vector<uint32_t>{3, 4}, {}, {}, 3);
  b.add(0, traces::Phase::kDecode, 1, 0, std::vector<uint32_t>{0, 3}, {}, {}, 4);
  return std::move(b).finish();
}

TEST(ReplaySemantics, ADuplicateTouchRefreshesForEveryPolicy) {
  // Capacity 3. The prefill looks up 0, 1, 2 (3 misses) and touches 0 again last: 0 is the most recent.
  // Decode {3,4} misses both and must evict two of {0,1,2}; decode {0,3} then hits 3, and 0 if it stayed.
  //   lru            evicts 1, 2 (0 was refreshed)                       -> decode hits 2
  //   lfu            all count 1; 1, 2 the least recent of the count     -> 2
  //   lfu:history=1  the same counts                                      -> 2
  //   fifo           evicts 0, 1 (admission order; a refresh is no admission) -> 1
  //   belady         evicts 2, 1 (never used again)                      -> 2
  //   static-freq    pins 0, 3, 1 (counts 2, 2, 1; ties by id): evicts 2, then 4 passes through -> 2
  // Before refreshes existed LRU and LFU evicted 0 and 1 and hit once.
  const traces::Trace t = refresh_trace();
  const traces::LookupStream s = traces::build_lookup_stream(t);
  ASSERT_EQ(s.refreshes(), 1u);
  const replay::ReplayInput in(s, 2, {});
  const std::vector<std::pair<const char*, uint64_t>> want = {
      {"lru", 2}, {"lfu", 2}, {"lfu:history=1", 2}, {"fifo", 1}, {"belady", 2}, {"static-freq", 2}};
  for (const auto& [p, hits] : want) {
    const auto r = replay::replay(in, experts_config(p, CacheScope::kPerLayer, 3));
    EXPECT_EQ(r.counters.lookups, 7u) << p;
    EXPECT_EQ(r.counters.hits, hits) << p;
    EXPECT_EQ(r.counters.decode_hits, hits) << p;
    EXPECT_EQ(r.counters.evictions, p == std::string("static-freq") ? 2u : 2u + (hits == 1 ? 1u : 0u)) << p;
  }
}

// LRU applying every touch of the trace's records in order (a duplicate touch of an invocation moves its
// key to the front without a lookup), written from the records without the lookup stream: the reference
// the refreshes must reproduce. Batch 1.
struct TouchCounts {
  uint64_t lookups = 0, hits = 0, decode_hits = 0, evictions = 0;
};
TouchCounts per_touch_lru(const traces::Trace& t, CacheScope scope, uint64_t per_layer) {
  const auto& info = t.info();
  const uint32_t parts = scope == CacheScope::kGlobal ? 1 : info.layers;
  const uint64_t cap = scope == CacheScope::kGlobal ? per_layer * info.layers : per_layer;
  std::vector<std::list<uint32_t>> lists(parts);
  std::map<uint32_t, std::list<uint32_t>::iterator> where;
  TouchCounts c;
  for (size_t r = 0; r < t.records();) {
    // One invocation: a prefill pass of one layer (consecutive records), or one decode record.
    size_t end = r + 1;
    if (t.phase(r) == traces::Phase::kPrefill)
      while (end < t.records() && t.seq(end) == t.seq(r) && t.phase(end) == traces::Phase::kPrefill &&
             t.layer(end) == t.layer(r))
        ++end;
    const uint32_t layer = t.layer(r);
    auto& list = lists[scope == CacheScope::kGlobal ? 0 : layer];
    std::set<uint32_t> in_use;
    for (size_t q = r; q < end; ++q)
      for (uint16_t e : t.experts(q)) {
        const uint32_t key = layer * info.experts + e;
        const bool first = in_use.insert(key).second;
        const auto it = where.find(key);
        if (first) {
          ++c.lookups;
          if (it != where.end()) {
            ++c.hits;
            if (t.phase(r) == traces::Phase::kDecode) ++c.decode_hits;
          }
        }
        if (it != where.end()) list.erase(it->second);
        list.push_front(key);
        where[key] = list.begin();
      }
    auto evict = [&](bool spare_in_use) {
      for (auto it = list.end(); it != list.begin();) {
        --it;
        if (spare_in_use && in_use.count(*it)) continue;
        where.erase(*it);
        list.erase(it);
        ++c.evictions;
        return true;
      }
      return false;
    };
    while (list.size() > cap && evict(true)) {
    }
    while (list.size() > cap) evict(false);
    r = end;
  }
  return c;
}

TEST(ReplaySemantics, LruEqualsAReferenceApplyingEveryTouch) {
  for (const auto& t : real_traces())
    for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
      for (uint64_t cap : {8, 16, 32, 64}) {
        const TouchCounts want = per_touch_lru(t->trace, scope, cap);
        const auto got = replay::replay(*t->input, experts_config("lru", scope, cap)).counters;
        EXPECT_EQ(got.lookups, want.lookups) << t->name;
        EXPECT_EQ(got.hits, want.hits) << t->name << " " << scope_name(scope) << " " << cap;
        EXPECT_EQ(got.decode_hits, want.decode_hits) << t->name << " " << scope_name(scope) << " " << cap;
        EXPECT_EQ(got.evictions, want.evictions) << t->name << " " << scope_name(scope) << " " << cap;
      }
}

TEST(ReplaySemantics, EvictionNeverEvictsAKeyOfTheCurrentInvocation) {
  // Random invocations of at most `cap` keys over 2 layers; after each, all its keys must be resident.
  // static-freq and tinylfu are left out: static-freq's unpinned keys pass through by design once the pinned
  // ones fill the cache, and TinyLFU's admission drops a new key that loses its frequency comparison once its
  // invocation ends (tests/policies/static_freq_test.cpp and tests/policies/tinylfu_test.cpp check those by
  // hand).
  for (const auto& e : EvictionRegistry::instance().entries())
    for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal}) {
      if (e.name == "static-freq" || e.name == "tinylfu") continue;
      const uint32_t experts = 16, layers = 2, cap = 4;
      Rng rng(42);
      std::vector<std::vector<uint32_t>> invs;
      std::vector<uint16_t> layer_of;
      for (int i = 0; i < 3000; ++i) {
        const uint32_t l = static_cast<uint32_t>(rng.below(layers));
        const uint32_t n = 1 + static_cast<uint32_t>(rng.below(cap));
        std::vector<uint32_t> keys;
        while (keys.size() < n) {
          const uint32_t k =
              l * experts + static_cast<uint32_t>(rng.below(experts / 2) * (rng.below(3) ? 1 : 2));
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
        }
        invs.push_back(keys);
        layer_of.push_back(static_cast<uint16_t>(l));
      }
      std::vector<uint32_t> flat;
      for (const auto& v : invs) flat.insert(flat.end(), v.begin(), v.end());
      const auto freq = key_frequencies(flat, layers * experts);
      CacheConfig cfg =
          make_cache_config(layers, experts, 1, scope, {CacheCapacity::Unit::kExperts, cap}, {});
      cfg.next_use_available = true;
      cfg.key_frequency = freq;
      ExpertCache cache(e.name, cfg);
      // next uses, by a backward scan
      std::vector<uint32_t> next_use(flat.size()), next(layers * experts, kNeverUsedAgain);
      std::vector<size_t> begin{0};
      for (const auto& v : invs) begin.push_back(begin.back() + v.size());
      for (size_t j = invs.size(); j-- > 0;)
        for (size_t i = begin[j]; i < begin[j + 1]; ++i) {
          next_use[i] = next[flat[i]];
          next[flat[i]] = static_cast<uint32_t>(j);
        }
      for (size_t j = 0; j < invs.size(); ++j) {
        cache.begin_invocation(layer_of[j], true);
        for (size_t i = begin[j]; i < begin[j + 1]; ++i) cache.lookup(flat[i], next_use[i]);
        std::vector<uint32_t> evicted;
        cache.end_invocation(static_cast<uint32_t>(invs[j].size()), &evicted);
        for (uint32_t k : invs[j]) {
          ASSERT_TRUE(cache.resident(k)) << e.name << " " << scope_name(scope) << ": evicted key " << k
                                         << " of the current invocation " << j;
          ASSERT_TRUE(std::find(evicted.begin(), evicted.end(), k) == evicted.end());
        }
      }
      EXPECT_EQ(cache.counters().over_capacity_invocations, 0u);
    }
}

// ---- bad configurations -----------------------------------------------------------------------------------

TEST(ReplayErrors, CapacityZeroOrBelowTopKOrOneExpert) {
  const auto& in = *real_traces()[2]->input;  // qwen3: top-6, 3059712-byte experts, 48 layers
  EXPECT_THROW(replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 0)), Error);
  EXPECT_THROW(replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 5)), Error);
  EXPECT_NO_THROW(replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 6)));
  EXPECT_THROW(replay::replay(in, {"lru", CacheScope::kGlobal, CacheCapacity::parse("1MiB")}), Error);
  EXPECT_THROW(replay::replay(in, {"lru", CacheScope::kPerLayer, CacheCapacity::parse("100MiB")}),
               Error);  // 2 MiB/layer
  try {
    replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 3));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("top-k"), std::string::npos) << e.what();
  }
}

TEST(ReplayErrors, BytesNeedExpertSizes) {
  const traces::Trace t = tiny_trace();
  const traces::LookupStream s = traces::build_lookup_stream(t);
  const replay::ReplayInput in(s, 2, {});
  EXPECT_THROW(replay::replay(in, {"lru", CacheScope::kPerLayer, CacheCapacity::parse("8KiB")}), Error);
  const auto r = replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 4));
  EXPECT_EQ(r.capacity_bytes, 0u);
  EXPECT_TRUE(replay::to_json(r)["read_bytes"].is_null());
}

TEST(ReplayErrors, UnknownPolicyOrParameterListsTheKnownOnes) {
  const auto& in = *real_traces()[1]->input;
  try {
    replay::replay(in, experts_config("lruu", CacheScope::kPerLayer, 8));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("belady"), std::string::npos) << e.what();
  }
  try {
    replay::replay(in, experts_config("random:sed=3", CacheScope::kPerLayer, 8));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(replay::replay_sweep(in,
                                    {experts_config("lru", CacheScope::kPerLayer, 8),
                                     experts_config("random:seed=x", CacheScope::kPerLayer, 8)},
                                    4),
               Error);
}

TEST(ReplayErrors, CapacityParsing) {
  EXPECT_EQ(CacheCapacity::parse("32").unit, CacheCapacity::Unit::kExperts);
  EXPECT_EQ(CacheCapacity::parse("3000MiB").value, 3000ull << 20);
  EXPECT_THROW(CacheCapacity::parse("12.5"), Error);
  EXPECT_THROW(CacheCapacity::parse(""), Error);
  EXPECT_THROW(CacheCapacity::parse("-3"), Error);
  EXPECT_THROW(CacheCapacity::parse("3 parsecs"), Error);
}

// Relative budgets: a share of the model's experts (in bytes when their sizes are known, else per layer) and
// a multiple of top-k, each resolved against the model's shape, rounded down.
TEST(ReplayCapacity, RelativeBudgetsResolveAgainstTheModel) {
  const CacheCapacity share = CacheCapacity::parse("12.5%");
  EXPECT_EQ(share.unit, CacheCapacity::Unit::kShareOfExperts);
  EXPECT_EQ(share.value, 125'000u);
  EXPECT_EQ(share.to_string(), "12.5% of the experts");
  // 48 x 128 experts of 3 MB: 12.5% of 18,432 MB is 2,304 MB; without sizes, 16 of 128 experts per layer.
  const CacheCapacity bytes = share.resolved(48, 128, 8, 48ull * 128 * 3'000'000);
  EXPECT_EQ(bytes.unit, CacheCapacity::Unit::kBytes);
  EXPECT_EQ(bytes.value, 2'304'000'000u);
  const CacheCapacity count = share.resolved(48, 128, 8, 0);
  EXPECT_EQ(count.unit, CacheCapacity::Unit::kExperts);
  EXPECT_EQ(count.value, 16u);
  // Petabytes of experts at 100% do not overflow.
  EXPECT_EQ(CacheCapacity::parse("100%").resolved(1, 1, 1, 1ull << 53).value, 1ull << 53);

  for (const char* text : {"2xtopk", "2x top-k", "2X-TOP-K", "2*topk"}) {
    const CacheCapacity m = CacheCapacity::parse(text);
    EXPECT_EQ(m.unit, CacheCapacity::Unit::kTopKMultiple) << text;
    EXPECT_EQ(m.resolved(48, 128, 6, 0).value, 12u) << text;
  }
  EXPECT_EQ(CacheCapacity::parse("1.5xtopk").resolved(2, 64, 3, 0).value, 4u);  // floor(4.5)
  EXPECT_EQ(CacheCapacity::parse("32").resolved(2, 64, 3, 0).value, 32u);       // absolute: unchanged
  for (const char* bad : {"0%", "101%", "%", "1.2.3%", "x%", "0xtopk", "xtopk", "-2xtopk", "1.0000001%"})
    EXPECT_THROW(CacheCapacity::parse(bad), Error) << bad;
  EXPECT_THROW(CacheCapacity::parse("0.1xtopk").resolved(2, 64, 6, 0), Error);  // below one expert
  EXPECT_THROW(CacheCapacity::parse("0.5%").resolved(2, 64, 6, 0), Error);      // 0.32 experts per layer
}

// make_cache_config resolves a relative capacity itself, so a replay of one behaves as its absolute value.
TEST(ReplayCapacity, ARelativeCapacityReplaysAsItsResolvedValue) {
  const traces::Trace t = tiny_trace();  // 2 layers x 8 experts of 1000 bytes, top-2
  const traces::LookupStream s = traces::build_lookup_stream(t);
  const replay::ReplayInput in(s, 2, t.info().expert_bytes);
  const auto rel = replay::replay(in, {"lru", CacheScope::kPerLayer, CacheCapacity::parse("50%")});
  const auto abs = replay::replay(in, {"lru", CacheScope::kPerLayer, {CacheCapacity::Unit::kBytes, 8000}});
  EXPECT_EQ(rel.capacity.unit, CacheCapacity::Unit::kBytes);
  EXPECT_EQ(rel.capacity.value, 8000u);
  EXPECT_EQ(rel.counters.hits, abs.counters.hits);
  EXPECT_EQ(rel.capacity_experts, 8u);
}

TEST(ReplayCapacity, BytesWithUniformExpertSizesEqualExpertCounts) {
  const traces::Trace t = tiny_trace();  // 2 layers x 8 experts of 1000 bytes
  const traces::LookupStream s = traces::build_lookup_stream(t);
  const replay::ReplayInput in(s, 2, t.info().expert_bytes);
  // Per layer: 6999 bytes / 2 layers = 3499 bytes per layer -> 3 experts per layer.
  auto r = replay::replay(in, {"lru", CacheScope::kPerLayer, {CacheCapacity::Unit::kBytes, 6999}});
  EXPECT_EQ(r.capacity_experts, 6u);
  EXPECT_EQ(r.capacity_bytes, 6000u);
  EXPECT_EQ(r.counters, replay::replay(in, experts_config("lru", CacheScope::kPerLayer, 3)).counters);
  // Global: 6999 bytes -> one cache of 6 experts = 3 per layer x 2 layers.
  r = replay::replay(in, {"belady", CacheScope::kGlobal, {CacheCapacity::Unit::kBytes, 6999}});
  EXPECT_EQ(r.capacity_experts, 6u);
  EXPECT_EQ(r.counters, replay::replay(in, experts_config("belady", CacheScope::kGlobal, 3)).counters);
}

TEST(ReplayCapacity, BytesWithMixedExpertSizes) {
  // qwen3's route trace: 24 layers of 3059712-byte experts and 24 of 2654208-byte experts.
  const auto& t = *real_traces()[2];
  const auto& eb = t.trace.info().expert_bytes;
  ASSERT_EQ(eb.size(), 48u);
  const uint64_t budget = 48ull * 32 * 3059712;
  // Per layer: budget / 48 bytes each, rounded down to whole experts of that layer.
  uint64_t want_experts = 0;
  for (uint64_t b : eb) want_experts += (budget / 48) / b;
  auto r = replay::replay(*t.input, {"lru", CacheScope::kPerLayer, {CacheCapacity::Unit::kBytes, budget}});
  EXPECT_EQ(r.capacity_experts, want_experts);
  EXPECT_LE(r.capacity_bytes, budget);
  // Global: keys weigh their bytes; the cache never holds more than the budget, so it holds fewer experts
  // than 48 x 32 of the small size would allow and more than 48 x 32 of the large size.
  r = replay::replay(*t.input, {"lru", CacheScope::kGlobal, {CacheCapacity::Unit::kBytes, budget}});
  EXPECT_EQ(r.capacity_bytes, budget);
  const auto small = replay::replay(*t.input, experts_config("lru", CacheScope::kGlobal, 32));
  EXPECT_GE(r.counters.hits, small.counters.hits);  // room for at least 48 x 32 experts of any size
  EXPECT_EQ(r.counters.lookups, small.counters.lookups);
}

TEST(ReplayCapacity, ConfigEdgeCases) {
  const std::vector<uint64_t> two{1000, 2000};
  // Experts per layer: global scope holds N x layers experts.
  auto c = make_cache_config(2, 8, 2, CacheScope::kGlobal, {CacheCapacity::Unit::kExperts, 3}, two);
  EXPECT_EQ(c.capacity, (std::vector<uint64_t>{6}));
  EXPECT_EQ(c.total_capacity_bytes(), 0u);  // 6 experts of mixed sizes: no fixed byte size
  c = make_cache_config(2, 8, 2, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 3}, two);
  EXPECT_EQ(c.capacity, (std::vector<uint64_t>{3, 3}));
  EXPECT_EQ(c.total_capacity_bytes(), 3u * 1000 + 3u * 2000);
  // Global bytes with mixed sizes: keys weigh their bytes.
  c = make_cache_config(2, 8, 2, CacheScope::kGlobal, {CacheCapacity::Unit::kBytes, 10000}, two);
  EXPECT_TRUE(c.weights_are_bytes);
  EXPECT_EQ(c.key_weight[8], 2000u);
  EXPECT_EQ(c.total_capacity_bytes(), 10000u);
  // One size for all layers is broadcast; a wrong number of sizes or a zero size is an error.
  EXPECT_NO_THROW(make_cache_config(3, 8, 2, CacheScope::kPerLayer, {CacheCapacity::Unit::kBytes, 30000},
                                    std::vector<uint64_t>{1000}));
  EXPECT_THROW(make_cache_config(3, 8, 2, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 4}, two),
               Error);
  EXPECT_THROW(make_cache_config(2, 8, 2, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 4},
                                 std::vector<uint64_t>{1000, 0}),
               Error);
  EXPECT_THROW(make_cache_config(0, 8, 2, CacheScope::kPerLayer, {CacheCapacity::Unit::kExperts, 4}, {}),
               Error);
  // Global bytes below top-k of the largest experts.
  EXPECT_THROW(make_cache_config(2, 8, 2, CacheScope::kGlobal, {CacheCapacity::Unit::kBytes, 3999}, two),
               Error);
  EXPECT_EQ(CacheCapacity::parse("32").to_string(), "32 experts/layer");
  EXPECT_EQ(parse_scope("per-layer"), CacheScope::kPerLayer);
}

}  // namespace
}  // namespace moesim::testing
