// core/invocation_walker.h: the order of a walk (begin, each unique lookup, the refreshes, end), which
// refreshes survive a routing rewrite, and that the caller sees each result before the next lookup.
#include "core/invocation_walker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moesim {
namespace {

// Records every call; hits are the keys in `resident`; end_invocation reports `evict_on_end` as evicted.
struct RecordingCache {
  std::vector<std::string> calls;
  std::vector<uint32_t> resident;
  std::vector<uint32_t> evict_on_end;
  void begin_invocation(uint32_t layer, bool decode) {
    calls.push_back("begin " + std::to_string(layer) + (decode ? " decode" : " prefill"));
  }
  bool lookup(uint32_t key, uint32_t next_use) {
    calls.push_back("lookup " + std::to_string(key) + " next " + std::to_string(next_use));
    for (uint32_t k : resident)
      if (k == key) return true;
    return false;
  }
  void refresh(uint32_t key) { calls.push_back("refresh " + std::to_string(key)); }
  void end_invocation(uint32_t lookups, std::vector<uint32_t>* evicted) {
    calls.push_back("end " + std::to_string(lookups));
    if (evicted) evicted->insert(evicted->end(), evict_on_end.begin(), evict_on_end.end());
  }
};

// A cache with the Residency-style signatures: the token count on lookup, no eviction list.
struct TokenCache {
  std::vector<std::string> calls;
  void begin_invocation(uint32_t, bool) { calls.push_back("begin"); }
  int lookup(uint32_t key, uint32_t, uint32_t tokens) {
    calls.push_back("lookup " + std::to_string(key) + " tokens " + std::to_string(tokens));
    return static_cast<int>(tokens);
  }
  void refresh(uint32_t key) { calls.push_back("refresh " + std::to_string(key)); }
  void end_invocation(uint32_t lookups) { calls.push_back("end " + std::to_string(lookups)); }
};

struct Demand {
  uint16_t expert = 0;
  uint32_t tokens = 0;
  uint32_t next_use = 0;
};

// Two invocations of a 2-layer, 4-expert stream. Invocation 1 (layer 1, decode) looks up keys 5, 6, 7 and
// refreshes its lookups 4 and 3 (keys 6 and 5, in that order).
struct Stream {
  std::vector<uint32_t> inv_begin{0, 2, 5};
  std::vector<uint16_t> inv_layer{0, 1};
  std::vector<uint8_t> inv_phase{0, 1};
  std::vector<uint32_t> key{0, 1, 5, 6, 7};
  std::vector<uint32_t> next_use{1, 9, 8, 7, 6};
  std::vector<uint32_t> refresh_begin{0, 0, 2};
  std::vector<uint32_t> refresh{3, 2};
  LookupView view(bool with_next_use = true) const {
    LookupView v;
    v.inv_begin = inv_begin;
    v.inv_layer = inv_layer;
    v.inv_phase = inv_phase;
    v.key = key;
    if (with_next_use) v.next_use = next_use;
    v.refresh_begin = refresh_begin;
    v.refresh = refresh;
    return v;
  }
};

TEST(InvocationWalker, StreamWalkLooksUpThenRefreshesThenEnds) {
  const Stream s;
  RecordingCache c;
  c.resident = {6};
  c.evict_on_end = {0};
  std::vector<std::pair<uint32_t, bool>> seen;
  std::vector<uint32_t> evicted;
  InvocationWalker::walk_stream(
      c, s.view(), 1,
      [&](uint32_t j, uint32_t key, bool hit) {
        EXPECT_EQ(s.key[j], key);
        // The result is seen before the next lookup is made.
        EXPECT_EQ(c.calls.back(), "lookup " + std::to_string(key) + " next " + std::to_string(s.next_use[j]));
        seen.emplace_back(key, hit);
      },
      &evicted);
  EXPECT_EQ(c.calls, (std::vector<std::string>{"begin 1 decode", "lookup 5 next 8", "lookup 6 next 7",
                                               "lookup 7 next 6", "refresh 6", "refresh 5", "end 3"}));
  EXPECT_EQ(seen, (std::vector<std::pair<uint32_t, bool>>{{5, false}, {6, true}, {7, false}}));
  EXPECT_EQ(evicted, std::vector<uint32_t>{0});
}

TEST(InvocationWalker, StreamWalkWithoutNextUseSaysNeverUsedAgain) {
  const Stream s;
  RecordingCache c;
  InvocationWalker::walk_stream(c, s.view(false), 0, [](uint32_t, uint32_t, bool) {});
  const std::string never = std::to_string(kNeverUsedAgain);
  EXPECT_EQ(c.calls, (std::vector<std::string>{"begin 0 prefill", "lookup 0 next " + never,
                                               "lookup 1 next " + never, "end 2"}));
}

TEST(InvocationWalker, DemandWalkDropsRefreshesOfExpertsNoLongerDemanded) {
  // A rewrite replaced expert 2 (key 6) of invocation 1 by expert 0 (key 4): the refresh of key 6 goes, the
  // refresh of key 5 stays, and the count at the end is the demands'.
  const Stream s;
  RecordingCache c;
  InvocationWalker w(4);
  const std::vector<Demand> demands{{1, 3, 8}, {0, 2, 11}};
  std::vector<uint32_t> keys;
  w.walk_demands(c, s.view(), 1, demands, [&](const Demand&, uint32_t key, bool) { keys.push_back(key); });
  EXPECT_EQ(c.calls, (std::vector<std::string>{"begin 1 decode", "lookup 5 next 8", "lookup 4 next 11",
                                               "refresh 5", "end 2"}));
  EXPECT_EQ(keys, (std::vector<uint32_t>{5, 4}));
  // The scratch is clear again: the next walk of the stream's own demands keeps both refreshes.
  RecordingCache again;
  w.walk_demands(again, s.view(), 1, std::vector<Demand>{{1, 1, 0}, {2, 1, 0}, {3, 1, 0}},
                 [](const Demand&, uint32_t, bool) {});
  EXPECT_EQ(again.calls, (std::vector<std::string>{"begin 1 decode", "lookup 5 next 0", "lookup 6 next 0",
                                                   "lookup 7 next 0", "refresh 6", "refresh 5", "end 3"}));
}

TEST(InvocationWalker, DemandWalkPassesTokensToACacheThatTakesThem) {
  const Stream s;
  TokenCache c;
  InvocationWalker w(4);
  std::vector<int> results;
  w.walk_demands(c, s.view(), 0, std::vector<Demand>{{1, 7, 0}},
                 [&](const Demand&, uint32_t, int r) { results.push_back(r); });
  EXPECT_EQ(c.calls, (std::vector<std::string>{"begin", "lookup 1 tokens 7", "end 1"}));
  EXPECT_EQ(results, std::vector<int>{7});
}

}  // namespace
}  // namespace moesim
