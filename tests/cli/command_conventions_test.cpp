// The conventions every command shares (beside tests/cli/vocabulary_test.cpp's common words): unsigned
// options refuse negative values, bad values are reported by option, value and expectation (not CLI11's raw
// texts), calibrate writes its profile where -o says (standard output by default, --json or not), validate
// needs this machine's profile, real runs default to this machine's CPUs and a calibrated profile records the
// machine it was measured on, host parallelism is --jobs everywhere, usage errors in policy specs and plan
// budgets exit 2, and results are JSON on request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModel = test::test_data("models/tiny-moe.json");

uint32_t this_machine_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<uint32_t>(CPU_COUNT(&set));
  return std::thread::hardware_concurrency();
}

class CommandConventions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_path("command_conventions");
    std::filesystem::create_directories(dir_);
    ASSERT_EQ(moesim_cli("-q weights synth --model " + kModel + " --seed 1 -o " + weights()).code, 0);
    ASSERT_EQ(moesim_cli("-q pack --weights " + weights() + " --codec zstd:3 --shards 2 -o " + store()).code,
              0);
    ASSERT_EQ(moesim_cli("-q trace synth --model " + kModel +
                         " --tokens 24 --prompt-tokens 8 --zipf 0.8 --seed 3 -o " + trace())
                  .code,
              0);
    ASSERT_EQ(
        moesim_cli("-q trace synth --model " + kModel + " --tokens 1 --zipf 0.8 --seed 3 -o " + one_token())
            .code,
        0);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string weights() { return dir_ + "/w.safetensors"; }
  static std::string store() { return dir_ + "/z.store"; }
  static std::string trace() { return dir_ + "/t.mtr"; }
  static std::string one_token() { return dir_ + "/one.mtr"; }
  // A real run of the test store without a GPU.
  static std::string exec_args() {
    return trace() + " --model " + kModel + " --store " + store() +
           " --system zipmoe --recover-on cpu --budget 1MiB --buffered --gpu off";
  }
  // A simulation of the test trace (its model is no preset).
  static std::string sim_args() { return trace() + " --model " + kModel + " --budget 4"; }
  static std::string dir_;
};
std::string CommandConventions::dir_;

TEST_F(CommandConventions, UnsignedOptionsRefuseNegativeValuesNamingTheOption) {
  // --seed is 64-bit: strtoull took "-1" as 2^64 - 1 and the run went ahead with it.
  const CliResult seed = moesim_cli("-q run " + sim_args() + " --seed -1");
  EXPECT_EQ(seed.code, 2) << seed.out;
  EXPECT_THAT(seed.err, HasSubstr("--seed: expected a whole number >= 0, got '-1'"));
  for (const std::string& args :
       {"run " + sim_args() + " --batch -1", "replay " + trace() + " --policy lru --budget 4 --batch -2",
        "trace synth --model " + kModel + " --zipf 1 --tokens -5 --seed 1 -o x.mtr",
        "weights synth --model " + kModel + " --layers -1 --seed 1 -o x.safetensors",
        "exec " + exec_args() + " --workers -3"}) {
    const CliResult r = moesim_cli("-q " + args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("expected a whole number >= 0")) << args;
    EXPECT_THAT(r.err, Not(HasSubstr("Could not convert"))) << args;
  }
}

TEST_F(CommandConventions, BadValuesNameTheOptionTheValueAndWhatIsExpected) {
  const CliResult grid = moesim_cli("-q run " + sim_args() + " --system zipmoe --grid abc");
  EXPECT_EQ(grid.code, 2);
  EXPECT_THAT(grid.err, HasSubstr("--grid: expected a finite number, got 'abc'"));
  const CliResult std_dev =
      moesim_cli("-q weights synth --model " + kModel + " --std -1 --seed 1 -o x.safetensors");
  EXPECT_EQ(std_dev.code, 2);
  EXPECT_THAT(std_dev.err, HasSubstr("--std: expected a number > 0, got -1"));
  EXPECT_THAT(std_dev.err, Not(HasSubstr("179769313486231570")));  // DBL_MAX spelt out
  const CliResult shards =
      moesim_cli("-q pack --weights " + weights() + " --shards 0 -o " + dir_ + "/x.store");
  EXPECT_EQ(shards.code, 2);
  EXPECT_THAT(shards.err, HasSubstr("--shards: expected a whole number from 1 to 65536, got 0"));
  const CliResult twice = moesim_cli("-q run " + sim_args() + " --seed 1 --seed 2");
  EXPECT_EQ(twice.code, 2);
  EXPECT_THAT(twice.err, HasSubstr("--seed: given more than once (again as '2')"));
  EXPECT_THAT(twice.err, Not(HasSubstr("At Most")));
  const CliResult big = moesim_cli("-q run " + sim_args() + " --seed 99999999999999999999999");
  EXPECT_EQ(big.code, 2);
  EXPECT_THAT(big.err, HasSubstr("--seed: '99999999999999999999999' is too large"));
}

// Calibrate's -o defaults to '-' as its help says, and --json is what every command's --json is: JSON to -o.
// One micro calibration writes the profile to standard output, with the machine it was measured on.
TEST_F(CommandConventions, CalibrateJsonWritesTheProfileToStandardOutputWithTheMachine) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const CliResult r = moesim_cli("-q calibrate --store " + store() +
                                 " --micro --micro-budget 3 --micro-depth 4 --buffered --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json p = Json::parse(r.out);
  EXPECT_TRUE(p.contains("ssd"));
  ASSERT_TRUE(p.contains("measured_on"));
  EXPECT_EQ(p["measured_on"]["cores"].get<uint32_t>(), this_machine_cores());
  EXPECT_EQ(p["measured_on"]["gpu"], "none");  // --buffered without --gpu on: no CUDA run measured here
  EXPECT_FALSE(p["measured_on"]["host"].get<std::string>().empty());
  EXPECT_FALSE(p["measured_on"]["cpu_model"].get<std::string>().empty());
  // The CPU workers calibrated default to this machine's CPUs, not the base profile's 12 cores.
  EXPECT_EQ(p["cpu"]["cores"]["value"].get<uint32_t>(), this_machine_cores());
}

TEST_F(CommandConventions, CalibrateToDashIsStandardOutput) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const CliResult r = moesim_cli("-q calibrate --store " + store() +
                                 " --micro --micro-budget 3 --micro-depth 4 --buffered -o -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Json::parse(r.out).contains("ssd"));
  EXPECT_THAT(r.err, HasSubstr("-> standard output"));
}

TEST_F(CommandConventions, ValidateNeedsThisMachinesProfile) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const CliResult r = moesim_cli("-q validate " + exec_args());
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--hw PROFILE.json"));
  EXPECT_THAT(r.err, HasSubstr("--calibrate-on"));
  // --profile is the older name of --hw: one of them.
  const CliResult both =
      moesim_cli("-q validate " + exec_args() + " --hw jetson-agx-orin-64gb --profile server-h100-nvme");
  EXPECT_EQ(both.code, 2);
  EXPECT_THAT(both.err, HasSubstr("--hw is given twice, once under its older name"));
}

// A profile measured on another machine: validate runs, and says so in the text and the JSON.
TEST_F(CommandConventions, ValidateWarnsWhenTheProfileWasMeasuredElsewhere) {
  MOESIM_SKIP_WITHOUT_EXEC();
  Json prof = load_json_file(test::bundled_data("hardware/jetson-agx-orin-64gb.json"));
  prof["measured_on"] = {
      {"host", "another-host"}, {"cpu_model", "another CPU"}, {"cores", 4096}, {"gpu", "none"}};
  const std::string path = dir_ + "/elsewhere.json";
  std::ofstream(path) << prof.dump(2);
  const CliResult r = moesim_cli("-q validate " + exec_args() + " --hw " + path + " --json --targets ''");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("was measured on another machine"));
  EXPECT_THAT(r.err, HasSubstr("cores 4096 there, " + std::to_string(this_machine_cores()) + " here"));
  const Json j = Json::parse(r.out);
  EXPECT_THAT(j["warnings"].dump(), HasSubstr("was measured on another machine"));
}

TEST_F(CommandConventions, ExecWorkersDefaultToThisMachinesCpus) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const CliResult r = moesim_cli("-q exec " + exec_args() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["header"]["config"]["cpu_workers"].get<uint32_t>(), this_machine_cores());
}

TEST_F(CommandConventions, HostParallelismIsJobsOnEveryCommand) {
  for (const std::string& args :
       {"replay " + trace() + " --policy lru --budget 4 --jobs 2",
        "compare " + sim_args() + " --policy lru --jobs 2",
        "pack --weights " + weights() + " --jobs 2 -o " + dir_ + "/jobs.store",
        "weights stats " + weights() + " --jobs 2",
        "store verify " + store() + " --weights " + weights() + " --jobs 2",
        "replay " + trace() + " --policy lru --budget 4 --threads 2"}) {  // the old name stays, hidden
    const CliResult r = moesim_cli("-q " + args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  }
  const CliResult both = moesim_cli("-q replay " + trace() + " --policy lru --budget 4 --jobs 2 --threads 2");
  EXPECT_EQ(both.code, 2);
  EXPECT_THAT(both.err, HasSubstr("--jobs is given twice, once under its older name"));
  const CliResult bad_alias = moesim_cli("-q replay " + trace() + " --policy lru --budget 4 --threads -1");
  EXPECT_EQ(bad_alias.code, 2);
  EXPECT_THAT(bad_alias.err, HasSubstr("--threads: expected a whole number"));
}

TEST_F(CommandConventions, UsageErrorsInPolicySpecsAndPlanBudgetsExit2) {
  const CliResult param = moesim_cli("-q replay " + trace() + " --budget 4 --policy lru:colour=3");
  EXPECT_EQ(param.code, 2) << param.err;
  EXPECT_THAT(param.err, HasSubstr("unknown parameter 'colour'"));
  const CliResult accuracy = moesim_cli("-q run " + sim_args() + " --prefetch oracle:accuracy=1.5");
  EXPECT_EQ(accuracy.code, 2) << accuracy.err;
  EXPECT_THAT(accuracy.err, HasSubstr("oracle:accuracy=1.5: accuracy must be a real in [0, 1]"));
  const CliResult unknown = moesim_cli("-q run " + sim_args() + " --prefetch psychic");
  EXPECT_EQ(unknown.code, 2) << unknown.err;
  const CliResult plan = moesim_cli("-q plan " + trace() + " --model " + kModel + " --budget 3B");
  EXPECT_EQ(plan.code, 2) << plan.err;
  EXPECT_THAT(plan.err, HasSubstr("less than one byte per layer"));
}

TEST_F(CommandConventions, ZipMoeOnATooShortTraceSaysWhatIsWrongWithTheTrace) {
  const CliResult r =
      moesim_cli("-q run " + one_token() + " --model " + kModel + " --system zipmoe --budget 1MiB");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("the trace has too few tokens to profile expert popularity for the zipmoe planner"));
  EXPECT_THAT(r.err, HasSubstr("pass a longer trace"));
  EXPECT_THAT(r.err, Not(HasSubstr("positive inclusion probability")));
}

TEST_F(CommandConventions, ListingsAndStoreCommandsWriteJsonToOutput) {
  const std::string out = dir_ + "/listing.json";
  for (const std::string& args : {std::string("presets"), std::string("policies"), "store info " + store(),
                                  "store verify " + store() + " --weights " + weights()}) {
    std::filesystem::remove(out);
    const CliResult r = moesim_cli("-q " + args + " --json -o " + out);
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
    const Json j = load_json_file(out);
    EXPECT_TRUE(j.contains("header")) << args;
  }
  EXPECT_EQ(load_json_file(out)["tensors"].get<uint64_t>(),
            4u * 16u * 3u);  // store verify: every expert tensor
}

TEST_F(CommandConventions, TraceSynthReadsItsInputWithTheTraceOptions) {
  const CliResult r = moesim_cli("-q trace synth --fit " + trace() + " --format mtr --tokens 4 --seed 1 -o " +
                                 dir_ + "/fit.mtr");
  EXPECT_EQ(r.code, 0) << r.err;
  const CliResult l = moesim_cli("-q trace synth --logits-for " + trace() + " --format mtr --seed 1 -o " +
                                 dir_ + "/logits.mtr");
  EXPECT_EQ(l.code, 0) << l.err;
}

}  // namespace
// Commands whose -o is their data file (a trace, a store, weights) summarise what they wrote as JSON on
// standard output with --json; with -o - that output is the data, so --json is refused there.
TEST_F(CommandConventions, DataWritingCommandsSummariseAsJson) {
  const std::string out = dir_ + "/json-summary";
  std::filesystem::create_directories(out);
  const std::pair<std::string, std::string> cases[] = {
      {"weights synth --model " + kModel + " --seed 1 --layers 1 -o " + out + "/w1.safetensors",
       "w1.safetensors"},
      {"pack --weights " + weights() + " --codec zstd:3 --shards 2 -o " + out + "/z1.store", "z1.store"},
      {"trace synth --model " + kModel + " --tokens 4 --zipf 0.8 --seed 3 -o " + out + "/s.mtr", "s.mtr"},
      {"trace export " + trace() + " -o " + out + "/e.jsonl", "e.jsonl"},
      {"trace import " + out + "/e.jsonl --model " + kModel + " -o " + out + "/i.mtr", "i.mtr"},
  };
  for (const auto& [args, file] : cases) {
    const CliResult r = moesim_cli("-q " + args + " --json");
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    const Json j = parse_json_text(r.out, args);
    EXPECT_TRUE(j.contains("header")) << args;
    EXPECT_EQ(j["wrote"]["path"], out + "/" + file) << args;
    EXPECT_TRUE(std::filesystem::exists(out + "/" + file)) << args;
  }
  const CliResult r = moesim_cli("-q trace export " + trace() + " -o - --json");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("pass -o FILE"));
}

// A well-formed number too large for its option's type is reported by option and value, not CLI11's text.
TEST_F(CommandConventions, ANumberTooLargeForItsOptionNamesTheOption) {
  const CliResult r = moesim_cli("run " + sim_args() + " --batch 5000000000");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--batch: 5000000000 is too large for this option"));
  EXPECT_THAT(r.err, Not(HasSubstr("Could not convert")));
}

}  // namespace moesim::test
