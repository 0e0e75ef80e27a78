// `moesim policies` called directly (harness/policies_job.h): the JSON lists every registered policy of
// every kind, each with its parameters and defaults exactly as its registry holds them, the text names each
// of them, and list_policies writes what policies_output returns.
#include "harness/policies_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/eviction.h"
#include "core/placement.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/system.h"

namespace moesim::harness {
namespace {

using ::testing::HasSubstr;

// The JSON list of `kind` holds the registry's entries in its order, with their parameters.
template <typename R>
void expect_listed(const Json& policies, const char* kind, const R& registry, const std::string& text) {
  SCOPED_TRACE(kind);
  ASSERT_TRUE(policies.contains(kind));
  const Json& list = policies[kind];
  ASSERT_EQ(list.size(), registry.entries().size());
  EXPECT_FALSE(list.empty());
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& e = registry.entries()[i];
    EXPECT_EQ(list[i]["name"], e.name);
    EXPECT_EQ(list[i]["description"], e.description);
    ASSERT_EQ(list[i]["params"].size(), e.params.size()) << e.name;
    for (size_t p = 0; p < e.params.size(); ++p) {
      EXPECT_EQ(list[i]["params"][p]["key"], e.params[p].key);
      EXPECT_EQ(list[i]["params"][p]["default"], e.params[p].default_value);
      EXPECT_THAT(text, HasSubstr(e.params[p].key + "=" + e.params[p].default_value));
    }
    EXPECT_THAT(text, HasSubstr("  " + e.name + " "));
  }
}

TEST(PoliciesJob, EveryRegisteredPolicyIsListedWithItsParameters) {
  const Json j = Json::parse(policies_output(true));
  const std::string text = policies_output(false);
  EXPECT_EQ(j["header"]["command"], "policies");
  const Json& p = j["policies"];
  EXPECT_EQ(p.size(), 7u);
  expect_listed(p, "eviction", EvictionRegistry::instance(), text);
  expect_listed(p, "routing", RoutingRegistry::instance(), text);
  expect_listed(p, "scheduling", SchedulingRegistry::instance(), text);
  expect_listed(p, "planning", PlanningRegistry::instance(), text);
  expect_listed(p, "placement", PlacementRegistry::instance(), text);
  expect_listed(p, "prefetch", PrefetchRegistry::instance(), text);
  expect_listed(p, "system", SystemRegistry::instance(), text);
  // Names every system of the papers the simulator models.
  std::string systems;
  for (const Json& s : p["system"]) systems += s["name"].get<std::string>() + " ";
  EXPECT_THAT(systems, HasSubstr("offload "));
  EXPECT_THAT(systems, HasSubstr("zipmoe "));
  EXPECT_THAT(text, HasSubstr("--policy all: every eviction policy above"));
}

TEST(PoliciesJob, ListPoliciesWritesWhatPoliciesOutputReturns) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("moesim-policies-" + std::to_string(getpid()) + ".txt"))
          .string();
  list_policies({false, out});
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), policies_output(false));
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace moesim::harness
