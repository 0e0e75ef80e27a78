// No command writes over its own input (cli/io_guard.h): an output that is the same file as an input --
// by the same name, through a symlink, a hard link or `dir/../x` -- or a folder output that holds an input
// is a usage error (exit 2) before any work, and the input is left byte for byte as it was. Also: an output
// file name as long as the file system allows (the temporary file next to it has a short name).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;
using moesim::test::read_text;

const std::string kTraces = moesim::test::test_data("traces/");

class IoSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = moesim::test::fresh_test_dir("moesim_io_safety",
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string copy(const std::string& from, const std::string& name) const {
    fs::copy_file(from, path(name));
    return path(name);
  }
  // `moesim ARGS` must be refused as a usage error naming both paths, leaving `input` as it was.
  void expect_refused(const std::string& args, const std::string& input, const std::string& message) const {
    const std::string before = read_text(input);
    ASSERT_FALSE(before.empty());
    const auto r = moesim::test::moesim_cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("moesim: error: --")) << args;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(read_text(input), before) << args << ": the input changed";
    // Nothing was started: no temporary file was left either.
    for (const auto& e : fs::directory_iterator(fs::path(input).parent_path()))
      EXPECT_FALSE(e.path().filename().string().starts_with(".moesim-")) << e.path();
  }

  fs::path dir_;
};

TEST_F(IoSafety, PackOutputIsItsWeights) {
  const std::string w = path("w.safetensors");
  const auto made = moesim::test::moesim_cli("weights synth --size 64KiB --seed 1 -o " + w);
  ASSERT_EQ(made.code, 0) << made.err;
  expect_refused(
      "pack --weights " + w + " --all-tensors -o " + w, w,
      "--output '" + w + "' is the same file as input '" + w + "' (--weights); choose another output path");
}

TEST_F(IoSafety, TraceImportOutputIsItsInput) {
  const std::string x = copy(kTraces + "tiny_logits.jsonl", "x.jsonl");
  expect_refused("trace import " + x + " -o " + x, x,
                 "--output '" + x + "' is the same file as input '" + x + "' (input)");
  // --trace, the named form of the same input.
  expect_refused("trace import --trace " + x + " -o " + x, x, "(--trace); choose another output path");
}

TEST_F(IoSafety, TraceExportOutputIsItsInput) {
  const std::string e = path("e.mtr");
  ASSERT_EQ(moesim::test::moesim_cli("trace import " + kTraces + "tiny.csv -o " + e).code, 0);
  expect_refused("trace export " + e + " -o " + e, e,
                 "--output '" + e + "' is the same file as input '" + e + "'");
}

TEST_F(IoSafety, TraceStatsOutputIsItsInput) {
  const std::string q = copy(kTraces + "tiny.csv", "q.csv");
  expect_refused("trace stats " + q + " -o " + q, q,
                 "--output '" + q + "' is the same file as input '" + q + "'");
  expect_refused("trace info " + q + " --json -o " + q, q, "is the same file as input");
}

TEST_F(IoSafety, SameFileThroughSymlinkHardLinkDotDotAndRelativePath) {
  const std::string q = copy(kTraces + "tiny.csv", "q.csv");
  fs::create_symlink(q, path("link.csv"));
  expect_refused("trace stats " + q + " -o " + path("link.csv"), q, "is the same file as input '" + q + "'");
  // The input reached through the link, the output by its own name.
  expect_refused("trace stats " + path("link.csv") + " -o " + q, q, "is the same file as input");
  fs::create_hard_link(q, path("hard.csv"));
  expect_refused("trace stats " + q + " -o " + path("hard.csv"), q, "is the same file as input");
  fs::create_directories(dir_ / "sub");
  expect_refused("trace stats " + q + " -o " + path("sub/../q.csv"), q, "is the same file as input");
}

// A relative spelling of the input against an absolute spelling of the output.
TEST_F(IoSafety, RelativeAndAbsolutePath) {
  const std::string q = copy(kTraces + "tiny.csv", "q.csv");
  const std::string before = read_text(q);
  const auto r = moesim::test::run_shell("cd " + dir_.string() + " && " + MOESIM_CLI_PATH +
                                         " trace stats q.csv -o " + q + " 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--output '" + q + "' is the same file as input 'q.csv' (trace)"));
  EXPECT_EQ(read_text(q), before);
}

TEST_F(IoSafety, EveryOutputOptionIsChecked) {
  const std::string q = copy(kTraces + "tiny.csv", "q.csv");
  // compare's --csv: a second output of the same command.
  expect_refused("compare " + q + " --policy lru --budget 2 --csv " + q, q,
                 "--csv '" + q + "' is the same file as input '" + q + "'");
  // run's --timeline.
  expect_refused("run " + q + " --model " + moesim::test::test_data("models/tiny-moe.json") +
                     " --budget 2 --timeline " + q,
                 q, "--timeline '" + q + "' is the same file as input '" + q + "'");
}

TEST_F(IoSafety, FolderOutputHoldingAnInput) {
  fs::create_directories(dir_ / "out");
  const std::string spec = path("out/spec.json");
  std::ofstream(spec) << "{\"command\": \"replay\", \"grid\": {}}\n";
  expect_refused("sweep " + spec + " -o " + path("out"), spec,
                 "--output '" + path("out") + "' is a folder that holds input '" + spec + "' (spec)");
  // merge into one of its own shards.
  fs::create_directories(dir_ / "shard");
  std::ofstream(path("shard/manifest.json")) << "{}\n";
  expect_refused(
      "merge " + path("shard") + " -o " + path("shard"), path("shard/manifest.json"),
      "--output '" + path("shard") + "' is the same folder as input '" + path("shard") + "' (dirs)");
}

TEST_F(IoSafety, DistinctOutputsStillWork) {
  // The same folder, another name; a device; standard output: all fine.
  const std::string q = copy(kTraces + "tiny.csv", "q.csv");
  EXPECT_EQ(moesim::test::moesim_cli("trace stats " + q + " -o " + path("q.txt")).code, 0);
  EXPECT_EQ(moesim::test::moesim_cli("trace stats " + q + " -o /dev/null").code, 0);
  EXPECT_EQ(moesim::test::moesim_cli("trace stats " + q).code, 0);
  // A folder output next to (not above) its input.
  fs::create_directories(dir_ / "merged");
  EXPECT_EQ(moesim::test::moesim_cli("trace import " + q + " -o " + path("merged/q.mtr")).code, 0);
}

TEST_F(IoSafety, LongestOutputFileName) {
  // The temporary file next to the output must not be longer than the output's own name.
  const long name_max = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const std::string name(static_cast<size_t>(name_max) - 4, 'n');
  const std::string out = path(name + ".mtr");
  const auto r = moesim::test::moesim_cli("trace import " + kTraces + "tiny.csv -o " + out);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out));
  const auto s = moesim::test::moesim_cli("trace stats " + out + " -o " + path(name + ".txt"));
  EXPECT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

}  // namespace
