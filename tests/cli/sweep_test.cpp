// `moesim sweep` and `moesim merge` end to end: an unsharded run, the same spec as 4 shards under GNU
// parallel, and a run killed mid-way (SIGKILL) then resumed give byte-identical merged CSVs; a point's
// result is its command's (run or replay, in process); a point keeps its own warnings; merge refuses
// another spec's shards; spec errors name the file and the JSON path; a huge grid warns or needs --force;
// --resume removes a killed run's temporaries; a failed merge leaves no folder; a full disk is counted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

const std::string kCli = MOESIM_CLI_PATH;

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// Finished point files in DIR/points (what a killed sweep leaves: no temporaries, no outputs in flight).
size_t points_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/points"))
    if (e.path().extension() == ".json" && e.path().stem().string().size() == 16) ++n;
  return n;
}

Json point_json(const std::string& dir, size_t index) {
  for (const auto& e : std::filesystem::directory_iterator(dir + "/points"))
    if (e.path().extension() == ".json") {
      Json j = Json::parse(read_text(e.path().string()));
      if (j["index"] == index) return j;
    }
  return Json();
}

class SweepCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_path("sweep_cli");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // A synthetic Qwen3-shaped trace: about 20 ms a point, so a sweep of 13 points can be killed mid-way.
    ASSERT_EQ(
        moesim_cli("-q trace synth --model qwen3-30b-a3b --tokens 100 --prompt-tokens 8 --zipf 0.8 --seed 3 "
                   "-o " +
                   dir_ + "/q.mtr")
            .code,
        0);
    // 3 policies x 2 budgets x 2 seeds = 12 run points and one replay point; the trace path is relative to
    // the spec's folder.
    std::ofstream(dir_ + "/spec.json")
        << R"({"description": "test", "grid": {"trace": ["q.mtr"], "system": ["offload"],
        "policy": ["lru", "lfu", "belady"], "budget": ["16", "32"], "seed": [1, 2]},
        "points": [{"command": "replay", "trace": "q.mtr", "policy": "lru", "budget": "32"}]})";
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string dir_;
};
std::string SweepCli::dir_;

TEST_F(SweepCli, ShardedKilledAndUnshardedRunsGiveTheSameCsv) {
  const std::string spec = dir_ + "/spec.json";
  const CliResult whole = moesim_cli("-q sweep " + spec + " --jobs 2 -o " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  const std::string csv = read_text(dir_ + "/whole/results.csv");
  ASSERT_EQ(count_lines(csv), 14u) << csv;  // header + 13 points
  EXPECT_THAT(csv, HasSubstr("\n0,\"run\",\"q.mtr\",,,\"offload\",\"lru\",,,\"16\",,,\"1\","));
  EXPECT_THAT(csv, HasSubstr("\n12,\"replay\",\"q.mtr\",,,,\"lru\",,,\"32\",,,,"));
  EXPECT_THAT(read_text(dir_ + "/whole/manifest.json"), HasSubstr("\"state\": \"finished\""));

  // 4 shards, run by GNU parallel as on a cluster, then merged.
  ASSERT_EQ(run_shell("parallel --version > /dev/null 2>&1").status, 0)
      << "GNU parallel is missing: scripts/build installs Debian's `parallel`";
  const ShellResult par = run_shell("parallel --will-cite -j 4 " + kCli + " -q sweep " + spec +
                                    " --jobs 1 --shard {}/4 -o " + dir_ + "/shard{} ::: 0 1 2 3 2>&1");
  ASSERT_EQ(par.status, 0) << par.out;
  const CliResult merged = moesim_cli("-q merge " + dir_ + "/shard0 " + dir_ + "/shard1 " + dir_ +
                                      "/shard2 " + dir_ + "/shard3 -o " + dir_ + "/merged");
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(read_text(dir_ + "/merged/results.csv"), csv);
  EXPECT_EQ(points_in(dir_ + "/merged"), 13u);

  // Killed with SIGKILL once 3 points are done (2 more in flight), then resumed.
  const std::string killed = dir_ + "/killed";
  const ShellResult kill = run_shell("{ " + kCli + " -q sweep " + spec + " --jobs 2 -o " + killed +
                                     " & pid=$!; i=0; "
                                     "while [ $i -lt 1000 ] && [ \"$(ls " +
                                     killed +
                                     "/points 2>/dev/null | grep -c '^[0-9a-f]*\\.json$')\" -lt 3 ]; "
                                     "do sleep 0.005; i=$((i+1)); done; kill -9 $pid && echo KILLED; wait "
                                     "$pid; echo status $?; } 2>/dev/null");
  ASSERT_THAT(kill.out, HasSubstr("KILLED\nstatus 137")) << "the sweep ended before it could be killed";
  const size_t left = points_in(killed);
  EXPECT_GE(left, 3u);
  EXPECT_LT(left, 13u);
  EXPECT_FALSE(std::filesystem::exists(killed + "/results.csv"));
  EXPECT_EQ(moesim_cli("-q sweep " + spec + " --jobs 1 -o " + killed).code, 2);  // not without --resume
  const CliResult resumed = moesim_cli("-q sweep " + spec + " --jobs 1 --resume -o " + killed);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_THAT(resumed.err, HasSubstr("(" + std::to_string(13 - left) + " this run)"));
  EXPECT_EQ(read_text(killed + "/results.csv"), csv);

  // A point lost on purpose is run again by --resume, and only it.
  const Json lost = point_json(dir_ + "/whole", 5);
  std::filesystem::remove(dir_ + "/whole/points/" + lost["id"].get<std::string>() + ".json");
  const CliResult again = moesim_cli("-q sweep " + spec + " --resume -o " + dir_ + "/whole");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("(1 this run)"));
  EXPECT_EQ(read_text(dir_ + "/whole/results.csv"), csv);
}

// A point runs its command's own code: its metrics are what `moesim run --json` / `moesim replay --json`
// print for the same options.
TEST_F(SweepCli, PointsAreTheirCommandsResults) {
  const std::string out = dir_ + "/same";
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/spec.json --shard 0/4 -o " + out).code,
            0);  // points 0, 4, 8, 12
  const Json p4 = point_json(out, 4);
  ASSERT_EQ(p4["point"]["policy"], "lfu");
  EXPECT_EQ(
      p4["args"].dump(),
      R"(["run","--trace","q.mtr","--system","offload","--policy","lfu","--budget","16","--seed","1"])");
  const CliResult run = moesim_cli("-q run --trace " + dir_ +
                                   "/q.mtr --system offload --policy lfu --budget 16 "
                                   "--seed 1 --json");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(p4["metrics"].dump(), Json::parse(run.out)["metrics"].dump());

  const Json p12 = point_json(out, 12);
  const CliResult replay = moesim_cli("-q replay --trace " + dir_ + "/q.mtr --policy lru --budget 32 --json");
  ASSERT_EQ(replay.code, 0) << replay.err;
  const Json r = Json::parse(replay.out)["results"][0];
  for (const char* k : {"hit_rate", "decode_hit_rate", "lookups", "hits", "evictions", "capacity_experts"})
    EXPECT_EQ(p12["metrics"][k], r[k]) << k;
}

TEST_F(SweepCli, EachPointKeepsItsOwnWarnings) {
  // --batch 4 on a one-sequence trace warns; the other points do not, whichever thread ran next to it.
  std::ofstream(dir_ + "/warn.json") << R"({"points": [{"trace": "q.mtr", "budget": "32"},
      {"trace": "q.mtr", "budget": "32", "batch": 4}, {"trace": "q.mtr", "budget": "16"}, {"trace": "q.mtr", "budget": "48"}]})";
  const CliResult r = moesim_cli("sweep " + dir_ + "/warn.json --jobs 2 -o " + dir_ + "/warn");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("moesim: warning: [1 point] "));
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(point_json(dir_ + "/warn", i)["warnings"].size(), i == 1 ? 1u : 0u) << i;
  // The CSV's last column counts them.
  const std::string csv = read_text(dir_ + "/warn/results.csv");
  EXPECT_THAT(csv, HasSubstr("\n0,\"run\",\"q.mtr\",,,,,,,\"32\",,,"));
  EXPECT_THAT(csv, ::testing::ContainsRegex("\n1,\"run\",\"q.mtr\",,,,,,,\"32\",,\"4\",[^\n]*,1\n2,"));
  EXPECT_THAT(csv, ::testing::ContainsRegex("\n2,[^\n]*,0\n3,"));
}

TEST_F(SweepCli, APointGivenTwiceRunsOnce) {
  // Points 0, 2 and 3 are one point (the same command line): it runs once, on whichever thread, and its
  // file gives all three rows.
  std::ofstream(dir_ + "/twice.json") << R"({"grid": {"trace": ["q.mtr"], "budget": ["32", "16", "32", "32"]},
      "points": [{"trace": "q.mtr", "budget": "16"}]})";
  const CliResult r = moesim_cli("-q sweep " + dir_ + "/twice.json --jobs 4 -o " + dir_ + "/twice");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("5 of 5 points of shard 0/1 done (2 this run)"));
  EXPECT_EQ(points_in(dir_ + "/twice"), 2u);
  const std::string csv = read_text(dir_ + "/twice/results.csv");
  ASSERT_EQ(count_lines(csv), 6u) << csv;
  auto row = [&](int i) {  // the metric columns of row i
    const size_t at = csv.find("\n" + std::to_string(i) + ",\"run\"");
    const std::string line = csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
    return line.substr(line.find("\"32\"") == std::string::npos ? line.find("\"16\"") : line.find("\"32\""));
  };
  EXPECT_EQ(row(0), row(2));
  EXPECT_EQ(row(0), row(3));
  EXPECT_EQ(row(1), row(4));
  EXPECT_NE(row(0), row(1));
}

TEST_F(SweepCli, MergeRefusesAnotherSpecsShardsAndReportsMissingPoints) {
  std::ofstream(dir_ + "/other.json")
      << R"({"grid": {"trace": ["q.mtr"], "policy": ["fifo"], "budget": ["16"]}})";
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/other.json -o " + dir_ + "/o1").code, 0);
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/spec.json --shard 0/8 -o " + dir_ + "/o2").code, 0);
  CliResult r = moesim_cli("-q merge " + dir_ + "/o2 " + dir_ + "/o1 -o " + dir_ + "/o3");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("/o1: a shard of another spec"));
  // One shard of eight: merged, with the missing points said.
  r = moesim_cli("-q merge " + dir_ + "/o2 -o " + dir_ + "/o4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("11 of the spec's 13 points are in none of the folders"));
  EXPECT_EQ(count_lines(read_text(dir_ + "/o4/results.csv")), 3u);
  // The same spec with its keys in another order and other spacing is the same spec (same hash).
  std::ofstream(dir_ + "/reordered.json")
      << R"({"grid":{"budget":["16"],"policy":["fifo"],"trace":["q.mtr"]}})";
  r = moesim_cli("-q sweep " + dir_ + "/reordered.json --resume -o " + dir_ + "/o1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("(0 this run)"));
}

TEST_F(SweepCli, SpecErrorsNameTheFileAndThePath) {
  struct Case {
    const char* spec;
    const char* error;
  };
  const Case cases[] = {
      {R"({"grid": {"trace": ["q.mtr"], "policy": "lru"}})", "/grid/policy: expected a non-empty list"},
      {R"({"grid": {"trace": ["q.mtr"], "colour": ["red"]}})", "/grid/colour: unknown parameter"},
      {R"({"grid": {"trace": ["q.mtr"], "budget": ["4", [8]]}})",
       "/grid/budget/1: expected a string or a number"},
      {R"({"command": "replay", "grid": {"trace": ["q.mtr"], "hw": ["desktop-rtx4090"]}})",
       "/grid/hw: `moesim replay` points take no hw"},
      {R"({"points": [{"trace": "q.mtr"}, {"command": "exec", "trace": "q.mtr"}]})",
       "/points/1/command: unknown command 'exec'"},
      {R"({"points": [{"budget": "4"}]})", "/points/0: the point has no trace"},
      {R"({"grid": {"trace": ["q.mtr"]}, "options": ["--io-depth", "4", "--policy=lru"]})",
       "/options/2: --policy is a sweep parameter"},
      {R"({"grid": {"trace": ["q.mtr"]}, "options": ["-o", "x"]})", "/options/0: -o is the sweep's to set"},
      {R"({"grid": {"trace": ["q.mtr"]}, "seeds": [1]})", "/seeds: unknown key"},
      {R"({"grid": {"trace": ["q.mtr"]})", "bad.json: not valid JSON"},
  };
  for (const Case& c : cases) {
    std::filesystem::remove_all(dir_ + "/b");
    std::ofstream(dir_ + "/bad.json") << c.spec;
    const CliResult r = moesim_cli("-q sweep " + dir_ + "/bad.json -o " + dir_ + "/b");
    EXPECT_EQ(r.code, 1) << c.spec;
    EXPECT_THAT(r.err, HasSubstr(c.error)) << c.spec;
    EXPECT_THAT(r.err, HasSubstr("bad.json")) << c.spec;
  }
  CliResult r = moesim_cli("-q sweep " + dir_ + "/spec.json --shard 4/4 -o " + dir_ + "/b");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--shard"));
  // Points that fail are recorded with their errors, every other point still runs, and the sweep fails.
  std::ofstream(dir_ + "/failing.json") << R"({"points": [{"trace": "no-such.mtr", "budget": "16"},
      {"trace": "q.mtr", "budget": "32"}, {"trace": "q.mtr", "budget": "32", "system": "warp-drive"}]})";
  r = moesim_cli("-q sweep " + dir_ + "/failing.json -o " + dir_ + "/f");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("2 point(s) failed"));
  EXPECT_THAT(r.err, HasSubstr("no-such.mtr"));
  const std::string manifest = read_text(dir_ + "/f/manifest.json");
  EXPECT_THAT(manifest, HasSubstr("no-such.mtr"));
  EXPECT_THAT(manifest, HasSubstr("unknown system 'warp-drive'"));
  EXPECT_EQ(count_lines(read_text(dir_ + "/f/results.csv")), 2u);
  // An option the command does not know fails the spec before any point runs, with the command's own message.
  std::ofstream(dir_ + "/badopt.json")
      << R"({"grid": {"trace": ["q.mtr"], "budget": ["32"]}, "options": ["--warp", "9"]})";
  r = moesim_cli("-q sweep " + dir_ + "/badopt.json -o " + dir_ + "/g");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("badopt.json: /options: do not fit `moesim run`: bad options for `moesim run`"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/g"));
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
}

}  // namespace
}  // namespace moesim::test

namespace moesim::test {
namespace {

// A grid of `n` seeds times the budgets (a JSON list) on the fixture's trace.
std::string seeds_spec(size_t n, const std::string& budgets = R"(["32"])") {
  std::string s = R"({"grid": {"trace": ["q.mtr"], "budget": )" + budgets + R"(, "seed": [)";
  for (size_t i = 1; i <= n; ++i) s += (i > 1 ? "," : "") + std::to_string(i);
  return s + "]}}";
}

TEST_F(SweepCli, AGridOfOver100000PointsWarnsWithItsCountAndTime) {
  std::ofstream(dir_ + "/big.json") << seeds_spec(100400);
  // One shard of 20081 runs 5 of the points (0, 20081, ...): the warning still counts the grid.
  const CliResult r =
      moesim_cli("-q sweep " + dir_ + "/big.json --jobs 2 --shard 0/20081 -o " + dir_ + "/big");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("big.json has 100400 points (5 to run here): about "));
  EXPECT_THAT(r.err, HasSubstr("with --jobs 2, estimated from its first point"));
  EXPECT_EQ(points_in(dir_ + "/big"), 5u);
  // A small grid says nothing of the kind.
  const CliResult small = moesim_cli("-q sweep " + dir_ + "/spec.json --shard 1/8 -o " + dir_ + "/small");
  ASSERT_EQ(small.code, 0) << small.err;
  EXPECT_THAT(small.err, Not(HasSubstr("estimated from")));
}

TEST_F(SweepCli, AGridOfOver10MillionPointsNeedsForce) {
  // 2501 budgets x 4000 seeds: refused before the points are built (they would take gigabytes).
  std::string budgets = "[";
  for (int b = 1; b <= 2501; ++b) budgets += (b > 1 ? "," : "") + std::to_string(b);
  std::ofstream(dir_ + "/huge.json") << seeds_spec(4000, budgets + "]");
  const CliResult r = moesim_cli("-q sweep " + dir_ + "/huge.json -o " + dir_ + "/huge");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("huge.json: 10004000 points, more than 10000000"));
  EXPECT_THAT(r.err, HasSubstr("--force"));
  EXPECT_FALSE(fs::exists(dir_ + "/huge"));
}

TEST_F(SweepCli, ResumeRemovesAKilledRunsTemporaries) {
  const std::string out = dir_ + "/stale";
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/spec.json --shard 2/4 -o " + out).code, 0);
  const std::string id = point_json(out, 2)["id"].get<std::string>();
  fs::remove(out + "/points/" + id + ".json");
  // What SIGKILL leaves: temporaries of point files, of a command's output and of the CSV and manifest,
  // and a command's output in flight. A file of the user's own beside them is kept.
  const std::vector<std::string> stale = {"points/.moesim-a1b2c3", "points/" + id + ".out",
                                          "points/.moesim-d4e5f6", ".moesim-g7h8i9", ".moesim-j0k1l2"};
  for (const auto& f : stale) std::ofstream(out + "/" + f) << "partial";
  std::ofstream(out + "/notes.txt") << "mine";
  const CliResult r = moesim_cli("-q sweep " + dir_ + "/spec.json --shard 2/4 --resume -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("removed 5 temporary file(s) of an earlier, interrupted run"));
  for (const auto& f : stale) EXPECT_FALSE(fs::exists(out + "/" + f)) << f;
  EXPECT_TRUE(fs::exists(out + "/notes.txt"));
  EXPECT_EQ(points_in(out), 3u);  // points 2, 6, 10
}

TEST_F(SweepCli, AFailedMergeLeavesNoFolder) {
  const std::string shard = dir_ + "/mshard";
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/spec.json --shard 0/4 -o " + shard).code, 0);
  const std::string id = point_json(shard, 4)["id"].get<std::string>();
  std::ofstream(shard + "/points/" + id + ".json") << "{\"index\": 4, \"metr";  // damaged
  for (const std::string& out : {dir_ + "/mout", dir_ + "/mnew/deeper/out"}) {
    const CliResult r = moesim_cli("-q merge " + shard + " -o " + out);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(id + ".json: not valid JSON"));
    EXPECT_FALSE(fs::exists(out)) << out;
  }
  EXPECT_FALSE(fs::exists(dir_ + "/mnew"));
  // A shard without its points folder: an error naming it, not a crash, and no folder either.
  fs::remove_all(shard + "/points");
  const CliResult r = moesim_cli("-q merge " + shard + " -o " + dir_ + "/mout");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("mshard/points: cannot list"));
  EXPECT_FALSE(fs::exists(dir_ + "/mout"));
}

TEST_F(SweepCli, JsonSummariesOfSweepAndMerge) {
  const std::string out = dir_ + "/js";
  CliResult r = moesim_cli("-q sweep " + dir_ + "/spec.json --shard 3/4 --json -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["header"]["command"], "sweep");
  EXPECT_EQ(j["points_total"], 13);
  EXPECT_EQ(j["shard_points"], 3);
  EXPECT_EQ(j["points_run"], 3);
  EXPECT_EQ(j["points_failed"], 0);
  EXPECT_EQ(j["point_files_not_written"], 0);
  r = moesim_cli("-q merge " + out + " --json -o " + dir_ + "/jsm");
  ASSERT_EQ(r.code, 0) << r.err;
  j = Json::parse(r.out);
  EXPECT_EQ(j["header"]["command"], "merge");
  EXPECT_EQ(j["points_done"], 3);
  EXPECT_EQ(j["points_missing"], 10);
  EXPECT_EQ(j["state"], "incomplete");
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_THAT(j["warnings"][0].get<std::string>(), HasSubstr("10 of the spec's 13 points"));
}

// --dry-run counts the points (shard, command) and times three of them, writing nothing into -o; with a
// folder holding some of the spec's points it counts only the rest.
TEST_F(SweepCli, ADryRunCountsAndTimesAndWritesNothing) {
  const std::string out = dir_ + "/dry";
  CliResult r = moesim_cli("-q sweep " + dir_ + "/spec.json --dry-run --shard 0/2 --jobs 2 --json -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out));
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["points_total"], 13);
  EXPECT_EQ(j["shard_points"], 7);  // points 0, 2, ..., 12
  EXPECT_EQ(j["points_to_run"], 7);
  EXPECT_EQ(j["points_per_command"]["run"], 6);
  EXPECT_EQ(j["points_per_command"]["replay"], 1);
  ASSERT_EQ(j["timed_points"].size(), 3u);  // the first, the middle and the last to run
  EXPECT_EQ(j["timed_points"][0]["index"], 0);
  EXPECT_EQ(j["timed_points"][1]["index"], 6);
  EXPECT_EQ(j["timed_points"][2]["index"], 12);
  double sum = 0;
  for (const Json& t : j["timed_points"]) {
    EXPECT_FALSE(t.contains("error")) << t.dump();
    sum += t["seconds"].get<double>();
  }
  EXPECT_DOUBLE_EQ(j["estimate_s"].get<double>(), sum / 3 * 7 / 2);
  EXPECT_THAT(j["slurm_time"].get<std::string>(), ::testing::MatchesRegex("[0-9][0-9]:[0-9][0-9]:00"));

  // Half of the shard finished: only the rest is counted and timed.
  ASSERT_EQ(moesim_cli("-q sweep " + dir_ + "/spec.json --shard 0/4 -o " + out).code, 0);
  r = moesim_cli("-q sweep " + dir_ + "/spec.json --dry-run --json -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  j = Json::parse(r.out);
  EXPECT_EQ(j["points_to_run"], 13 - 4);
  const std::string text = moesim_cli("sweep " + dir_ + "/spec.json --dry-run").out;
  EXPECT_THAT(text, HasSubstr("13 points; shard 0/1 has 13, 13 to run (1 replay, 12 run)"));
  EXPECT_THAT(text, HasSubstr("--time="));
  EXPECT_EQ(moesim_cli("-q sweep " + dir_ + "/spec.json").code, 2);  // no -o without --dry-run
}

// --plot draws two columns of results.csv grouped by a third once the sweep ends; a column that is not one is
// refused before any point runs (nothing written).
TEST_F(SweepCli, PlotDrawsTwoColumnsGroupedByAThird) {
  const std::string out = dir_ + "/plotted", png = dir_ + "/sweep.png";
  CliResult bad = moesim_cli("-q sweep " + dir_ + "/spec.json -o " + out + " --plot " + png + " --y speed");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("--y 'speed' is not a column of results.csv"));
  EXPECT_FALSE(fs::exists(out));
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") != 0)
    GTEST_SKIP() << "no matplotlib";
  const CliResult r = moesim_cli("-q sweep " + dir_ + "/spec.json -o " + out + " --plot " + png +
                                 " --x budget --y hit_rate --group policy");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GT(fs::file_size(png), 1000u);
}

// Budgets relative to each model make one grid fit models of different sizes: 25% of the experts' bytes
// and 2 x top-k experts per layer resolve per trace, as the same absolute budgets would run.
TEST_F(SweepCli, RelativeBudgetsResolvePerModel) {
  const std::string d = dir_ + "/rel";
  fs::create_directories(d);
  ASSERT_EQ(
      moesim_cli("-q trace synth --model mixtral-8x7b --tokens 40 --prompt-tokens 4 --zipf 0.8 --seed 2 -o " +
                 d + "/m.mtr")
          .code,
      0);
  std::ofstream(d + "/spec.json") << R"({"command": "replay", "grid": {"trace": ["../q.mtr", "m.mtr"],
      "policy": ["lru"], "budget": ["25%", "2xtopk"]}})";
  CliResult r = moesim_cli("-q sweep " + d + "/spec.json -o " + d + "/out");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = read_text(d + "/out/results.csv");
  // Each relative point equals the absolute budget it stands for on its model.
  auto hit = [](const std::string& args) {
    const CliResult one = moesim_cli("-q replay " + args + " --policy lru --json");
    EXPECT_EQ(one.code, 0) << one.err;
    return Json::parse(one.out)["results"][0]["hit_rate"].get<double>();
  };
  // Qwen3: 48 x 128 experts, top-8: 2 x top-k = 16 experts per layer; Mixtral: 32 x 8, top-2: 4.
  EXPECT_DOUBLE_EQ(hit(dir_ + "/q.mtr --budget 2xtopk"), hit(dir_ + "/q.mtr --budget 16"));
  EXPECT_DOUBLE_EQ(hit(d + "/m.mtr --budget 2xtopk"), hit(d + "/m.mtr --budget 4"));
  EXPECT_EQ(count_lines(csv), 5u);  // header and 4 points, none failed
}

// A disk that fills up mid-sweep: a small tmpfs (root only). The sweep says how many point files it lost,
// and --resume on a disk with room finishes them.
TEST_F(SweepCli, AFullDiskSaysHowManyPointFilesWereNotWritten) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string mnt = dir_ + "/tiny";
  fs::create_directories(mnt);
  // Room for the manifest and a few points, not for all 13 (a point file and its command's output take a
  // page or two each).
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=48k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  const std::string out = mnt + "/out";
  const CliResult r = moesim_cli("-q sweep " + dir_ + "/spec.json --jobs 1 -o " + out);
  const size_t written = fs::exists(out + "/points") ? points_in(out) : 0;
  ::umount(mnt.c_str());
  EXPECT_EQ(r.code, 1) << r.err;
  ASSERT_LT(written, 13u) << "the tmpfs held every point: make it smaller";
  ASSERT_GT(written, 0u) << r.err;
  EXPECT_THAT(r.err, HasSubstr(std::to_string(13 - written) + " of 13 point files could not be written"));
  EXPECT_THAT(r.err, HasSubstr("No space left on device"));
  EXPECT_THAT(r.err, HasSubstr("--resume"));
}

}  // namespace
}  // namespace moesim::test
