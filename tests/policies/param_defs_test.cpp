// The registered policies' ParamDefs (core/params.h): every declared default lies in its own type and range,
// every numeric parameter is typed, and the registry refuses a real policy's out-of-range value with the one
// message form before the factory runs (the ranges that the factories used to check by hand).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/eviction.h"
#include "core/placement.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using test::error_of;

template <typename R>
void expect_defaults_valid(const R& registry, const char* kind) {
  for (const auto& e : registry.entries()) {
    EXPECT_NO_THROW((void)registry.params(PolicySpec{e.name, {}}, kind)) << kind << " " << e.name;
    for (const auto& d : e.params) {
      EXPECT_FALSE(d.description.empty()) << e.name << ":" << d.key;
      if (d.type == ParamType::kChoice) {
        EXPECT_FALSE(d.choices.empty()) << e.name << ":" << d.key;
      }
      if (d.type == ParamType::kText) {
        // A numeric default on a free-text parameter would let a bad number reach the factory unchecked.
        char* end = nullptr;
        (void)std::strtod(d.default_value.c_str(), &end);
        EXPECT_TRUE(d.default_value.empty() || *end != '\0') << e.name << ":" << d.key << " is untyped";
      }
    }
  }
}

TEST(ParamDefs, EveryRegisteredDefaultIsInItsOwnRange) {
  expect_defaults_valid(EvictionRegistry::instance(), "eviction");
  expect_defaults_valid(RoutingRegistry::instance(), "routing");
  expect_defaults_valid(PrefetchRegistry::instance(), "prefetch");
  expect_defaults_valid(SchedulingRegistry::instance(), "scheduling");
  expect_defaults_valid(PlanningRegistry::instance(), "planning");
  expect_defaults_valid(PlacementRegistry::instance(), "placement");
}

TEST(ParamDefs, RealPoliciesRangesRefusedInOneForm) {
  const CacheConfig cfg{};
  const auto eviction = [&](const std::string& spec) {
    return error_of([&] { (void)EvictionRegistry::instance().create(spec, "eviction", cfg); });
  };
  EXPECT_EQ(eviction("lfu:history=2"), "lfu:history=2: history must be a whole number in [0, 1]");
  EXPECT_EQ(eviction("lirs:hir=1"), "lirs:hir=1: hir must be a real in (0, 1)");
  EXPECT_EQ(eviction("lirs:stack=0.5"), "lirs:stack=0.5: stack must be a real >= 1");
  EXPECT_EQ(eviction("2q:kin=1"), "2q:kin=1: kin must be a real in [0, 1)");
  EXPECT_EQ(eviction("s3fifo:threshold=4"), "s3fifo:threshold=4: threshold must be a whole number in [1, 3]");
  EXPECT_EQ(eviction("tinylfu:sample=0"), "tinylfu:sample=0: sample must be a real > 0");
  EXPECT_EQ(eviction("random:seed=-1"),
            "random:seed=-1: seed must be a whole number in [0, 18446744073709551615]");
  const auto routing = [](const std::string& spec) {
    return error_of([&] { (void)make_routing_policy(spec, RoutingSetup{1, 8, 2, true, false}); });
  };
  EXPECT_EQ(routing("prune:h=1"), "prune:h=1: h must be a whole number >= 2");
  EXPECT_EQ(routing("cumsum:p=1.5"), "cumsum:p=1.5: p must be a real in [0, 1]");
  EXPECT_EQ(routing("cache-prior:delta=-1"), "cache-prior:delta=-1: delta must be a real >= 0");
  EXPECT_EQ(routing("buddy:tau_pct=101"), "buddy:tau_pct=101: tau_pct must be a real <= 100");
  EXPECT_EQ(routing("max-rank:M=0"), "max-rank:M=0: M must be a whole number >= 1");
  const auto prefetch = [](const std::string& spec) {
    return error_of([&] { (void)make_prefetch_policy(spec, PrefetchSetup{2, 8, 2, 1}); });
  };
  EXPECT_EQ(prefetch("oracle:lookahead=0"),
            "oracle:lookahead=0: lookahead must be a whole number in [1, 1024]");
  EXPECT_EQ(prefetch("layer-window:depth=5000"),
            "layer-window:depth=5000: depth must be a whole number in [1, 4096]");
  EXPECT_EQ(prefetch("activation-aware:collection=0"),
            "activation-aware:collection=0: collection must be a whole number in [1, 100000]");
  EXPECT_EQ(error_of([] { (void)PlacementRegistry::instance().create("eplb:groups=0", "placement"); }),
            "eplb:groups=0: groups must be a whole number in [1, 1048576]");
}

TEST(ParamDefs, ABoundTheRunSetsStaysWithTheFactory) {
  // popularity's top is >= 1 by its ParamDef and at most the model's experts per layer by its factory.
  EXPECT_EQ(error_of([] {
              (void)make_prefetch_policy("popularity:top=0", PrefetchSetup{2, 8, 2, 1});
            }),
            "popularity:top=0: top must be a whole number >= 1");
  EXPECT_EQ(error_of([] {
              (void)make_prefetch_policy("popularity:top=9", PrefetchSetup{2, 8, 2, 1});
            }),
            "popularity: top must be at most the experts per layer (8), got 9");
}

}  // namespace
}  // namespace moesim
