// A system spec parsed once (serving/system.h): parse_system_spec knows the system, its traits come from its
// registry entry without building it, flags feed its parameters on the parsed value, and its parameters are
// checked by their ParamDefs like every policy's.
#include <gtest/gtest.h>

#include "serving/system.h"
#include "tests/error_of.h"

namespace moesim::serving {
namespace {

using test::error_of;

TEST(SystemSpec, ParsedOnceAndTheSystemKnown) {
  const PolicySpec s = parse_system_spec("zipmoe:delta=1,shards=2");
  EXPECT_EQ(s.name, "zipmoe");
  EXPECT_EQ(s.text(), "zipmoe:delta=1,shards=2");
  EXPECT_EQ(error_of([] { (void)parse_system_spec("zipmo"); }).rfind("unknown system 'zipmo' (known: ", 0),
            0u);
  EXPECT_THROW((void)parse_system_spec("zipmoe:delta"), UsageError);
}

TEST(SystemSpec, TraitsComeFromTheRegistryEntry) {
  for (const auto& e : SystemRegistry::instance().entries())
    EXPECT_EQ(&system_traits(PolicySpec{e.name, {}}), &e.traits) << e.name;
  EXPECT_EQ(system_traits(PolicySpec::parse("zipmoe:delta=3")).planner, "zipmoe");
  EXPECT_TRUE(system_traits(PolicySpec{"prism", {}}).cluster);
  EXPECT_EQ(systems_with_host_tier(), "layer-offload, offload");
  EXPECT_EQ(systems_with_planner(), "zipmoe");
  EXPECT_TRUE(system_declares(PolicySpec{"zipmoe", {}}, "e_ratio"));
  EXPECT_FALSE(system_declares(PolicySpec{"offload", {}}, "e_ratio"));
}

TEST(SystemSpec, AParameterFedOnTheParsedValue) {
  const PolicySpec base = PolicySpec::parse("zipmoe:delta=1");
  const PolicySpec added = with_system_param(base, "pools", "F,C", "--pools");
  EXPECT_EQ(added.text(), "zipmoe:delta=1,pools=F+C");  // a comma would split the spec: '+' instead
  EXPECT_EQ(with_system_param(added, "delta", "2", "", true).text(), "zipmoe:delta=2,pools=F+C");
  EXPECT_EQ(error_of([&] { (void)with_system_param(base, "delta", "2", "--delta"); }),
            "--delta and the system spec's delta=1 both set delta: pass one");
}

TEST(SystemSpec, ParametersCheckedByTheirDeclaredTypeAndRange) {
  EXPECT_EQ(error_of([] { (void)make_system(PolicySpec::parse("zipmoe:io=disk")); }),
            "zipmoe:io=disk: io must be one of fused, thread");
  EXPECT_EQ(error_of([] { (void)make_system(PolicySpec::parse("zipmoe:grid=0")); }),
            "zipmoe:grid=0: grid must be a real in (0, 1]");
  EXPECT_EQ(error_of([] { (void)make_system(PolicySpec::parse("zipmoe:shards=70000")); }),
            "zipmoe:shards=70000: shards must be a whole number in [1, 65536]");
  EXPECT_NE(make_system(PolicySpec::parse("zipmoe:io=thread,e_ratio=0")), nullptr);  // 0: the default rho
}

}  // namespace
}  // namespace moesim::serving
