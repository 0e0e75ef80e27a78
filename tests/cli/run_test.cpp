// `moesim run` and `moesim compare` end to end on the bundled real trace (MOESIM_CLI_PATH).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using Result = moesim::test::ShellResult;  // status: exit code; out: stdout and stderr together

Result sh(const std::string& args) {
  return moesim::test::moesim_combined(args);
}

const std::string kTrace = moesim::test::bundled_data("traces/qwen3-30b-a3b.route.csv");

TEST(RunCli, JsonHasHeaderAndMetrics) {
  const Result r = sh("run --trace " + kTrace +
                      " --hw jetson-agx-orin-64gb --system offload --policy lru --budget 2GiB --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const moesim::Json j = moesim::Json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j.begin().key(), "header");
  EXPECT_EQ(j["header"]["command"], "run");
  EXPECT_EQ(j["header"]["config"]["eviction"], "lru");
  EXPECT_EQ(j["header"]["config"]["synthetic"], false);
  const auto& m = j["metrics"];
  EXPECT_EQ(m["tpot"]["count"], 128);
  EXPECT_GT(m["cache"]["hit_rate"].get<double>(), 0.0);
  EXPECT_LT(m["cache"]["hit_rate"].get<double>(), 1.0);
  EXPECT_GT(m["resources"]["ssd"]["utilization"].get<double>(), 0.0);
  EXPECT_LE(m["resources"]["ssd"]["utilization"].get<double>(), 1.0 + 1e-9);
}

// ZipMoE's hit rate counts an expert found in any pool (F, C, S, E), as every system's means "found
// resident": it equals the states line's F + C + S + E share, and the text says what it counts.
TEST(RunCli, ZipmoeHitRateCountsEveryResidentState) {
  const Result z =
      sh("run --trace " + kTrace + " --model qwen3-30b-a3b --system zipmoe --budget 8GiB --json");
  ASSERT_EQ(z.status, 0) << z.out;
  const moesim::Json j = moesim::Json::parse(z.out.substr(z.out.find('{')));
  const moesim::Json& found = j["metrics"]["states"]["lookups"];
  const uint64_t resident = found["F"].get<uint64_t>() + found["C"].get<uint64_t>() +
                            found["S"].get<uint64_t>() + found["E"].get<uint64_t>();
  EXPECT_EQ(j["metrics"]["cache"]["hits"].get<uint64_t>(), resident);
  EXPECT_GT(found["C"].get<uint64_t>(), 0u);  // the compressed pool's hits are in it
  const Result text = sh("run --trace " + kTrace + " --model qwen3-30b-a3b --system zipmoe --budget 8GiB");
  EXPECT_NE(text.out.find("; any resident state (F, C, S, E): the split is under states"), std::string::npos)
      << text.out;
  const Result o = sh("run --trace " + kTrace + " --model qwen3-30b-a3b --system offload --budget 8GiB");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(o.out.find("any resident state"), std::string::npos) << o.out;
}

// --host-budget 0 (with or without a unit) means no host tier: the run is the one without the option, on any
// system; a 0 with a unit that is none is refused.
TEST(RunCli, HostBudgetZeroMeansNoHostTier) {
  const std::string base = "run --trace " + kTrace + " --hw desktop-rtx4090 --budget 2GiB --json";
  auto metrics = [&](const std::string& extra) {
    const Result r = sh(base + extra);
    EXPECT_EQ(r.status, 0) << r.out;
    return moesim::Json::parse(r.out.substr(r.out.find('{')))["metrics"];
  };
  const moesim::Json none = metrics("");
  for (const char* zero : {" --host-budget 0", " --host-budget 0GiB", " --host-budget 0.0MB"})
    EXPECT_EQ(metrics(zero), none) << zero;
  EXPECT_NE(metrics(" --host-budget 8GiB"), none);  // a real tier changes the run
  const Result bad = sh(base + " --host-budget 0parsecs");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("unknown unit 'parsecs'"), std::string::npos) << bad.out;
  const Result z =
      sh("run --trace " + kTrace + " --model qwen3-30b-a3b --system zipmoe --budget 8GiB --host-budget 0");
  EXPECT_EQ(z.status, 0) << z.out;
}

// The global-cache working-set warning (48 layers x top-6 = 288 experts > 2 GiB / 9 MiB) is for offload's
// global cache; zipmoe's pools are per layer and compressed, so it gets none.
TEST(RunCli, WorkingSetWarningOnlyForAGlobalCache) {
  const std::string args = "run --trace " + kTrace + " --model qwen3-30b-a3b --budget 2GiB --json --system ";
  const Result o = sh(args + "offload");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("smaller than one token's working set"), std::string::npos) << o.out;
  const Result z = sh(args + "zipmoe");
  ASSERT_EQ(z.status, 0) << z.out;
  EXPECT_EQ(z.out.find("working set"), std::string::npos) << z.out;
}

TEST(RunCli, EveryBundledHardwareProfileRunsAndIsListed) {
  const Result presets = sh("presets");
  ASSERT_EQ(presets.status, 0) << presets.out;
  for (const auto& e : std::filesystem::directory_iterator(moesim::test::bundled_data("hardware"))) {
    const std::string name = e.path().stem().string();
    SCOPED_TRACE(name);
    EXPECT_NE(presets.out.find(name), std::string::npos);
    // CPU placement runs everywhere (the phone profile computes experts on its CPU).
    const Result r = sh("run --trace " + kTrace + " --hw " + name +
                        " --model qwen3-30b-a3b --system zipmoe --recover-on cpu --compute-on cpu --budget "
                        "4GiB --force --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const moesim::Json j = moesim::Json::parse(r.out.substr(r.out.find('{')));
    EXPECT_GT(j["metrics"]["tpot"]["mean_s"].get<double>(), 0.0);
  }
}

TEST(RunCli, SameCommandTwiceGivesIdenticalMetrics) {
  const std::string args = "run --trace " + kTrace + " --budget 1GiB --policy random:seed=5 --json";
  const Result a = sh(args), b = sh(args);
  ASSERT_EQ(a.status, 0) << a.out;
  const auto ja = moesim::Json::parse(a.out.substr(a.out.find('{')));
  const auto jb = moesim::Json::parse(b.out.substr(b.out.find('{')));
  EXPECT_EQ(ja["metrics"].dump(), jb["metrics"].dump());
}

TEST(RunCli, SummaryAndTimeline) {
  const auto dir = std::filesystem::temp_directory_path() / ("moesim_run_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string tl = (dir / "tl.json").string();
  const Result r = sh("run --trace " + kTrace + " --budget 4GiB --timeline " + tl);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("TPOT"), std::string::npos);
  EXPECT_NE(r.out.find("hit rate"), std::string::npos);
  const moesim::Json t = moesim::load_json_file(tl);
  ASSERT_TRUE(t.is_array());
  size_t x = 0;
  for (const auto& e : t)
    if (e["ph"] == "X") {
      ++x;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_TRUE(e.contains("ts") && e.contains("tid") && e.contains("pid") && e.contains("name"));
    }
  EXPECT_GT(x, 1000u);
  std::filesystem::remove_all(dir);
}

TEST(RunCli, TimelineStepsKeepsOnlyTheWindowWithNamedTracks) {
  const auto dir = std::filesystem::temp_directory_path() / ("moesim_run_tw_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string tl = (dir / "tl.json").string();
  Result r = sh("run --trace " + kTrace + " --budget 2GiB --timeline " + tl + " --timeline-steps 3:5");
  ASSERT_EQ(r.status, 0) << r.out;
  const moesim::Json t = moesim::load_json_file(tl);
  std::set<uint64_t> steps;
  std::set<std::string> processes;
  size_t counters = 0;
  for (const auto& e : t) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "C") ++counters;
    if (e["ph"] == "X" && e.contains("args") && e["args"].contains("step"))
      steps.insert(e["args"]["step"].get<uint64_t>());
  }
  EXPECT_EQ(steps, (std::set<uint64_t>{3, 4, 5}));
  EXPECT_TRUE(processes.count("SSD") && processes.count("GPU") && processes.count("steps")) << t.dump();
  EXPECT_GT(counters, 0u);
  // Bad windows are usage errors, before any simulation and without a file.
  const std::string tl2 = (dir / "tl2.json").string();
  for (const std::string w : {"5:3", "999:", "x", ""}) {
    r = sh("run --trace " + kTrace + " --budget 2GiB --timeline " + tl2 + " --timeline-steps '" + w + "'");
    EXPECT_EQ(r.status, 2) << w << ": " << r.out;
    EXPECT_NE(r.out.find("moesim: error: --timeline-steps"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(tl2));
  }
  r = sh("run --trace " + kTrace + " --budget 2GiB --timeline-steps 1:2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--timeline-steps needs --timeline"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

TEST(RunCli, Errors) {
  Result r = sh("run --trace " + kTrace + " --budget 10MiB");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("top-k"), std::string::npos) << r.out;
  r = sh("run --trace " + kTrace + " --budget 1GiB --system zipmoe");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--system"), std::string::npos) << r.out;
  r = sh("run --trace /nonexistent.csv --budget 1GiB");
  EXPECT_NE(r.status, 0);
}

TEST(CompareCli, TableHasEveryCell) {
  const Result r = sh("compare --trace " + kTrace + " --policies lru,belady --budgets 1GiB,4GiB --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = moesim::Json::parse(r.out.substr(r.out.find('{')));
  // budgets x scopes (global and per-layer by default) x policies, each row labelled with its scope.
  ASSERT_EQ(j["rows"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(j["rows"][i]["scope"], (i / 2) % 2 == 0 ? "global" : "layer") << i;
  // Belady is optimal for hits at a fixed budget and scope.
  for (size_t i = 0; i < 8; i += 2)
    EXPECT_GE(j["rows"][i + 1]["metrics"]["cache"]["hits"].get<uint64_t>(),
              j["rows"][i]["metrics"]["cache"]["hits"].get<uint64_t>())
        << i;
}

TEST(CompareCli, ScopesAreChosenAndLabelled) {
  const Result one = sh("compare --trace " + kTrace + " --policies lru --budgets 2GiB --scope layer --json");
  ASSERT_EQ(one.status, 0) << one.out;
  const auto j = moesim::Json::parse(one.out.substr(one.out.find('{')));
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["scope"], "layer");
  EXPECT_EQ(j["header"]["config"]["scope"], moesim::Json::array({"layer"}));
  const Result text = sh("compare --trace " + kTrace + " --policies lru --budgets 2GiB");
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("global and layer scope"), std::string::npos) << text.out;
  const Result twice = sh("compare --trace " + kTrace + " --policies lru --budgets 2GiB --scope layer,layer");
  EXPECT_EQ(twice.status, 2) << twice.out;
  EXPECT_NE(twice.out.find("twice"), std::string::npos) << twice.out;
}

TEST(CompareCli, AWarningAboutTheBudgetIsRaisedOnceWhateverTheScopes) {
  // 17 GiB holds every expert of the trace's quantized file (16.35 GiB): a warning of the budget, not the
  // scope.
  const Result r = sh("compare --trace " + kTrace + " --policies lru --budgets 17GiB --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = moesim::Json::parse(r.out.substr(r.out.find('{')));
  int all_fit = 0;
  for (const auto& w : j["warnings"])
    all_fit += w.get<std::string>().find("holds all experts") != std::string::npos;
  EXPECT_EQ(all_fit, 1) << j["warnings"].dump();
}

TEST(CompareCli, AScopeThatCannotHoldTheBudgetIsLeftOutWithAWarning) {
  // The tiny model (4 layers, 16 experts, top-2): 1 MiB is a global cache of 5 experts but leaves each layer
  // room for 1, below top_k; 2 MiB holds 2 per layer. So 1 MiB has a global row only, 2 MiB both, and the
  // left-out cell is said, not silently dropped.
  const std::string dir =
      std::filesystem::temp_directory_path() / ("moesim_scope_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string model = moesim::test::test_data("models/tiny-moe.json");
  ASSERT_EQ(
      sh("-q trace synth --model " + model + " --tokens 40 --seed 1 --zipf 1.0 -o " + dir + "/z.mtr").status,
      0);
  const Result r =
      sh("compare --trace " + dir + "/z.mtr --model " + model + " --policies lru --budgets 1MiB,2MiB --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = moesim::Json::parse(r.out.substr(r.out.find('{')));
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][0]["scope"], "global");
  EXPECT_EQ(j["rows"][1]["scope"], "global");
  EXPECT_EQ(j["rows"][2]["scope"], "layer");
  EXPECT_NE(j["warnings"].dump().find("has no layer scope"), std::string::npos) << j["warnings"].dump();
  // Asked for the per-layer scope alone, the budget is an error.
  EXPECT_NE(sh("compare --trace " + dir + "/z.mtr --model " + model +
               " --policies lru --budgets 1MiB --scope layer")
                .status,
            0);
  std::filesystem::remove_all(dir);
}

TEST(CompareCli, CsvHasOneRowPerCell) {
  const std::string csv =
      (std::filesystem::temp_directory_path() / ("moesim_cmp_" + std::to_string(getpid()) + ".csv")).string();
  const Result r =
      sh("compare --trace " + kTrace + " --policies lru,fifo,belady --budgets 2GiB --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("belady"), std::string::npos);
  FILE* f = std::fopen(csv.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n';
  std::fclose(f);
  EXPECT_EQ(lines, 7);  // header + 3 policies x 2 scopes
  std::filesystem::remove(csv);
}

}  // namespace

// compare reads any importable trace: a JSONL trace with the user's own key names, through --fields.
TEST(CompareCli, ReadsJsonlWithCustomKeysThroughFields) {
  const std::string fixture = moesim::test::test_data("traces/custom_keys.jsonl");
  const std::string fields = "seq=req,phase=stage,token=pos,layer=moe_layer,experts=topk,weights=probs";
  const Result ok = sh("compare --trace " + fixture + " --fields " + fields +
                       " --model olmoe-1b-7b --budgets 8,16 --policies lru --json");
  ASSERT_EQ(ok.status, 0) << ok.out;
  const moesim::Json j = moesim::Json::parse(ok.out.substr(ok.out.find('{')));
  EXPECT_EQ(j["rows"].size(), 4u);  // 2 budgets x 2 scopes
  // Without the mapping the same file is rejected with an error naming the missing field.
  const Result bad = sh("compare --trace " + fixture + " --model olmoe-1b-7b --budgets 8 --policies lru");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("custom_keys.jsonl"), std::string::npos) << bad.out;
}

namespace {

TEST(RunCli, BudgetIsReportedInItsOwnUnit) {
  // A budget of 16 experts per layer is not 16 bytes: the JSON keeps the two units apart.
  Result r = sh("run --trace " + kTrace + " --budget 16 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  moesim::Json c = moesim::Json::parse(r.out.substr(r.out.find('{')))["header"]["config"];
  EXPECT_TRUE(c["budget_bytes"].is_null());
  EXPECT_EQ(c["budget_experts_per_layer"], 16);
  EXPECT_EQ(c["cache_capacity_experts"], 16 * 48);
  r = sh("run --trace " + kTrace + " --budget 2GiB --json");
  ASSERT_EQ(r.status, 0) << r.out;
  c = moesim::Json::parse(r.out.substr(r.out.find('{')))["header"]["config"];
  EXPECT_EQ(c["budget_bytes"], uint64_t{2} << 30);
  EXPECT_TRUE(c["budget_experts_per_layer"].is_null());
}

}  // namespace

namespace {

TEST(RunCli, LongTracePathIsPrintedWhole) {
  // Text lines are formatted into strings sized to fit: a 2,000+ character path is not cut short.
  auto dir = std::filesystem::temp_directory_path() / ("moesim_run_long_" + std::to_string(getpid()));
  const auto root = dir;
  for (int i = 0; i < 12; ++i) dir /= std::string(180, static_cast<char>('a' + i));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "qwen3.route.csv").string();
  ASSERT_GT(trace.size(), 2100u);
  std::filesystem::copy_file(kTrace, trace);
  const Result r = sh("run --trace " + trace + " --budget 2GiB");
  ASSERT_EQ(r.status, 0) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("trace:   " + trace + " ("), std::string::npos);
  std::filesystem::remove_all(root);
}

}  // namespace

// A predictor that is always wrong proposes far more loads than the SSD serves; they yield to demand reads
// and each holds its invocation until it runs. The pipeline bounds that backlog (declining proposals, with a
// warning) instead of running out of invocation slots.
TEST(RunCli, AnUnservablePrefetchBacklogIsBoundedWithAWarning) {
  const Result r = sh("run --trace " + kTrace +
                      " --model qwen3-30b-a3b --hw jetson-agx-orin-64gb "
                      "--system offload --budget 4GiB --prefetch oracle:accuracy=0 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const moesim::Json j = moesim::Json::parse(r.out.substr(r.out.find('{')));
  EXPECT_NE(j["warnings"].dump().find("further proposals are declined"), std::string::npos) << j["warnings"];
  const auto& p = j["metrics"]["prefetch"];
  EXPECT_GT(p["declined"].get<uint64_t>(), 0u);
  EXPECT_EQ(p["accuracy"].get<double>(), 0.0);
}

// A zipmoe budget too small for one expert in any pool leaves every layer without a resident expert: the run
// still runs (every lookup misses), and says so as `moesim plan` does, in the text and in the JSON, for `run`
// and for `exec` alike (both build the system in serving::run).
TEST(RunCli, ABudgetLeavingLayersWithoutExpertsWarns) {
  const std::string zipmoe = " --model qwen3-30b-a3b --system zipmoe --budget 1KiB";
  const Result j = sh("run --trace " + kTrace + zipmoe + " --json");
  ASSERT_EQ(j.status, 0) << j.out;
  const moesim::Json doc = moesim::Json::parse(j.out.substr(j.out.find('{')));
  EXPECT_NE(doc["warnings"].dump().find("leaves each of the 48 layers 0 resident experts"), std::string::npos)
      << doc["warnings"];
  const moesim::test::CliResult t = moesim::test::moesim_cli("run --trace " + kTrace + zipmoe);
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(
      t.err.find(
          "moesim: warning: --system zipmoe: --budget 1.00 KiB leaves each of the 48 layers 0 resident"),
      std::string::npos)
      << t.err;
  // A budget that holds experts: no such warning.
  const Result ok =
      sh("run --trace " + kTrace + " --model qwen3-30b-a3b --system zipmoe --budget 8GiB --json");
  ASSERT_EQ(ok.status, 0) << ok.out;
  EXPECT_EQ(ok.out.find("0 resident experts"), std::string::npos);
}

TEST(RunCli, ExecWithABudgetLeavingLayersWithoutExpertsWarns) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const std::string dir = moesim::test::temp_path("exec_no_experts");
  std::filesystem::create_directories(dir);
  const std::string model = moesim::test::test_data("models/tiny-moe.json");
  ASSERT_EQ(sh("-q weights synth --model " + model + " --seed 1 -o " + dir + "/w.safetensors").status, 0);
  ASSERT_EQ(sh("-q pack --weights " + dir + "/w.safetensors --codec zstd:3 --shards 2 -o " + dir + "/z.store")
                .status,
            0);
  ASSERT_EQ(sh("-q trace synth --model " + model + " --tokens 4 --prompt-tokens 4 --zipf 0.8 --seed 3 -o " +
               dir + "/t.mtr")
                .status,
            0);
  const moesim::test::CliResult r = moesim::test::moesim_cli(
      "exec " + dir + "/t.mtr --model " + model + " --store " + dir +
      "/z.store --system zipmoe --recover-on cpu --budget 1KiB --workers 2 --buffered --gpu off --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const moesim::Json doc = moesim::Json::parse(r.out);
  EXPECT_NE(doc["warnings"].dump().find("leaves each of the 4 layers 0 resident experts"), std::string::npos)
      << doc["warnings"];
  EXPECT_NE(r.err.find("0 resident experts"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}
