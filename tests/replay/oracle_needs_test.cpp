// What each plug-in declares it needs (core/registry.h PolicyNeeds) matches what its factory refuses without,
// for every registered eviction and routing policy: replay prepares oracle data from the declaration alone
// (replay/cache_replay.h oracle_needs), so a wrong declaration would fail a run or skip a needed index.
#include <gtest/gtest.h>

#include <vector>

#include "core/eviction.h"
#include "core/routing.h"
#include "replay/cache_replay.h"

namespace moesim {
namespace {

bool builds(const std::string& policy, bool next_use, bool frequency) {
  CacheConfig probe = make_cache_config(1, 2, 1, CacheScope::kGlobal, {CacheCapacity::Unit::kExperts, 1}, {});
  const std::vector<uint64_t> freq = {1, 1};
  probe.next_use_available = next_use;
  if (frequency) probe.key_frequency = freq;
  try {
    make_eviction_policy(policy, probe);
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(OracleNeeds, EveryEvictionPolicyDeclaresWhatItsFactoryRefusesWithout) {
  for (const auto& e : EvictionRegistry::instance().entries()) {
    SCOPED_TRACE(e.name);
    ASSERT_TRUE(builds(e.name, true, true));
    EXPECT_EQ(e.needs.next_use, !builds(e.name, false, true));
    EXPECT_EQ(e.needs.frequency, !builds(e.name, true, false));
    EXPECT_FALSE(e.needs.logits);
    EXPECT_EQ(&replay::oracle_needs(e.name), &e.needs);
  }
  EXPECT_TRUE(replay::oracle_needs("belady").next_use);
  EXPECT_TRUE(replay::oracle_needs("static-freq").frequency);
  EXPECT_FALSE(replay::oracle_needs("lfu:history=1").next_use);
}

TEST(OracleNeeds, AnUnknownPolicyIsAnErrorNamingTheKnownOnes) {
  try {
    replay::oracle_needs("no-such-policy:x=1");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown eviction policy 'no-such-policy'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("belady"), std::string::npos) << e.what();
  }
}

TEST(OracleNeeds, RoutingPoliciesThatDeclareLogitsRefuseATraceWithout) {
  size_t declared = 0;
  for (const auto& e : RoutingRegistry::instance().entries()) {
    if (!e.needs.logits) continue;
    SCOPED_TRACE(e.name);
    ++declared;
    RoutingSetup s;
    s.layers = 1;
    s.experts = 8;
    s.top_k = 2;
    s.has_logits = false;
    EXPECT_THROW(make_routing_policy(e.name, s), Error);
  }
  EXPECT_GE(declared, 3u);  // cache-prior, cumsum, promote
}

}  // namespace
}  // namespace moesim
