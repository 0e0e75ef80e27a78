// ParamDef (core/params.h): a parameter's type, range and default, checked by Params, so by every registry,
// before a factory runs, with one message form: "<spec as written>: <key> must be <what it must be>".
#include "core/params.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "core/registry.h"
#include "core/routing.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const ParamDef kDecay{"decay", "0.5", "a share", ParamType::kReal, ParamRange::closed(0, 1)};
const ParamDef kWays{"ways", "2", "a count", ParamType::kWhole, ParamRange::at_least(1)};
const ParamDef kShift{"shift", "-3", "an offset", ParamType::kInt, ParamRange::closed(-8, 8)};
const ParamDef kMode{"mode", "fast", "a way", ParamType::kChoice, {}, {"fast", "exact"}};
const ParamDef kPath{"path", "", "a file"};

TEST(ParamRange, BoundsAndTheirText) {
  EXPECT_EQ(ParamRange::closed(0, 1).to_string(), "[0, 1]");
  EXPECT_EQ(ParamRange::open(0, 1).to_string(), "(0, 1)");
  EXPECT_EQ(ParamRange::closed_open(0, 1).to_string(), "[0, 1)");
  EXPECT_EQ(ParamRange::open_closed(0, 0.5).to_string(), "(0, 0.5]");
  EXPECT_EQ(ParamRange::at_least(2).to_string(), ">= 2");
  EXPECT_EQ(ParamRange::above(0).to_string(), "> 0");
  EXPECT_EQ(ParamRange::at_most(100).to_string(), "<= 100");
  EXPECT_EQ(ParamRange{}.to_string(), "");
  EXPECT_FALSE(ParamRange{}.bounded());
  // Each end, closed and open, on both sides of it.
  EXPECT_TRUE(ParamRange::closed(0, 1).contains(0));
  EXPECT_TRUE(ParamRange::closed(0, 1).contains(1));
  EXPECT_FALSE(ParamRange::closed(0, 1).contains(1.0000001));
  EXPECT_FALSE(ParamRange::open(0, 1).contains(0));
  EXPECT_FALSE(ParamRange::open(0, 1).contains(1));
  EXPECT_TRUE(ParamRange::open(0, 1).contains(0.5));
  EXPECT_FALSE(ParamRange::at_least(1).contains(0.999));
  EXPECT_TRUE(ParamRange::at_most(100).contains(-1e300));
}

TEST(ParamDef, ARealOutOfItsRangeIsRefusedNamingSpecParameterAndRange) {
  EXPECT_EQ(error_of([] { kDecay.check("2", "lfu:decay=2"); }),
            "lfu:decay=2: decay must be a real in [0, 1]");
  EXPECT_EQ(error_of([] { kDecay.check("-0.1", "x:decay=-0.1"); }),
            "x:decay=-0.1: decay must be a real in [0, 1]");
  EXPECT_NO_THROW(kDecay.check("1", "x"));
  EXPECT_NO_THROW(kDecay.check("0", "x"));
}

TEST(ParamDef, AValueOfTheWrongTypeIsRefusedWithTheSameForm) {
  for (const char* v : {"abc", "nan", "inf", "0.5x", ""})
    EXPECT_EQ(error_of([&] { kDecay.check(v, "x"); }), "x: decay must be a real in [0, 1]") << v;
  for (const char* v : {"1.5", "-1", "0", "two", "18446744073709551616"})
    EXPECT_EQ(error_of([&] { kWays.check(v, "x"); }), "x: ways must be a whole number >= 1") << v;
  EXPECT_EQ(error_of([] { kShift.check("9", "x"); }), "x: shift must be a whole number in [-8, 8]");
  EXPECT_NO_THROW(kShift.check("-8", "x"));
  EXPECT_EQ(error_of([] { kMode.check("slow", "x:mode=slow"); }),
            "x:mode=slow: mode must be one of fast, exact");
  EXPECT_NO_THROW(kMode.check("exact", "x"));
  EXPECT_NO_THROW(kPath.check("any text, even 1.5", "x"));  // free text is the factory's to read
  // A whole number without a range takes all of uint64.
  const ParamDef seed{"seed", "1", "a seed", ParamType::kWhole};
  EXPECT_NO_THROW(seed.check("18446744073709551615", "x"));
  EXPECT_EQ(error_of([&] { seed.check("-1", "x"); }),
            "x: seed must be a whole number in [0, 18446744073709551615]");
}

TEST(ParamDef, TheErrorIsAUsageError) {
  EXPECT_THROW(kDecay.check("2", "x"), UsageError);
}

TEST(Params, DefaultsFillWhatTheSpecLeavesOutAndAreCheckedToo) {
  const std::vector<ParamDef> defs{kDecay, kWays, kMode};
  const Params p(PolicySpec::parse("toy:ways=4"), defs);
  EXPECT_EQ(p.get_double("decay"), 0.5);
  EXPECT_EQ(p.get_uint("ways"), 4u);
  EXPECT_EQ(p.get("mode"), "fast");
  EXPECT_EQ(p.canonical(), "toy:decay=0.5,ways=4,mode=fast");
  // A declared default outside its own range is the declaration's mistake: caught on first use.
  const std::vector<ParamDef> bad{{"share", "1.5", "a share", ParamType::kReal, ParamRange::closed(0, 1)}};
  EXPECT_EQ(error_of([&] { Params(PolicySpec::parse("toy"), bad); }), "toy: share must be a real in [0, 1]");
}

TEST(Params, TheMessageNamesTheSpecAsWritten) {
  const std::vector<ParamDef> defs{kDecay, kWays};
  EXPECT_EQ(error_of([&] { Params(PolicySpec::parse("toy:ways=2,decay=7"), defs); }),
            "toy:ways=2,decay=7: decay must be a real in [0, 1]");
}

TEST(PolicySpec, TextIsTheSpecAsWrittenAndSetsSaysWhatItGives) {
  const PolicySpec s = PolicySpec::parse("zipmoe:shards=2,io=thread");
  EXPECT_EQ(s.text(), "zipmoe:shards=2,io=thread");
  EXPECT_EQ(PolicySpec::parse(s.text()), s);
  EXPECT_EQ(PolicySpec::parse("lru").text(), "lru");
  EXPECT_TRUE(s.sets("io"));
  EXPECT_FALSE(s.sets("delta"));
}

// A toy policy registered with typed parameters: the registry refuses a bad value before its factory runs
// (the factory counts its calls), and the factory sees the defaults.
int toy_builds = 0;
double toy_decay = -1;
uint64_t toy_ways = 0;

class ToyRouting final : public RoutingPolicy {
 public:
  void route(const RoutingContext&, std::span<uint16_t>) override {}
};

MOESIM_REGISTER(RoutingRegistry, "test-typed-params", "params test: a policy with typed parameters",
                {{"decay", "0.25", "a share", ParamType::kReal, ParamRange::closed(0, 1)},
                 {"ways", "3", "a count", ParamType::kWhole, ParamRange::closed(1, 8)},
                 {"mode", "fast", "a way", ParamType::kChoice, {}, {"fast", "exact"}}},
                [](const Params& p, const RoutingSetup&) -> std::unique_ptr<RoutingPolicy> {
                  ++toy_builds;
                  toy_decay = p.get_double("decay");
                  toy_ways = p.get_uint("ways");
                  return std::make_unique<ToyRouting>();
                });

TEST(RegistryParams, ARangeRefusedBeforeTheFactoryRuns) {
  const int before = toy_builds;
  EXPECT_EQ(error_of([] { (void)make_routing_policy("test-typed-params:ways=9", RoutingSetup{}); }),
            "test-typed-params:ways=9: ways must be a whole number in [1, 8]");
  EXPECT_EQ(error_of([] { (void)make_routing_policy("test-typed-params:mode=slow", RoutingSetup{}); }),
            "test-typed-params:mode=slow: mode must be one of fast, exact");
  EXPECT_EQ(
      error_of([] { (void)RoutingRegistry::instance().params("test-typed-params:decay=x", "routing"); }),
      "test-typed-params:decay=x: decay must be a real in [0, 1]");
  EXPECT_EQ(toy_builds, before);
}

TEST(RegistryParams, DefaultsReachTheFactory) {
  (void)RoutingRegistry::instance().create(PolicySpec::parse("test-typed-params:decay=1"), "routing",
                                           RoutingSetup{});
  EXPECT_EQ(toy_decay, 1.0);
  EXPECT_EQ(toy_ways, 3u);
  EXPECT_EQ(RoutingRegistry::instance().params("test-typed-params", "routing").canonical(),
            "test-typed-params:decay=0.25,ways=3,mode=fast");
}

}  // namespace
}  // namespace moesim
