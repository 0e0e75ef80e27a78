// Systems as plug-ins on the command line: `--system name:key=value` takes the system's declared parameters
// (policy spec syntax), an unknown one is a usage error listing the known ones, the old flags are sugar for
// the same parameters (a flag and the same key in the spec: a usage error), and `moesim policies` lists the
// systems with their parameters.
#include <gtest/gtest.h>

#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using Result = moesim::test::ShellResult;

const std::string kRun = "run --trace " + moesim::test::bundled_data("traces/qwen3-30b-a3b.route.csv") +
                         " --model qwen3-30b-a3b --budget 8GiB";

moesim::Json run_json(const std::string& args) {
  const Result r = moesim::test::moesim_combined(kRun + " " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  return moesim::Json::parse(r.out.substr(r.out.find('{')));
}

TEST(SystemsRegistryCli, SpecParametersReachTheSystem) {
  const moesim::Json j = run_json("--system zipmoe:delta=1,shards=2");
  const moesim::Json& c = j["header"]["config"];
  EXPECT_EQ(c["system"], "zipmoe");
  EXPECT_EQ(c["eviction"], "zipmoe-dispatch:delta=1,evict=freq");
  EXPECT_EQ(c["plan"]["shards"], 2);
}

TEST(SystemsRegistryCli, FlagSugarEqualsTheSpec) {
  const moesim::Json flags = run_json("--system zipmoe --delta 1 --shards 2 --pools F,C,E");
  const moesim::Json spec = run_json("--system zipmoe:delta=1,shards=2,pools=F+C+E");
  EXPECT_EQ(flags["header"]["config"]["plan"], spec["header"]["config"]["plan"]);
  EXPECT_EQ(flags["header"]["config"]["eviction"], spec["header"]["config"]["eviction"]);
  EXPECT_EQ(flags["metrics"], spec["metrics"]);
}

TEST(SystemsRegistryCli, UnknownParameterOrSystemIsAUsageErrorListingTheKnownOnes) {
  Result r = moesim::test::moesim_combined(kRun + " --system zipmoe:deltaa=1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("deltaa"), std::string::npos) << r.out;
  for (const char* key : {"delta", "shards", "grid", "pools", "pool_set", "e_ratio"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << ": " << r.out;
  r = moesim::test::moesim_combined(kRun + " --system offload:delta=1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("none"), std::string::npos) << r.out;  // offload declares no parameter
  r = moesim::test::moesim_combined(kRun + " --system zipmo");
  EXPECT_EQ(r.status, 2) << r.out;
  for (const char* name : {"offload", "layer-offload", "zipmoe", "no-cache"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name << ": " << r.out;
  r = moesim::test::moesim_combined(kRun + " --system zipmoe:delta=x");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("delta"), std::string::npos) << r.out;
}

TEST(SystemsRegistryCli, AFlagAndTheSameKeyInTheSpecIsAUsageError) {
  const Result r = moesim::test::moesim_combined(kRun + " --system zipmoe:delta=1 --delta 2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--delta"), std::string::npos) << r.out;
}

TEST(SystemsRegistryCli, PoliciesListsTheSystemsWithTheirParameters) {
  const Result r = moesim::test::moesim_combined("policies");
  ASSERT_EQ(r.status, 0) << r.out;
  const size_t at = r.out.find("system");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string systems = r.out.substr(at);
  for (const char* s : {"offload", "layer-offload", "zipmoe", "no-cache", "delta=0", "shards=4", "grid=0.05"})
    EXPECT_NE(systems.find(s), std::string::npos) << s << ": " << systems;
  EXPECT_NE(r.out.find("freq"), std::string::npos) << r.out;  // ZipMoE's in-pool eviction, in the registry
}

TEST(SystemsRegistryCli, TheToySystemRunsFromTheCommandLine) {
  const moesim::Json j = run_json("--system no-cache");
  EXPECT_EQ(j["metrics"]["cache"]["hits"], 0);
  EXPECT_GT(j["metrics"]["cache"]["lookups"].get<uint64_t>(), 0u);
}

}  // namespace
