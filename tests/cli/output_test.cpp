// The CLI frame end to end (MOESIM_CLI_PATH): failed writes to standard output, exit codes and the
// "moesim: error:" prefix for parse errors, group descriptions in --help, --quiet, outputs checked before
// the work, device nodes and symlinks given to -o, temp files removed when the process is terminated.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "base/atomic_file.h"
#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kCli = MOESIM_CLI_PATH;
const std::string kTrace = moesim::test::test_data("traces/tiny.route.csv");
const std::string kReplay = "replay --trace " + kTrace + " --policy lru --capacity 2";

using Result = moesim::test::ShellResult;  // status: exit code (-1 when killed by a signal)

// Runs `sh -c SCRIPT` where "$M" is the moesim binary; stdout and stderr together unless the script
// redirects them itself.
Result sh(const std::string& script) {
  return moesim::test::run_shell("M='" + kCli + "'; { " + script + "; } 2>&1");
}

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() /
            ("moesim_output_cli_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  size_t entries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(path_)) ++n;
    return n;
  }

 private:
  fs::path path_;
};

TEST(OutputCli, FullStandardOutputFails) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  const Result r = sh("\"$M\" " + kReplay + " > /dev/full");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: standard output: write failed: No space left on device"));
  // Commands that print with printf (not through an output file) are caught by main's final check.
  const Result p = sh("\"$M\" policies > /dev/full");
  EXPECT_EQ(p.status, 1) << p.out;
  EXPECT_THAT(p.out, HasSubstr("moesim: error: standard output: write failed"));
}

TEST(OutputCli, ClosedPipeWithSigpipeIgnoredFails) {
  // A reader that went away: with SIGPIPE ignored (as many launchers do) the write gets EPIPE, which must
  // still be a failure. Built by hand so the pipe is closed before moesim writes (no race).
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  TempDir d;
  const std::string err = d.file("stderr");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_IGN);
    ::dup2(fds[1], STDOUT_FILENO);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(e, STDERR_FILENO);
    ::execl(kCli.c_str(), kCli.c_str(), "policies", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(moesim::read_file(err), HasSubstr("moesim: error: standard output: write failed: Broken pipe"));
}

TEST(OutputCli, ParseErrorsExitTwoWithPrefixAndHelpPointer) {
  Result r = sh("\"$M\" " + kReplay + " --no-such-option");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: "));
  EXPECT_THAT(r.out, HasSubstr("--no-such-option"));
  EXPECT_THAT(r.out, HasSubstr("run 'moesim replay --help' for the options"));

  // An unknown option is named even when required options are missing too.
  r = sh("\"$M\" replay --polcy lru");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: unknown argument: --polcy"));

  r = sh("\"$M\" replay --trace " + kTrace);  // --policy missing
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: --policy is required"));

  r = sh("\"$M\" " + kReplay + " --batch lots");  // conversion
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: "));

  r = sh("\"$M\" pack --weights w.safetensors -o x.store --shards 0");  // out of range
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: --shards"));
  EXPECT_THAT(r.out, HasSubstr("run 'moesim pack --help'"));

  r = sh("\"$M\" trace");  // a group without its subcommand
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: A subcommand is required"));
  EXPECT_THAT(r.out, HasSubstr("run 'moesim trace --help'"));

  r = sh("\"$M\"");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: "));
}

TEST(OutputCli, UsageErrorsFromCommandsExitTwo) {
  const Result r = sh("\"$M\" weights synth --seed 1 -o /dev/null");  // neither --model nor --size
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: give exactly one of --model and --size"));
}

TEST(OutputCli, HelpAndVersionExitZero) {
  Result r = sh("\"$M\" --help");
  EXPECT_EQ(r.status, 0) << r.out;
  // Each line of the subcommand list, groups included, carries a description after its name.
  const size_t list = r.out.find("Subcommands:\n");
  ASSERT_NE(list, std::string::npos) << r.out;
  std::istringstream lines(r.out.substr(list + 13));
  int listed = 0;
  for (std::string line; std::getline(lines, line) && !line.empty(); ++listed)
    EXPECT_THAT(line, ::testing::MatchesRegex("  [a-z-]+ +[A-Z].*")) << "no description: " << line;
  EXPECT_GE(listed, 20);
  for (const char* group : {"trace", "store", "weights", "model", "buddy"})
    EXPECT_THAT(r.out, HasSubstr(std::string("\n  ") + group + " ")) << group;
  EXPECT_THAT(r.out, HasSubstr("-q,--quiet"));
  r = sh("\"$M\" trace --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("Routing traces"));
  r = sh("\"$M\" --version");
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, ::testing::StartsWith("moesim "));
}

// Only the command a line names declares its options (cli/entry.cpp): whatever stands before it, its help
// lists them, a nested command's included.
TEST(OutputCli, TheNamedCommandDeclaresItsOptionsWhereverItStands) {
  Result r = sh("\"$M\" -q replay --help");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--policy"));
  r = sh("\"$M\" --quiet trace import --help");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--lookup-index"));
  r = sh("\"$M\" --help replay");  // CLI11 gives the command's help wherever --help stands
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--mrc-sample"));
  r = sh("\"$M\" -q " + kReplay);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(OutputCli, QuietBeforeOrAfterTheSubcommand) {
  EXPECT_EQ(sh("\"$M\" -q " + kReplay).status, 0);
  EXPECT_EQ(sh("\"$M\" " + kReplay + " --quiet").status, 0);
  EXPECT_EQ(sh("\"$M\" trace info " + kTrace + " -q").status, 0);
}

TEST(OutputCli, ProgressBarOnRequestAndQuietSilencesIt) {
  // 512 MiB of Gaussian BF16 takes well over the bar's half-second threshold; /dev/null keeps it off disk.
  const std::string synth = "\"$M\" weights synth --size 512MiB --seed 1 -o /dev/null";
  Result r = sh("MOESIM_PROGRESS=1 " + synth + " 2>&1 >/dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("weights synth ["));
  EXPECT_THAT(r.out, HasSubstr("MiB/512.00 MiB"));
  r = sh("MOESIM_PROGRESS=1 " + synth + " -q 2>&1 >/dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "");
}

TEST(OutputCli, DevNullStaysACharacterDeviceAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can replace /dev/null: the bug cannot show otherwise";
  const Result r = sh("\"$M\" trace import " + kTrace + " -o /dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  struct stat st;
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null was replaced by a regular file";
}

TEST(OutputCli, SymlinkOutputKeepsTheLink) {
  TempDir d;
  fs::create_symlink("real.mtr", d.file("link.mtr"));
  const Result r = sh("\"$M\" trace import " + kTrace + " -o " + d.file("link.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::is_symlink(d.file("link.mtr")));
  EXPECT_GT(fs::file_size(d.file("real.mtr")), 0u);
  EXPECT_EQ(d.entries(), 2u);
}

TEST(OutputCli, OutputsAreCheckedBeforeTheWork) {
  TempDir d;
  const std::string bad = d.file("missing/out");
  // The inputs do not exist either: the output's error comes first, so nothing was read or computed.
  Result r = sh("\"$M\" pack --weights " + d.file("nope.safetensors") + " -o " + bad);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: error: " + bad + ": cannot write: directory"));
  r = sh("\"$M\" weights stats " + d.file("nope.safetensors") + " -o " + bad);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr(bad + ": cannot write"));
  r = sh("\"$M\" weights synth --size 64MiB --seed 1 -o " + d.file(""));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("cannot write: is a directory"));
}

TEST(OutputCli, PackStreamsAStoreToStandardOutput) {
  TempDir d;
  const std::string w = d.file("w.safetensors"), s = d.file("s.store");
  ASSERT_EQ(sh("\"$M\" weights synth --size 2MiB --seed 3 -o " + w).status, 0);
  Result r = sh("\"$M\" pack --weights " + w + " --threads 1 -o - > " + s);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("packed 2 tensors"));  // the summary went to stderr, not into the store
  r = sh("\"$M\" store verify " + s + " --weights " + w);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(OutputCli, WeightsStatsWritesJsonToAFile) {
  TempDir d;
  const std::string w = d.file("w.safetensors"), j = d.file("stats.json");
  ASSERT_EQ(sh("\"$M\" weights synth --size 2MiB --seed 3 -o " + w).status, 0);
  const Result r = sh("\"$M\" weights stats --weights " + w + " --json --threads 1 -o " + j);
  ASSERT_EQ(r.status, 0) << r.out;
  const moesim::Json doc = moesim::load_json_file(j);
  EXPECT_EQ(doc["tensors"], 2);
  EXPECT_TRUE(doc["warnings"].is_array());
}

TEST(OutputCli, TerminatedRunLeavesNoTempFile) {
  TempDir d;
  const std::string out = d.file("w.safetensors");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    ::execl(kCli.c_str(), kCli.c_str(), "weights", "synth", "--size", "4GiB", "--seed", "1", "-o",
            out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait (bounded) for the temporary file to appear, then terminate the run.
  bool seen = false;
  for (int i = 0; i < 3000 && !seen; ++i) {
    seen = d.entries() > 0;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(seen) << "no temporary file appeared";
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(d.entries(), 0u);
}

}  // namespace
