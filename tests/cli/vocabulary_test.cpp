// One CLI vocabulary across replay, run and compare: --trace or positional, --policy/--budget lists and
// repetition with the old spellings as hidden aliases, global default scope shown, -o everywhere, the same
// JSON keys.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using moesim::Json;
using moesim::test::moesim_cli;
using moesim::test::read_text;
using moesim::test::temp_path;

const std::string kTiny = moesim::test::test_data("traces/tiny.route.csv");
const std::string kQwen = moesim::test::bundled_data("traces/qwen3-30b-a3b.route.csv");

Json json_of(const std::string& out) {
  return Json::parse(out.substr(out.find('{')));
}

TEST(Vocabulary, PolicyListSplitsOnSemicolonsAndBeforePolicyNames) {
  auto evictions = [](const std::string& policy) {
    const auto r = moesim_cli("replay " + kTiny + " --budget 2 --json --policy '" + policy + "'");
    EXPECT_EQ(r.code, 0) << policy << r.err;
    std::string s;
    const Json j = json_of(r.out);
    for (const auto& row : j["results"]) s += row["eviction"].get<std::string>() + ";";
    return s;
  };
  EXPECT_EQ(evictions("lru,lfu"), "lru;lfu:history=0;");
  EXPECT_EQ(evictions("lfu:history=1,lru"), "lfu:history=1;lru;");
  EXPECT_EQ(evictions("lru;random:seed=7"), "lru;random:seed=7;");
  EXPECT_EQ(evictions("random:seed=7,lru"), "random:seed=7;lru;");
  // After a comma, a key that is no policy name stays a parameter of the spec before it (and is checked).
  const auto r = moesim_cli("replay " + kTiny + " --budget 2 --policy random:seed=7,colour=3");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("colour"), std::string::npos) << r.err;
}

TEST(Vocabulary, TraceByFlagOrPositionalGivesTheSameOutput) {
  for (const std::string cmd : {"replay --policy lru --budget 2", "trace info", "trace stats"}) {
    const auto a = moesim_cli(cmd + " --trace " + kTiny + " --json");
    const auto b = moesim_cli(cmd + " " + kTiny + " --json");
    ASSERT_EQ(a.code, 0) << cmd << a.err;
    ASSERT_EQ(b.code, 0) << cmd << b.err;
    Json ja = json_of(a.out), jb = json_of(b.out);
    ja.erase("header");
    jb.erase("header");
    for (auto& r : ja["results"]) r.erase("replay_s"), r.erase("lookups_per_s");
    for (auto& r : jb["results"]) r.erase("replay_s"), r.erase("lookups_per_s");
    EXPECT_EQ(ja.dump(), jb.dump()) << cmd;
  }
  for (const std::string cmd : {"run --budget 2GiB", "compare --budget 2GiB --policy lru"}) {
    const auto a = moesim_cli(cmd + " --trace " + kQwen + " --json");
    const auto b = moesim_cli(cmd + " " + kQwen + " --json");
    ASSERT_EQ(a.code, 0) << cmd << a.err;
    ASSERT_EQ(b.code, 0) << cmd << b.err;
    EXPECT_EQ(
        json_of(a.out).contains("metrics") ? json_of(a.out)["metrics"].dump() : json_of(a.out)["rows"].dump(),
        json_of(b.out).contains("metrics") ? json_of(b.out)["metrics"].dump()
                                           : json_of(b.out)["rows"].dump());
  }
}

TEST(Vocabulary, ListsRepetitionAndDeprecatedAliasesAgree) {
  auto cells = [](const std::string& args) {
    const auto r = moesim_cli("compare " + kQwen + " --json --scope global " + args);
    EXPECT_EQ(r.code, 0) << args << r.err;
    std::string s;
    const Json j = json_of(r.out);
    for (const auto& row : j["rows"])
      s += row["budget"].get<std::string>() + "/" + row["eviction"].get<std::string>() + ";";
    return s;
  };
  const std::string list = cells("--policy 'lru;random:seed=7' --budget 1GiB,2GiB");
  EXPECT_EQ(list, "1.00 GiB/lru;1.00 GiB/random:seed=7;2.00 GiB/lru;2.00 GiB/random:seed=7;");
  EXPECT_EQ(cells("--policy lru --policy random:seed=7 --budget 1GiB --budget 2GiB"), list);
  EXPECT_EQ(cells("--policies 'lru;random:seed=7' --budgets 1GiB,2GiB"), list);

  const auto replay = [](const std::string& args) {
    const auto r = moesim_cli("replay " + kQwen + " --json " + args);
    EXPECT_EQ(r.code, 0) << args << r.err;
    std::string s;
    const Json j = json_of(r.out);
    for (const auto& row : j["results"])
      s += row["eviction"].get<std::string>() + "@" + row["capacity"].get<std::string>() + "=" +
           std::to_string(row["hits"].get<uint64_t>()) + ";";
    return s;
  };
  const std::string sweep = replay("--policy lru,fifo --budget 16,32");
  EXPECT_EQ(replay("--policy lru --policy fifo --sweep 16,32"), sweep);
  EXPECT_EQ(replay("--policy lru --policy fifo --capacity 16 --capacity 32"), sweep);

  const auto old_run = moesim_cli("run " + kQwen + " --capacity 2GiB --json");
  const auto new_run = moesim_cli("run " + kQwen + " --budget 2GiB --json");
  ASSERT_EQ(old_run.code, 0) << old_run.err;
  EXPECT_EQ(json_of(old_run.out)["metrics"].dump(), json_of(new_run.out)["metrics"].dump());
  // The aliases are hidden from --help.
  const auto help = moesim_cli("compare --help");
  EXPECT_EQ(help.out.find("--budgets"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--budget"), std::string::npos) << help.out;
}

// One configuration's commands default to one global cache; compare, which ranks policies, shows both scopes
// side by side, labelled. Every output says which.
TEST(Vocabulary, DefaultScopeIsSaidByEveryOutput) {
  const auto replay = moesim_cli("replay " + kQwen + " --policy lru --budget 16");
  EXPECT_NE(replay.out.find("global scope"), std::string::npos) << replay.out;
  const auto run = moesim_cli("run " + kQwen + " --budget 2GiB");
  EXPECT_NE(run.out.find("scope global"), std::string::npos) << run.out;
  const auto cmp = moesim_cli("compare " + kQwen + " --budget 2GiB --policy lru");
  EXPECT_NE(cmp.out.find("global and layer scope"), std::string::npos) << cmp.out;
  for (const std::string cmd : {"replay --policy lru --budget 16", "run --budget 2GiB"}) {
    const auto r = moesim_cli(cmd + " " + kQwen + " --json");
    ASSERT_EQ(r.code, 0) << cmd << r.err;
    EXPECT_EQ(json_of(r.out)["header"]["config"]["scope"], "global") << cmd;
  }
  const auto c = moesim_cli("compare --budget 2GiB --policy lru " + kQwen + " --json");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(json_of(c.out)["header"]["config"]["scope"], Json::array({"global", "layer"}));
}

TEST(Vocabulary, OutputOptionWritesWhatStdoutWouldShow) {
  for (const std::string& cmd :
       {"replay --policy lru --budget 2 " + kTiny, "trace info " + kTiny, "trace stats " + kTiny,
        "run --budget 2GiB " + kQwen, "compare --budget 2GiB --policy lru " + kQwen}) {
    const std::string path = temp_path("out.txt");
    const auto to_file = moesim_cli(cmd + " -o " + path);
    ASSERT_EQ(to_file.code, 0) << cmd << to_file.err;
    EXPECT_TRUE(to_file.out.empty()) << cmd;
    const std::string text = read_text(path);
    EXPECT_FALSE(text.empty()) << cmd;
    if (cmd.rfind("replay", 0) != 0) {  // replay prints timings
      EXPECT_EQ(text, moesim_cli(cmd).out) << cmd;
    }
    const auto bad = moesim_cli(cmd + " -o /nonexistent-dir/out.txt");
    EXPECT_NE(bad.code, 0) << cmd;
    EXPECT_NE(bad.err.find("/nonexistent-dir"), std::string::npos) << cmd << bad.err;
  }
}

TEST(Vocabulary, SameJsonKeysAndUnits) {
  const auto replay = moesim_cli("replay " + kQwen + " --policy lru --budget 16 --json");
  ASSERT_EQ(replay.code, 0) << replay.err;
  const Json r = json_of(replay.out)["results"][0];
  EXPECT_TRUE(r.contains("hit_rate"));
  EXPECT_TRUE(r.contains("decode_hit_rate"));
  EXPECT_TRUE(r.contains("eviction"));
  EXPECT_FALSE(r.contains("hit_pct"));
  EXPECT_FALSE(r.contains("decode_hit_pct"));
  EXPECT_FALSE(r.contains("policy"));
  EXPECT_LE(r["hit_rate"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r["hit_rate"].get<double>(), r["hits"].get<double>() / r["lookups"].get<double>());

  const auto run = moesim_cli("run " + kQwen + " --budget 2GiB --json");
  ASSERT_EQ(run.code, 0) << run.err;
  const Json j = json_of(run.out);
  EXPECT_TRUE(j.contains("warnings"));
  EXPECT_TRUE(j["metrics"]["cache"].contains("hit_rate"));
  EXPECT_EQ(j["header"]["config"]["eviction"], "lru");
}

TEST(Vocabulary, TtftIsNullWithoutPrefill) {
  // A decode-only trace: no prefill pass, so no time to first token was measured.
  const std::string path = temp_path("decode_only.csv");
  std::string csv = "seq,token,layer,experts\n";
  for (int t = 0; t < 4; ++t)
    for (int l = 0; l < 2; ++l) csv += "0," + std::to_string(t) + "," + std::to_string(l) + ",\"1;2\"\n";
  {
    std::ofstream f(path);
    f << csv;
  }
  const auto info = moesim_cli("trace info " + path);
  ASSERT_EQ(info.code, 0) << info.err;
  const auto r = moesim_cli("run " + path + " --model qwen3-30b-a3b --budget 2GiB --json");
  ASSERT_EQ(r.code, 0) << r.err << info.out;
  const Json m = json_of(r.out)["metrics"];
  EXPECT_EQ(m["ttft"]["count"], 0);
  EXPECT_TRUE(m["ttft"]["mean_s"].is_null()) << m["ttft"].dump();
  EXPECT_TRUE(m["ttft"]["p99_s"].is_null());
  EXPECT_FALSE(m["tpot"]["mean_s"].is_null());
}

TEST(Vocabulary, CompareThreadsGiveByteIdenticalOutput) {
  const std::string args =
      "compare " + kQwen + " --budget 1GiB,2GiB --policy 'lru;fifo;random:seed=3' --json";
  const auto one = moesim_cli(args + " --threads 1");
  const auto two = moesim_cli(args + " --threads 2");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(two.code, 0) << two.err;
  Json a = json_of(one.out), b = json_of(two.out);
  a["header"].erase("config"), b["header"].erase("config");  // differ in "threads" only
  a["header"].erase("moesim"), b["header"].erase("moesim");
  EXPECT_EQ(a["rows"].dump(), b["rows"].dump());
  const std::string ta = moesim_cli(args.substr(0, args.size() - 7) + " --threads 1").out;
  const std::string tb = moesim_cli(args.substr(0, args.size() - 7) + " --threads 2").out;
  EXPECT_EQ(ta, tb);
}

TEST(Vocabulary, EveryCommandDescribesTheTraceWithTheSameKeysAndValues) {
  // One writer (traces/trace_summary.h): trace info at its top level, replay and trace stats under "trace".
  const auto info = moesim_cli("trace info --json " + kQwen);
  const auto replay = moesim_cli("replay --json --policy lru --budget 2GiB --batch 2 " + kQwen);
  const auto stats = moesim_cli("trace stats --json " + kQwen);
  ASSERT_EQ(info.code, 0) << info.err;
  ASSERT_EQ(replay.code, 0) << replay.err;
  ASSERT_EQ(stats.code, 0) << stats.err;
  Json from_info = Json::parse(info.out);
  from_info.erase("header");
  from_info.erase("warnings");
  const Json from_replay = Json::parse(replay.out)["trace"];
  const Json from_stats = Json::parse(stats.out)["trace"];
  EXPECT_EQ(from_info, from_replay);
  EXPECT_EQ(from_info, from_stats);
  EXPECT_EQ(from_info["lookups"], 39526);  // the batch-1 stream, whatever replay's --batch
  EXPECT_EQ(from_info["path"], kQwen);
}

}  // namespace
