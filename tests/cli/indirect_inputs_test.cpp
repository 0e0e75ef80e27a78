// No output replaces a file the command reads however the file was named (cli/io_guard.h,
// base/output_guard.h): a preset by name or by default (resolved through the data folder, here a copy in
// $MOESIM_DATA), a file inside a sweep, sensitivity, matrix or cluster spec, a file inside a policy or
// routing parameter, a file of an input folder. Each refusal is a usage error (exit 2) before any work,
// naming the output option, the input and how it was named, and the input is left byte for byte. Two outputs
// of one command on one path are refused too; and a writer killed by SIGKILL has its temporary removed by the
// next writer into that folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kModel = test::test_data("models/tiny-moe.json");

class IndirectInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_test_dir("moesim_indirect", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    // A data folder of our own: the real one's hardware profiles and the tiny model as a preset.
    fs::create_directories(dir_ / "data" / "models");
    fs::copy(test::bundled_data("hardware"), dir_ / "data" / "hardware");
    fs::copy_file(kModel, dir_ / "data" / "models" / "tiny-moe.json");
    fs::copy_file(test::test_data("traces/tiny.csv"), dir_ / "t.csv");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string preset(const std::string& kind, const std::string& name) const {
    return path("data/" + kind + "/" + name + ".json");
  }
  // `moesim ARGS` with our data folder, in our folder: exit status and stderr.
  ShellResult moesim(const std::string& args) const {
    return run_shell("cd " + dir_.string() + " && MOESIM_DATA=" + path("data") + " " + MOESIM_CLI_PATH +
                     " -q " + args + " 2>&1 >/dev/null");
  }
  // Refused with exit 2 and `message`, `input` unchanged and no temporary file left beside it.
  void expect_refused(const std::string& args, const std::string& input, const std::string& message) const {
    const std::string before = read_text(input);
    ASSERT_FALSE(before.empty()) << input;
    const ShellResult r = moesim(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("moesim: error: ")) << args;
    EXPECT_THAT(r.out, HasSubstr(message)) << args;
    EXPECT_EQ(read_text(input), before) << args << ": the input changed";
    for (const auto& e : fs::directory_iterator(fs::path(input).parent_path()))
      EXPECT_FALSE(is_temporary_output_name(e.path().filename().string())) << e.path();
  }
  std::string trace_run() const { return "run " + path("t.csv") + " --model " + kModel + " --budget 2"; }

  fs::path dir_;
};

TEST_F(IndirectInputs, TheDefaultHardwareProfile) {
  const std::string hw = preset("hardware", "jetson-agx-orin-64gb");
  expect_refused(
      trace_run() + " -o " + hw, hw,
      "--output '" + hw + "' is the same file as input '" + hw +
          "' (the hardware profile, --hw's default jetson-agx-orin-64gb); choose another output path");
  // compare's default, through --csv.
  expect_refused("compare " + path("t.csv") + " --model " + kModel + " --policy lru --budget 2 --csv " + hw,
                 hw, "(the hardware profile, --hw's default jetson-agx-orin-64gb)");
}

TEST_F(IndirectInputs, PresetsByName) {
  const std::string hw = preset("hardware", "desktop-rtx4090"), model = preset("models", "tiny-moe");
  expect_refused(trace_run() + " --hw desktop-rtx4090 --timeline " + hw, hw,
                 "--timeline '" + hw + "' is the same file as input '" + hw +
                     "' (the hardware profile, --hw desktop-rtx4090)");
  expect_refused("run " + path("t.csv") + " --model tiny-moe --budget 2 -o " + model, model,
                 "(the model, --model tiny-moe)");
  expect_refused("replay " + path("t.csv") + " --model tiny-moe --policy lru --budget 2 -o " + model, model,
                 "(the model, --model tiny-moe)");
}

// The model named only by the trace's header: found while loading, refused by the safety net (the outputs
// declared before the work, base/output_guard.h) before anything is written.
TEST_F(IndirectInputs, ThePresetATraceNames) {
  const ShellResult made =
      moesim("trace import " + path("t.csv") + " --model " + kModel + " -o " + path("t.mtr"));
  ASSERT_EQ(made.status, 0) << made.out;
  const std::string model = preset("models", "tiny-moe");
  expect_refused(
      "run " + path("t.mtr") + " --budget 2 -o " + model, model,
      "--output '" + model + "' is the same file as input '" + model + "' (the model, preset tiny-moe)");
}

TEST_F(IndirectInputs, FilesInsidePolicyAndRoutingParameters) {
  const std::string train = path("train.csv");
  fs::copy_file(path("t.csv"), train);
  expect_refused(
      trace_run() + " --prefetch transition:train=" + train + " -o " + train, train,
      "--output '" + train + "' is the same file as input '" + train + "' (--prefetch parameter train)");
  expect_refused(trace_run() + " --prefetch transition:train=" + train + " --timeline " + train, train,
                 "(--prefetch parameter train)");
  expect_refused("replay " + path("t.csv") + " --model " + kModel +
                     " --policy lru --budget 2 --prefetch transition:train=" + train + " -o " + train,
                 train, "(--prefetch parameter train)");
  const std::string profile = path("buddy.json");
  const ShellResult made = moesim("buddy profile " + test::test_data("traces/tiny.route.csv -o ") + profile);
  ASSERT_EQ(made.status, 0) << made.out;
  expect_refused(
      "compare " + path("t.csv") + " --model " + kModel +
          " --policy lru --budget 2 --routing buddy:profile=" + profile + " --csv " + profile,
      profile,
      "--csv '" + profile + "' is the same file as input '" + profile + "' (--routing parameter profile)");
  expect_refused(trace_run() + " --routing buddy:profile=" + profile + " -o " + profile, profile,
                 "(--routing parameter profile)");
}

TEST_F(IndirectInputs, AFileOfAnInputFolder) {
  fs::create_directories(dir_ / "w");
  const std::string shard = path("w/w.safetensors");
  const ShellResult made = moesim("weights synth --size 64KiB --seed 1 -o " + shard);
  ASSERT_EQ(made.status, 0) << made.out;
  expect_refused("pack --weights " + path("w") + " --all-tensors -o " + shard, shard,
                 "--output '" + shard + "' lies inside input folder '" + path("w") + "' (--weights)");
  // A new file there would be read as one more shard next time.
  expect_refused("pack --weights " + path("w") + " --all-tensors -o " + path("w/s.store"), shard,
                 "lies inside input folder");
  EXPECT_FALSE(fs::exists(path("w/s.store")));
}

TEST_F(IndirectInputs, SensitivitySpecTraceAndProfile) {
  const std::string spec = path("spec.json");
  std::ofstream(spec) << R"({"trace": "t.csv", "model": ")" << kModel
                      << R"(", "budget": "2", "systems": ["offload:policy=lru", "offload:policy=fifo"]})";
  expect_refused("sensitivity " + spec + " -o " + path("t.csv"), path("t.csv"),
                 "--output '" + path("t.csv") + "' is the same file as input '" + path("t.csv") + "' (" +
                     spec + ": points[0] trace)");
  const std::string hw = preset("hardware", "jetson-agx-orin-64gb");
  expect_refused("sensitivity " + spec + " -o " + hw, hw,
                 "points[0] the hardware profile, hw's default jetson-agx-orin-64gb");
}

TEST_F(IndirectInputs, MatrixSpecModelsAndTraces) {
  MOESIM_SKIP_WITHOUT_EXEC();  // validate --matrix runs on exec
  for (const char* seed : {"3", "5"}) {
    const ShellResult r =
        moesim("trace synth --model " + kModel + " --tokens 16 --prompt-tokens 8 --zipf 0.8 --seed " + seed +
               " -o " + path(std::string("t") + seed + ".mtr"));
    ASSERT_EQ(r.status, 0) << r.out;
  }
  const std::string spec = path("m.json");
  std::ofstream(spec) << R"({"models": [{"name": "tiny", "model": "tiny-moe", "store": "r.store"}],
    "traces": [{"name": "a", "validate": "t3.mtr", "calibrate": "t5.mtr"}],
    "systems": ["offload"], "budgets": ["1MiB"], "repeat": 2})";
  const std::string model = preset("models", "tiny-moe");
  expect_refused("validate --matrix " + spec + " -o " + model, model,
                 spec + ": models[0].model: --output '" + model + "' is the same file as input '" + model +
                     "' (the model, preset tiny-moe)");
  expect_refused("validate --matrix " + spec + " --csv " + path("t5.mtr"), path("t5.mtr"),
                 "(" + spec + ": traces[0].calibrate)");
}

TEST_F(IndirectInputs, ClusterSpecPresets) {
  for (const char* s : {"a", "b"}) {
    const ShellResult r =
        moesim("trace synth --model " + kModel + " --tokens 16 --prompt-tokens 8 --zipf 0.8 --seed 1 -o " +
               path(std::string(s) + ".mtr"));
    ASSERT_EQ(r.status, 0) << r.out;
  }
  const std::string spec = path("servers.json");
  std::ofstream(spec) << R"({"model": "tiny-moe", "network": {"bandwidth": "500Mbit/s", "latency": "1ms"},
    "servers": [
      {"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "4MiB", "traces": ["a.mtr"], "arrival": "poisson:10s"},
      {"name": "b", "hw": "jetson-agx-orin-64gb", "gpus": 1, "gpu_memory": "4MiB", "traces": ["b.mtr"], "arrival": "poisson:10s"}]})";
  const std::string hw = preset("hardware", "desktop-rtx4090"), model = preset("models", "tiny-moe");
  expect_refused("cluster " + spec + " --placement uniform --duration 1m -o " + hw, hw,
                 "(" + spec + ": servers[0].hw, preset desktop-rtx4090)");
  expect_refused("cluster " + spec + " --placement uniform --duration 1m --timeline " + model, model,
                 "(" + spec + ": model, preset tiny-moe)");
}

// A sweep's output folder may not hold a file its points read: refused before the folder gets a manifest, a
// results.csv or a points/ folder, and before --resume deletes anything.
TEST_F(IndirectInputs, SweepOutputFolderHoldingWhatItsPointsRead) {
  fs::create_directories(dir_ / "out");
  const std::string trace = path("out/results.csv");
  fs::copy_file(path("t.csv"), trace);
  const std::string spec = path("spec.json");
  std::ofstream(spec) << R"({"command": "replay", "grid": {"trace": ["out/results.csv"], "budget": ["2"],
    "model": [")" << kModel
                      << R"("]}})";
  expect_refused("sweep " + spec + " -o " + path("out"), trace,
                 "-o '" + path("out") + "' is a folder that holds input 'out/results.csv' (" + spec +
                     ": point 0, --trace)");
  expect_refused("sweep " + spec + " --resume -o " + path("out"), trace, "is a folder that holds input");
  EXPECT_EQ(std::vector<fs::path>{fs::path(trace)},
            std::vector<fs::path>(fs::directory_iterator(dir_ / "out"), fs::directory_iterator()));
  // A preset named in the spec's grid, with the data folder's models as the output folder.
  const std::string presets = path("p.json");
  std::ofstream(presets) << R"({"command": "replay", "grid": {"trace": ["t.csv"], "budget": ["2"],
    "model": ["tiny-moe"]}})";
  expect_refused("sweep " + presets + " -o " + path("data/models"), preset("models", "tiny-moe"),
                 "(" + presets + ": point 0, the model, --model tiny-moe)");
  // The run command's default hardware profile.
  const std::string runs = path("r.json");
  std::ofstream(runs) << R"({"command": "run", "grid": {"trace": ["t.csv"], "budget": ["2"],
    "model": [")" << kModel
                      << R"("]}})";
  expect_refused("sweep " + runs + " -o " + path("data/hardware"), preset("hardware", "jetson-agx-orin-64gb"),
                 "the hardware profile, --hw's default jetson-agx-orin-64gb)");
}

TEST_F(IndirectInputs, TwoOutputsOnOnePath) {
  const std::string y = path("y.json");
  for (const std::string& args : {trace_run() + " --json -o " + y + " --timeline " + y,
                                  "compare " + path("t.csv") + " --model " + kModel +
                                      " --policy lru --budget 2 -o " + y + " --csv " + y}) {
    const ShellResult r = moesim(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("' are one path: two outputs of one command cannot share it")) << args;
    EXPECT_FALSE(fs::exists(y)) << args;
  }
  // An existing file, named two ways.
  std::ofstream(y) << "{}\n";
  const ShellResult r = moesim(trace_run() + " -o " + y + " --timeline " + path("./y.json"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(read_text(y), "{}\n");
}

// What a SIGKILLed pack leaves (its temporary, named with its pid) is removed by the next pack into that
// folder; a live process's temporary, an old pid-less name and other files stay.
TEST_F(IndirectInputs, PackRemovesTheTemporariesOfDeadWriters) {
  const std::string w = path("w.safetensors");
  ASSERT_EQ(moesim("weights synth --size 64KiB --seed 1 -o " + w).status, 0);
  fs::create_directories(dir_ / "s");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string dead = temporary_output_name(child, "zzzzzz"),
                    live = temporary_output_name(::getpid(), "yyyyyy");
  for (const std::string& n : {dead, live, std::string(".moesim-xxxxxx"), std::string("notes.txt")})
    std::ofstream(path("s/" + n)) << std::string(1000, 'x');
  const ShellResult r = moesim("pack --weights " + w + " --all-tensors -o " + path("s/s.store"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(fs::exists(path("s/" + dead)));
  for (const std::string& n :
       {live, std::string(".moesim-xxxxxx"), std::string("notes.txt"), std::string("s.store")})
    EXPECT_TRUE(fs::exists(path("s/" + n))) << n;
}

}  // namespace
}  // namespace moesim::test
