// Out-of-range values are refused, never replaced: each by the option's (or JSON path's) name and its range,
// in every command that takes it, before any work. And messages that used to mislead (a missing --hw file
// called an unknown preset, a control character printed raw, a disconnected network without the file) name
// what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModel = test::test_data("models/tiny-moe.json");

// A Zipf trace of the tiny model (4 layers x 16 experts) in `dir`.
std::string tiny_trace(const std::string& dir, const std::string& name = "t.mtr", uint32_t seed = 1) {
  const std::string t = dir + "/" + name;
  const auto r = moesim_combined("-q trace synth --model " + kModel + " --tokens 16 --seed " +
                                 std::to_string(seed) + " --zipf 1.0 -o " + t);
  EXPECT_EQ(r.status, 0) << r.out;
  return t;
}

struct Refusal {
  std::string args, message;
};

void expect_usage_errors(const std::string& prefix, const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    const CliResult r = moesim_cli(prefix + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
  }
}

TEST(Refusals, RunOptionsOutOfRangeAreRefusedWithTheirRange) {
  const auto dir = fresh_test_dir("moesim_refusals", "run").string();
  const std::string run = "run --trace " + tiny_trace(dir) + " --model " + kModel + " --budget 2MiB ";
  expect_usage_errors(
      run, {
               // Used to run with the default rho 0.3253 (plan refused the same value).
               {"--system zipmoe --ratio -0.5",
                "--ratio must be a number in (0, 4] (rho, compressed / raw exponent "
                "bytes), got -0.5"},
               {"--system zipmoe --ratio nan", "--ratio: expected a finite number, got 'nan'"},
               {"--system zipmoe --ratio 0", "--ratio must be a number in (0, 4]"},
               // Used to run as K = 1; 100000 failed with "more than 1048575 ops".
               {"--system zipmoe --shards 0", "--shards must be a whole number from 1 to 65536"},
               {"--system zipmoe --shards 100000", "--shards must be a whole number from 1 to 65536"},
               {"--system zipmoe:shards=0", "zipmoe:shards=0: shards must be a whole number in [1, 65536]"},
               {"--system zipmoe:e_ratio=9", "zipmoe:e_ratio=9: e_ratio must be a real in [0, 4]"},
               // Used to run out of memory.
               {"--io-depth 2147483648",
                "--io-depth must be a whole number from 1 to 4096 (reads outstanding at "
                "once), got 2147483648"},
               {"--io-depth 0", "--io-depth must be a whole number from 1 to 4096"},
               // A seed takes the whole uint64 range; past it the message says the range, not "an integer".
               {"--policy random:seed=18446744073709551616",
                "random:seed=18446744073709551616: seed must be a whole number in [0, 18446744073709551615]"},
               // A missing file given as a path is no unknown preset.
               {"--hw " + dir + "/nope.json", dir + "/nope.json: no such file"},
           });
  const CliResult seed = moesim_cli(run + "--policy random:seed=18446744073709551615");
  EXPECT_EQ(seed.code, 0) << seed.err;
  const CliResult compare =
      moesim_cli("compare --trace " + dir + "/t.mtr --model " + kModel + " --budget 2MiB --io-depth 5000");
  EXPECT_EQ(compare.code, 2) << compare.err;
  EXPECT_THAT(compare.err, HasSubstr("--io-depth must be a whole number from 1 to 4096"));
  const CliResult plan =
      moesim_cli("plan --trace " + dir + "/t.mtr --model " + kModel + " --budget 2MiB --ratio -0.5");
  EXPECT_EQ(plan.code, 2) << plan.err;
  EXPECT_THAT(
      plan.err,
      HasSubstr("--ratio must be a number in (0, 4] (rho, compressed / raw exponent bytes), got -0.5"));
}

TEST(Refusals, AControlCharacterInAPolicyNameIsEscaped) {
  const auto dir = fresh_test_dir("moesim_refusals", "ctl").string();
  const CliResult r = moesim_cli("run --trace " + tiny_trace(dir) + " --model " + kModel +
                                 " --budget 2MiB --policy \"$(printf 'lr\\033[2Ju')\"");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown eviction policy 'lr\\x1b[2Ju'"));
  EXPECT_THAT(r.err, Not(HasSubstr("\033")));
}

// A SERVERS.json of three tiny-model servers; `server_a` replaces the first server's extra keys and `links`
// the network.
std::string cluster_spec(
    const std::string& dir, const std::string& server_a_extra,
    const std::string& network = R"("network": {"bandwidth": "500Mbit/s", "latency": "1ms"})") {
  tiny_trace(dir, "a.mtr", 1);
  tiny_trace(dir, "b.mtr", 2);
  const std::string spec = dir + "/servers.json";
  std::ofstream(spec) << R"({"model": ")" << kModel << R"(", )" << network << R"(,
    "servers": [
      {"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "8MiB", "traces": ["a.mtr"])"
                      << server_a_extra << R"(},
      {"name": "b", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "8MiB", "traces": ["b.mtr"], "arrival": "poisson:10s"},
      {"name": "c", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "8MiB", "traces": ["b.mtr"], "arrival": "poisson:10s"}]})";
  return spec;
}

TEST(Refusals, ClusterBandwidthsLatenciesAndBucketsHaveRanges) {
  const auto dir = fresh_test_dir("moesim_refusals", "cluster").string();
  const std::string poisson = R"(, "arrival": "poisson:10s")";
  struct Case {
    std::string extra, network, message;
  };
  const std::string mesh = R"("network": {"bandwidth": "500Mbit/s", "latency": "1ms"})";
  for (const Case& c : std::vector<Case>{
           // "0bit/s" used to mean "no NIC", while a zero link bandwidth was refused.
           {poisson + R"(, "nic": "0bit/s")", mesh,
            "servers.json: servers[0].nic: a bandwidth of 0 B/s is outside the physical range 1 kbit/s to 1 "
            "Pbit/s"},
           // 1e-300bit/s used to give an infinite mean latency and a 64-digit p50.
           {poisson, R"("network": {"bandwidth": "1e-300bit/s", "latency": "1ms"})",
            "servers.json: network.bandwidth: a bandwidth of 1.25e-301 B/s is outside the physical range"},
           {poisson, R"("network": {"bandwidth": "1Gbit/s", "latency": "1e300s"})",
            "servers.json: network.latency: a latency of 1e+300 s is outside the range 0 to 60 s"},
           // Links that leave a server unreachable: the file and the JSON path, before the network is built.
           {poisson, R"("links": [{"from": "a", "to": "b", "bandwidth": "1Gbit/s", "latency": "1ms"}])",
            "servers.json: links: the links do not connect every server: \"a\" cannot reach \"c\""},
       }) {
    const std::string spec = cluster_spec(dir, c.extra, c.network);
    const CliResult r = moesim_cli("cluster " + spec + " --placement uniform --duration 1m");
    EXPECT_EQ(r.code, 1) << c.message << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
  // A 1us bucket took 51 s for a minute and a 1ns one ran out of memory.
  const std::string spec = cluster_spec(dir, poisson);
  expect_usage_errors("cluster " + spec + " --placement uniform --duration 1m ",
                      {{"--bucket 1us",
                        "--bucket 1us makes 6e+07 buckets of --duration 1m; it must be from 600 us "
                        "(at most 100000 buckets) upwards"},
                       {"--bucket 1ns", "--bucket 1ns makes 6e+10 buckets"}});
}

TEST(Refusals, ClusterArrivalsAfterTheDurationAreCountedInAWarning) {
  const auto dir = fresh_test_dir("moesim_refusals", "late").string();
  std::ofstream(dir + "/times.txt") << "1s\n5s\n59s\n60s\n90s\n";
  const std::string spec = cluster_spec(dir, R"(, "arrival": "timestamps:times.txt")");
  const std::string warning = "servers.json: servers[0].arrival: 2 of the 5 arrival times in " + dir +
                              "/times.txt are at or after --duration 1m and were dropped";
  const CliResult text = moesim_cli("cluster " + spec + " --placement uniform --duration 1m");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.err, HasSubstr(warning));
  const CliResult json = moesim_cli("-q cluster " + spec + " --placement uniform --duration 1m --json");
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_THAT(Json::parse(json.out)["warnings"].dump(), HasSubstr(warning));
}

TEST(Refusals, SweepOptionsThatDoNotFitTheCommandFailTheSpecBeforeAnyPoint) {
  const auto dir = fresh_test_dir("moesim_refusals", "sweep").string();
  tiny_trace(dir);
  std::ofstream(dir + "/spec.json")
      << R"({"grid": {"command": ["replay"], "trace": ["t.mtr"], "policy": ["lru"],
      "budget": ["16", "32"]}, "options": ["--bucket", "1m"]})";
  const CliResult r = moesim_cli("sweep " + dir + "/spec.json -o " + dir + "/out");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(dir + "/spec.json: /options: do not fit `moesim replay`: "));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/points")) << "no point may have run";
  // Two "grid" keys: the last used to win silently.
  std::ofstream(dir + "/twice.json") << "{\"grid\": {\"trace\": [\"t.mtr\"], \"budget\": [\"16\"]},\n"
                                        " \"grid\": {\"trace\": [\"t.mtr\"], \"budget\": [\"32\"]}}\n";
  const CliResult twice = moesim_cli("sweep " + dir + "/twice.json -o " + dir + "/out2");
  EXPECT_EQ(twice.code, 1) << twice.err;
  EXPECT_THAT(twice.err,
              HasSubstr(dir + "/twice.json: grid: the key appears twice in one object, at 1:2 and 2:2"));
}

TEST(Refusals, ADamagedPointFileIsNotAFullDisk) {
  const auto dir = fresh_test_dir("moesim_refusals", "damaged").string();
  tiny_trace(dir);
  std::ofstream(dir + "/spec.json")
      << R"({"grid": {"command": ["replay"], "trace": ["t.mtr"], "policy": ["lru"],
      "budget": ["16", "32"]}})";
  ASSERT_EQ(moesim_cli("-q sweep " + dir + "/spec.json -o " + dir + "/out").code, 0);
  const auto first = std::filesystem::directory_iterator(dir + "/out/points")->path();
  std::ofstream(first) << "{\"metrics\": ";
  const CliResult r = moesim_cli("-q sweep " + dir + "/spec.json --resume -o " + dir + "/out");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(first.string() + ": not valid JSON"));
  EXPECT_THAT(r.err, HasSubstr("a damaged point file: delete it and rerun with --resume"));
  EXPECT_THAT(r.err, Not(HasSubstr("free some space")));
}

}  // namespace
}  // namespace moesim::test
