// `moesim replay` and `moesim policies` end to end (the built binary, MOESIM_CLI_PATH).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/json_io.h"

namespace moesim::testing {
namespace {

struct Out {
  int status;
  std::string text;  // stdout and stderr
};

// stdout and stderr together, or stdout only (for JSON) when `with_stderr` is false.
Out cli(const std::string& args, bool with_stderr = true) {
  const std::string cmd = std::string(MOESIM_CLI_PATH) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  Out o{-1, ""};
  if (!p) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.text.append(buf, n);
  o.status = pclose(p);
  return o;
}

const std::string kQwen = std::string(MOESIM_SOURCE_DIR) + "/data/traces/qwen3-30b-a3b.route.csv";

TEST(ReplayCli, JsonSweepOfAllPolicies) {
  const Out o =
      cli("replay --trace " + kQwen + " --policy all --sweep 16,32 --scope global --json --threads 2", false);
  ASSERT_EQ(o.status, 0) << o.text;
  const auto start = o.text.find('{');
  ASSERT_NE(start, std::string::npos) << o.text;
  const Json j = parse_json_text(o.text.substr(start), "replay output");
  ASSERT_TRUE(j.contains("header"));
  ASSERT_EQ(j["results"].size(), 14u);  // 7 policies x 2 capacities
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["scope"], "global");
    EXPECT_EQ(r["lookups"], 39526);
    EXPECT_GT(r["hits"].get<uint64_t>(), 0u);
    EXPECT_FALSE(r["read_bytes"].is_null());
  }
  EXPECT_EQ(j["results"][0]["eviction"], "belady");
  EXPECT_FALSE(j["results"][0].contains("policy"));
  EXPECT_FALSE(j["results"][0].contains("hit_pct"));
  EXPECT_GT(j["results"][0]["hit_rate"].get<double>(), 0.0);
  EXPECT_LE(j["results"][0]["hit_rate"].get<double>(), 1.0);
  ASSERT_TRUE(j.contains("warnings"));
  EXPECT_EQ(j["results"][0]["capacity_experts"], 16 * 48);
}

TEST(ReplayCli, ThreadCountDoesNotChangeResults) {
  auto hits = [](const std::string& text) {
    const Json j = parse_json_text(text.substr(text.find('{')), "replay output");
    std::string s;
    for (const auto& r : j["results"])
      s += r["eviction"].get<std::string>() + "=" + std::to_string(r["hits"].get<uint64_t>()) + ";";
    return s;
  };
  const std::string args = "replay --trace " + kQwen +
                           " --policy random:seed=4 --policy marking --policy lfu " +
                           "--sweep 8,16,24,3000MiB --json --threads ";
  const Out a = cli(args + "1", false), b = cli(args + "4", false);
  ASSERT_EQ(a.status, 0) << a.text;
  ASSERT_EQ(b.status, 0) << b.text;
  EXPECT_EQ(hits(a.text), hits(b.text));
}

TEST(ReplayCli, TableNamesTheTraceAndWarnsAboutDegenerateInvocations) {
  const Out o = cli("replay --trace " + kQwen + " --policy lru --capacity 32 --scope layer");
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("layer scope"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("48 layers x 128 experts"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("degenerate"), std::string::npos) << o.text;  // prefill passes exceed 32 experts
  EXPECT_NE(o.text.find("lru"), std::string::npos);
}

TEST(ReplayCli, BadInputGivesClearErrors) {
  struct Case {
    std::string args, expect;
  } cases[] = {
      {"--policy lru --capacity 0", "--budget: budget '0' must be greater than 0"},
      {"--policy lru --capacity 4 --scope layer", "top-k"},
      {"--policy lru --capacity 1KiB --scope layer", "less than one expert"},
      {"--policy lru --capacity 1KiB --scope global", "smaller than one expert"},
      {"--policy lruu --capacity 32", "known: belady"},
      {"--policy random:sed=2 --capacity 32", "known: seed"},
      {"--policy lru --capacity 32 --scope everywhere", "known: global, layer"},
      {"--policy lru", "a budget is required"},
      {"--policy lru --capacity 32 --model mixtral-8x7b", "the model has"},
  };
  for (const auto& c : cases) {
    const Out o = cli("replay --trace " + kQwen + " " + c.args);
    EXPECT_NE(o.status, 0) << c.args << "\n" << o.text;
    EXPECT_NE(o.text.find("error"), std::string::npos) << c.args << "\n" << o.text;
    EXPECT_NE(o.text.find(c.expect), std::string::npos) << c.args << "\n" << o.text;
    EXPECT_EQ(o.text.find("internal error"), std::string::npos) << c.args << "\n" << o.text;
  }
  const Out missing = cli("replay --trace /nonexistent.mtr --policy lru --capacity 8");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.text.find("nonexistent"), std::string::npos) << missing.text;
}

TEST(PoliciesCli, ListsEvictionPoliciesWithParameters) {
  const Out o = cli("policies");
  ASSERT_EQ(o.status, 0) << o.text;
  for (const char* name : {"lru", "lfu", "fifo", "random", "marking", "belady", "static-freq", "seed=1"})
    EXPECT_NE(o.text.find(name), std::string::npos) << name << "\n" << o.text;
}

}  // namespace
}  // namespace moesim::testing
