// Reading traces from what is not a plain file, end to end: a FIFO with a writer, a pipe as /dev/stdin, a
// shell's <(cmd). Each is opened once and read once (the format is detected from the same stream), so text
// traces work and .mtr, which is mapped, says to save it to a file first. Also the import errors and
// warnings that name what is wrong: a JSONL last line without its newline, an expert id too large for any
// integer type, several missing fields reported together with the file's columns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;
using moesim::test::run_shell;

const std::string kTraces = moesim::test::test_data("traces/");
const std::string kMoesim = MOESIM_CLI_PATH;

class TraceInputCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = moesim::test::fresh_test_dir("moesim_trace_input",
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
  // `trace info` of the plain file: what every other way of handing it over must print too.
  std::string info_of(const std::string& file) const {
    const auto r = run_shell(kMoesim + " trace info " + file + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.out;
    return r.out.substr(r.out.find("model:"));
  }

  fs::path dir_;
};

// `timeout` turns a hang into a failure (exit 124) instead of a stuck test run.
constexpr const char* kTimeout = "timeout 60 ";

TEST_F(TraceInputCli, FifoWithAWriter) {
  for (const std::string name : {"tiny.csv", "tiny_logits.jsonl", "tiny.route.csv"}) {
    const std::string fifo = path("fifo-" + name);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto r = run_shell("(cat " + kTraces + name + " > " + fifo + " &) ; " + kTimeout + kMoesim +
                             " trace info " + fifo + " 2>&1");
    EXPECT_EQ(r.status, 0) << name << ": " << r.out;
    ASSERT_NE(r.out.find("model:"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.substr(r.out.find("model:")), info_of(kTraces + name)) << name;
  }
}

TEST_F(TraceInputCli, PipeAsDevStdinAndProcessSubstitution) {
  const std::string f = kTraces + "tiny_logits.jsonl";
  const std::string expected = info_of(f);
  auto r = run_shell("cat " + f + " | " + kTimeout + kMoesim + " trace info /dev/stdin 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(expected));
  r = run_shell(kTimeout + kMoesim + " trace info /dev/stdin < " + f + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(expected));
  r = run_shell("bash -c '" + std::string(kTimeout) + kMoesim + " trace info <(cat " + f + ")' 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(expected));
  // A larger file than the detection prefix (4 KiB), through a pipe: every record arrives.
  std::string text = "token,layer,experts\n";
  for (int t = 0; t < 1000; ++t) text += std::to_string(t) + ",0," + std::to_string(t % 7) + ";7\n";
  const std::string big = write("big.csv", text);
  ASSERT_GT(fs::file_size(big), 8192u);
  r = run_shell("cat " + big + " | " + kTimeout + kMoesim + " trace info /dev/stdin 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(info_of(big)));
  EXPECT_THAT(r.out, HasSubstr("records:          1000 "));
  // And on to an import: the same trace as from the file.
  r = run_shell("cat " + big + " | " + kTimeout + kMoesim + " trace import /dev/stdin -o " + path("p.mtr") +
                " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(info_of(path("p.mtr")), info_of(big));
}

TEST_F(TraceInputCli, MtrNeedsARegularFile) {
  const std::string mtr = path("t.mtr");
  ASSERT_EQ(run_shell(kMoesim + " trace import " + kTraces + "tiny.csv -o " + mtr + " 2>&1").status, 0);
  // Redirected from the file, /dev/stdin is that file: it maps.
  auto r = run_shell(kTimeout + kMoesim + " trace info /dev/stdin < " + mtr + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(info_of(mtr)));
  // Through a pipe it cannot be mapped: say so, and what to do.
  r = run_shell("cat " + mtr + " | " + kTimeout + kMoesim + " trace info /dev/stdin 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr("moesim: error: /dev/stdin: is not a regular file (a pipe); the .mtr reader maps "
                        "the file: save it to a file first"));
  // replay first looks for an .mtr lookup index: that must not swallow the pipe's bytes.
  r = run_shell("cat " + kTraces + "tiny.csv | " + kTimeout + kMoesim +
                " replay /dev/stdin --policy lru --budget 2 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST_F(TraceInputCli, JsonlLastLineWithoutNewlineWarns) {
  const std::string j =
      write("cut.jsonl",
            "{\"token\":0,\"layer\":0,\"experts\":[1,2]}\n{\"token\":1,\"layer\":0,\"experts\":[2,3]}");
  auto r = run_shell(kMoesim + " trace import " + j + " -o " + path("o.mtr") + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: warning: " + j +
                               ":2: the last line has no newline; the file may have "
                               "been cut"));
  // With the newline: no warning.
  const std::string ok = write("ok.jsonl", "{\"token\":0,\"layer\":0,\"experts\":[1,2]}\n");
  r = run_shell(kMoesim + " trace import " + ok + " -o " + path("ok.mtr") + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("warning")));
}

TEST_F(TraceInputCli, ExpertIdOutOfRange) {
  const std::string j = write("big.jsonl", "{\"token\":0,\"layer\":0,\"experts\":[1,4294967296]}\n");
  auto r = run_shell(kMoesim + " trace import " + j + " -o " + path("o.mtr") + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr(j + ":1: field 'experts': expert id 4294967296 outside [0, 65536): out of range "
                            "(a trace holds expert ids up to 65535)"));
  EXPECT_THAT(r.out, Not(HasSubstr("non-negative integer")));
  // Beyond 64 bits, and in a CSV list, and against a model's expert count.
  const std::string c = write("big.csv", "token,layer,experts\n0,0,1;99999999999999999999999\n");
  r = run_shell(kMoesim + " trace import " + c + " -o " + path("o.mtr") + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr(c + ":2: field 'experts': expert id 99999999999999999999999 outside [0, 65536): "
                            "out of range"));
  r = run_shell(kMoesim + " trace import " + j + " --model " +
                moesim::test::test_data("models/tiny-moe.json") + " -o " + path("o.mtr") + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("expert id 4294967296 outside [0, "));
  EXPECT_THAT(r.out, HasSubstr("): out of range (the model has "));
  // Not a number at all is still that.
  const std::string n = write("neg.jsonl", "{\"token\":0,\"layer\":0,\"experts\":[1,-2]}\n");
  r = run_shell(kMoesim + " trace import " + n + " -o " + path("o.mtr") + " 2>&1");
  EXPECT_THAT(r.out, HasSubstr("expert id -2 is not a non-negative integer"));
}

TEST_F(TraceInputCli, MissingFieldsAllAtOnce) {
  const std::string c = write("cols.csv", "pos,L,ids\n0,0,1;2\n");
  auto r = run_shell(kMoesim + " trace import " + c + " -o " + path("o.mtr") + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr(c + ":1: fields 'token', 'layer', 'experts': missing (no column named 'token', "
                            "'layer', 'experts' in the header row, which has: pos, L, ids); map them with "
                            "--fields token=NAME,layer=NAME,experts=NAME, or number tokens by row order with "
                            "--token-from order"));
  const std::string j = write("keys.jsonl", "{\"pos\":0,\"ids\":[1,2]}\n");
  r = run_shell(kMoesim + " trace import " + j + " -o " + path("o.mtr") + " 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr(j + ":1: fields 'token', 'layer', 'experts': missing (no key named 'token', "
                            "'layer', 'experts' in the record, which has: ids, pos); map them with --fields "
                            "token=NAME,layer=NAME,experts=NAME"));
}

}  // namespace
