// `moesim replay` and `moesim policies` end to end (the built binary, MOESIM_CLI_PATH).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "base/atomic_file.h"
#include "base/json_io.h"
#include "core/eviction.h"
#include "tests/fixtures.h"

namespace moesim::testing {
namespace {

struct Out {
  int status;
  std::string text;  // stdout and stderr
};

// stdout and stderr together, or stdout only (for JSON) when `with_stderr` is false.
Out cli(const std::string& args, bool with_stderr = true) {
  const std::string cmd =
      std::string(MOESIM_CLI_PATH) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  Out o{-1, ""};
  if (!p) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.text.append(buf, n);
  o.status = pclose(p);
  return o;
}

const std::string kQwen = test::bundled_data("traces/qwen3-30b-a3b.route.csv");

TEST(ReplayCli, JsonSweepOfAllPolicies) {
  const Out o =
      cli("replay --trace " + kQwen + " --policy all --sweep 16,32 --scope global --json --threads 2", false);
  ASSERT_EQ(o.status, 0) << o.text;
  const auto start = o.text.find('{');
  ASSERT_NE(start, std::string::npos) << o.text;
  const Json j = parse_json_text(o.text.substr(start), "replay output");
  ASSERT_TRUE(j.contains("header"));
  // `all`: every registered eviction policy, then the variants lfu:history=1 and tinylfu:window=0, at each of
  // the 2 capacities.
  ASSERT_EQ(j["results"].size(), 2 * (EvictionRegistry::instance().entries().size() + 2));
  size_t variants = 0;
  for (const auto& r : j["results"])
    variants += r["eviction"] == "lfu:history=1" || r["eviction"] == "tinylfu:inner=lru,window=0,sample=32";
  EXPECT_EQ(variants, 4u);
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["scope"], "global");
    EXPECT_EQ(r["lookups"], 39526);
    EXPECT_GT(r["hits"].get<uint64_t>(), 0u);
    EXPECT_FALSE(r["read_bytes"].is_null());
  }
  // In the registry's order (alphabetical).
  EXPECT_EQ(j["results"][0]["eviction"],
            eviction_canonical_name(EvictionRegistry::instance().entries().front().name));
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
      {"--policy lruu --capacity 32", "known: 2q, activation-aware, arc, belady"},
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

std::string temp_file(const std::string& name) {
  return "/tmp/moesim_replay_cli_" + std::to_string(getpid()) + "_" + name;
}

Json json_of(const Out& o) {
  return parse_json_text(o.text.substr(o.text.find('{')), "replay output");
}

// `trace import --lookup-index` stores the lookup stream; `replay` then runs from it (without reading the
// records) and gives the same results and the same trace description as from the CSV.
TEST(ReplayCli, TheLookupIndexGivesTheSameResultsAsTheRecords) {
  const std::string plain = temp_file("plain.mtr"), indexed = temp_file("indexed.mtr");
  ASSERT_EQ(cli("trace import " + kQwen + " --no-lookup-index -o " + plain).status, 0);
  ASSERT_EQ(cli("trace import " + plain + " --lookup-index -o " + indexed).status, 0);
  // The index is the default: an import without either flag is the indexed file, byte for byte.
  const std::string by_default = temp_file("default.mtr");
  ASSERT_EQ(cli("trace import " + plain + " -o " + by_default).status, 0);
  EXPECT_EQ(read_file(by_default), read_file(indexed));
  EXPECT_NE(read_file(plain), read_file(indexed));
  for (const char* scope : {"global", "layer"}) {
    const std::string args =
        " --policy lru --policy belady --policy fifo --policy static-freq --budget 16,32,3000MiB "
        "--json --scope " +
        std::string(scope);
    const Out a = cli("replay " + kQwen + args, false), b = cli("replay " + indexed + args, false),
              c = cli("replay " + plain + args, false);
    ASSERT_EQ(a.status, 0) << a.text;
    ASSERT_EQ(b.status, 0) << b.text;
    ASSERT_EQ(c.status, 0) << c.text;
    Json ja = json_of(a), jb = json_of(b), jc = json_of(c);
    ASSERT_EQ(ja["results"].size(), 12u);
    for (Json* j : {&ja, &jb, &jc}) {
      for (auto& r : (*j)["results"]) {
        r.erase("replay_s");
        r.erase("lookups_per_s");
      }
      (*j)["trace"].erase("path");
    }
    EXPECT_EQ(jb["results"], ja["results"]) << scope;
    EXPECT_EQ(jc["results"], ja["results"]) << scope;
    // The trace description: the same counts (the provenance differs: the .mtr files were imported).
    for (const char* key :
         {"sequences", "prefill_tokens", "decode_tokens", "records", "missing_cells", "invocations",
          "lookups", "decode_lookups", "optional_columns", "expert_bytes", "layers", "experts"})
      EXPECT_EQ(jb["trace"][key], ja["trace"][key]) << key;
    EXPECT_EQ(jb["trace"], jc["trace"]);
  }
  // The table form from the index names the same stream.
  const Out t = cli("replay " + indexed + " --policy lru --budget 32");
  ASSERT_EQ(t.status, 0) << t.text;
  EXPECT_NE(t.text.find("6192 invocations, 39526 lookups"), std::string::npos) << t.text;
  // A corrupt section is an error naming the file and offset: one flipped byte in the key column.
  std::string bytes = read_file(indexed);
  uint32_t header_bytes;
  std::memcpy(&header_bytes, bytes.data() + 12, 4);
  const Json h = Json::parse(bytes.substr(32, header_bytes));
  const uint64_t key = h["lookups"]["columns"]["key"]["offset"].get<uint64_t>();
  bytes[key + 40] ^= 0x04;
  write_file_atomic(indexed, bytes);
  const Out bad = cli("replay " + indexed + " --policy lru --budget 32");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.text.find(indexed + ": at byte " + std::to_string(key) + ": lookups.key: XXH64 mismatch"),
            std::string::npos)
      << bad.text;
  const Out info = cli("trace info " + indexed);  // the full reader: the whole-file checksum
  EXPECT_NE(info.status, 0);
  EXPECT_NE(info.text.find(indexed + ": at byte 24: checksum"), std::string::npos) << info.text;
  std::remove(plain.c_str());
  std::remove(indexed.c_str());
}

// `trace export --to oraclegeneral`: libCacheSim's 24-byte requests of the lookup stream (the format is
// tested in tests/traces/export_oracle_general_test.cpp); bad options are usage errors.
TEST(ReplayCli, ExportsTheLookupsAsOracleGeneral) {
  const std::string og = temp_file("q.oracleGeneral");
  const Out o = cli("trace export " + kQwen + " --to oraclegeneral -o " + og);
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("39526 requests"), std::string::npos) << o.text;
  EXPECT_EQ(read_file(og).size(), 39526u * 24);
  std::remove(og.c_str());
  const Out bad = cli("trace export " + kQwen + " --to csv -o " + og);
  EXPECT_EQ(WEXITSTATUS(bad.status), 2) << bad.text;
  EXPECT_NE(bad.text.find("--to: unknown output format 'csv' (known: jsonl, oraclegeneral)"),
            std::string::npos)
      << bad.text;
  const Out batch = cli("trace export " + kQwen + " --batch 2 -o " + og);
  EXPECT_NE(batch.text.find("--batch applies to --to oraclegeneral only"), std::string::npos) << batch.text;
}

// `replay --prefetch`: the prefetch metrics of `run` (same keys), without timing ("late" is null).
TEST(ReplayCli, PrefetchMetricsUseRunsNames) {
  const std::string base = "replay " + kQwen + " --policy lru --budget 32 --json";
  const Out o =
      cli(base +
              " --prefetch oracle --prefetch none --prefetch oracle:accuracy=0.5 --prefetch temporal "
              "--prefetch transition:train=" +
              kQwen,
          false);
  ASSERT_EQ(o.status, 0) << o.text;
  const Json j = json_of(o);
  ASSERT_EQ(j["results"].size(), 5u);
  const Out run = cli("run " + kQwen + " --budget 32 --prefetch oracle --json", false);
  ASSERT_EQ(run.status, 0) << run.text;
  const Json run_prefetch = json_of(run)["metrics"]["prefetch"];
  for (const auto& r : j["results"]) {
    const Json& p = r["prefetch"];
    ASSERT_EQ(p.size(), run_prefetch.size()) << p.dump();
    for (const auto& [key, v] : run_prefetch.items()) EXPECT_TRUE(p.contains(key)) << key;
    EXPECT_TRUE(p["late"].is_null());
    EXPECT_EQ(p["useful"].get<uint64_t>() + p["useless"].get<uint64_t>(), p["issued"].get<uint64_t>())
        << r["prefetch_policy"];
    EXPECT_EQ(p["proposed"].get<uint64_t>(), p["already_resident"].get<uint64_t>() +
                                                 p["declined"].get<uint64_t>() + p["issued"].get<uint64_t>());
    EXPECT_EQ(r["lookups"], 39526);
  }
  const Json& oracle = j["results"][0]["prefetch"];
  const Json& none = j["results"][1]["prefetch"];
  const Json& half = j["results"][2]["prefetch"];
  EXPECT_EQ(j["results"][0]["prefetch_policy"], "oracle");
  // A perfect predictor: every issued prefetch is used by the invocation it was for.
  EXPECT_GT(oracle["issued"].get<uint64_t>(), 0u);
  EXPECT_EQ(oracle["accuracy"], 1.0);
  EXPECT_EQ(oracle["useless"], 0);
  EXPECT_EQ(oracle["useless_bytes"], 0);
  EXPECT_DOUBLE_EQ(oracle["coverage"].get<double>(), oracle["useful"].get<double>() / 39526.0);
  EXPECT_GT(j["results"][0]["hit_rate"].get<double>(), j["results"][1]["hit_rate"].get<double>());
  // No prefetching: nothing issued, accuracy undefined (null), the plain replay's hits.
  EXPECT_EQ(none["issued"], 0);
  EXPECT_TRUE(none["accuracy"].is_null());
  const Json plain = json_of(cli(base, false));
  EXPECT_EQ(j["results"][1]["hits"], plain["results"][0]["hits"]);
  // Half the oracle's proposals replaced by wrong experts: useless prefetches, with their bytes (3 MB each).
  EXPECT_LT(half["accuracy"].get<double>(), 0.75);
  EXPECT_GT(half["useless"].get<uint64_t>(), 0u);
  EXPECT_GT(half["useless_bytes"].get<uint64_t>(), half["useless"].get<uint64_t>() * 1000000);
  // Same seed, same result; the table names the metrics.
  EXPECT_EQ(json_of(cli(base + " --prefetch oracle:accuracy=0.5", false))["results"][0]["prefetch"], half);
  const Out t = cli("replay " + kQwen + " --policy lru --budget 32 --prefetch oracle");
  ASSERT_EQ(t.status, 0) << t.text;
  for (const char* word : {"accuracy", "coverage", "useless", "100.00%", "nothing is late"})
    EXPECT_NE(t.text.find(word), std::string::npos) << word << "\n" << t.text;
  // Errors.
  const Out unknown = cli(base + " --prefetch psychic");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.text.find("unknown prefetch policy 'psychic'"), std::string::npos) << unknown.text;
  const Out both = cli(base + " --prefetch oracle --routing prune:h=4");
  EXPECT_EQ(WEXITSTATUS(both.status), 2) << both.text;
  EXPECT_NE(both.text.find("--prefetch cannot be combined with --routing"), std::string::npos) << both.text;
  const Out shape =
      cli(base + " --prefetch transition:train=" + test::bundled_data("traces/gemma-4-26b-a4b.route.csv"));
  EXPECT_NE(shape.status, 0);
  EXPECT_NE(shape.text.find("the training trace has 30 layers x 128 experts, the run 48 x 128"),
            std::string::npos)
      << shape.text;
}

// `replay --mrc`: LRU's curve equals the replays in every counter (JSON), the CSV has a row per (policy,
// budget), the plot is written, from a plain .mtr as from the CSV; misuse is a usage error (exit 2).
TEST(ReplayCli, MissRatioCurveInJsonCsvAndPlot) {
  const std::string plain = temp_file("mrc-plain.mtr"), csv = temp_file("mrc.csv"),
                    png = temp_file("mrc.png");
  ASSERT_EQ(cli("trace import " + kQwen + " --no-lookup-index -o " + plain).status, 0);
  const std::string args = " --policy lru --policy fifo --budget 8,16,32,3000MiB --scope layer";
  const Out replays = cli("replay " + kQwen + args + " --json", false);
  ASSERT_EQ(replays.status, 0) << replays.text;
  const Json want = json_of(replays);
  for (const std::string& trace : {kQwen, plain}) {
    const Out o = cli("replay " + trace + args + " --mrc --json --csv " + csv, false);
    ASSERT_EQ(o.status, 0) << o.text;
    const Json j = json_of(o);
    ASSERT_EQ(j["mrc"].size(), 2u);
    EXPECT_EQ(j["mrc"][0]["method"], "stack-distance");
    EXPECT_EQ(j["mrc"][1]["method"], "shards");
    for (size_t i = 0; i < 4; ++i) {
      Json got = j["mrc"][0]["points"][i], r = want["results"][i];
      for (const char* key :
           {"hits", "misses", "decode_hits", "read_bytes", "evictions", "over_capacity_invocations",
            "max_over_capacity", "capacity", "capacity_experts"})
        EXPECT_EQ(got[key], r[key]) << key << " " << i;
      EXPECT_TRUE(j["mrc"][1]["points"][i]["estimated"].get<bool>());
      EXPECT_FALSE(j["mrc"][1]["points"][i].contains("evictions"));
    }
    const std::string table = read_file(csv);
    EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 9) << table;
    EXPECT_EQ(table.rfind("eviction,scope,capacity,", 0), 0u) << table;
  }
  // The whole curve by default (top-k .. experts per layer), and its plot.
  const Out all = cli("replay " + kQwen + " --mrc --policy lru --plot " + png);
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0) {
    ASSERT_EQ(all.status, 0) << all.text;
    EXPECT_GT(std::filesystem::file_size(png), 1000u);
  }
  const Out full = cli("replay " + kQwen + " --mrc --policy lru --json", false);
  EXPECT_EQ(json_of(full)["mrc"][0]["points"].size(), 128u - 6u + 1u);
  // Misuse.
  const Out no_mrc = cli("replay " + kQwen + " --policy lru --budget 8 --csv " + csv);
  EXPECT_EQ(WEXITSTATUS(no_mrc.status), 2) << no_mrc.text;
  EXPECT_NE(no_mrc.text.find("--csv and --plot need --mrc"), std::string::npos) << no_mrc.text;
  const Out rate = cli("replay " + kQwen + " --mrc --policy fifo --budget 8 --mrc-sample 0");
  EXPECT_EQ(WEXITSTATUS(rate.status), 2) << rate.text;
  const Out routing = cli("replay " + kQwen + " --mrc --policy lru --budget 8 --routing prune:h=4");
  EXPECT_EQ(WEXITSTATUS(routing.status), 2) << routing.text;
}

TEST(PoliciesCli, ListsEvictionPoliciesWithParameters) {
  const Out o = cli("policies");
  ASSERT_EQ(o.status, 0) << o.text;
  for (const char* name : {"lru", "lfu", "fifo", "random", "marking", "belady", "static-freq", "seed=1"})
    EXPECT_NE(o.text.find(name), std::string::npos) << name << "\n" << o.text;
}

}  // namespace
}  // namespace moesim::testing
