// `moesim trace import` / `trace export` / `trace info` with the import options, end to end
// (MOESIM_CLI_PATH): the recipes of docs/trace-format.md for the three real trace kinds, several inputs, the
// summary line's counts, and bad inputs and options (exit status, the "moesim: error:" prefix, file and line
// named).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using moesim::Json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

using Result = moesim::test::ShellResult;  // status: exit code; out: stdout and stderr together

Result sh(const std::string& args) {
  return moesim::test::moesim_combined(args);
}

const std::string kFixtures = moesim::test::test_data("traces/");

class ImportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("moesim_import_cli_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
  Json info(const std::string& mtr) const {
    const Result r = sh("trace info " + mtr + " --json");
    EXPECT_EQ(r.status, 0) << r.out;
    return Json::parse(r.out.substr(r.out.find('{')));
  }

  fs::path dir_;
};

// The recipes, exactly as docs/trace-format.md gives them (input and output paths aside).
const std::string kDeepSeek = kFixtures + "deepseek_v2_lite_hf.csv";
const std::string kDeepSeekFlags =
    " --fields 'seq=Batch Number,layer=Layer ID,experts=Activated Expert IDs' --token-from order";

TEST_F(ImportCli, RecipeDeepSeekV2LiteHfHookCsv) {
  const Result r = sh("trace import " + kDeepSeek + kDeepSeekFlags +
                      " --layer-base 1 --model deepseek-v2-lite -o " + path("ds.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("78 records, 2 sequences, 26 layers x 64 experts, top-6, 0 missing cells"));
  const Json j = info(path("ds.mtr"));
  EXPECT_EQ(j["decode_tokens"], 3);
  // Without --layer-base the model check suggests it.
  const Result e =
      sh("trace import " + kDeepSeek + kDeepSeekFlags + " --model deepseek-v2-lite -o " + path("bad.mtr"));
  EXPECT_EQ(e.status, 1);
  EXPECT_THAT(e.out, HasSubstr("moesim: error: " + kDeepSeek +
                               ":52: field 'layer': layer 26 outside the model's 26 MoE "
                               "layers: the layer counts disagree (ids start at 1? try --layer-base 1)"));
  EXPECT_FALSE(fs::exists(path("bad.mtr")));
  // Without --model either, a warning suggests it.
  const Result w = sh("trace import " + kDeepSeek + kDeepSeekFlags + " -o " + path("w.mtr"));
  EXPECT_EQ(w.status, 0) << w.out;
  EXPECT_THAT(w.out, HasSubstr("moesim: warning: " + kDeepSeek +
                               ": the smallest layer id is 1 and there is no layer 0"));
}

TEST_F(ImportCli, RecipeVllmJsonl) {
  const Result r = sh("trace import " + kFixtures + "olmoe_vllm.jsonl" +
                      " --where type=route --fields experts=topk_ids,weights=topk_weights --token-from order"
                      " --skip-warmup --model olmoe-1b-7b -o " +
                      path("ol.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("olmoe_vllm.jsonl: --skip-warmup dropped 32 warm-up records (lines 2-33)"));
  EXPECT_THAT(r.out, HasSubstr("48 records, 1 sequence, 16 layers x 64 experts, top-8, 0 missing cells; "
                               "1 skipped by --where, 32 warm-up records dropped"));
}

TEST_F(ImportCli, RecipeMixtralJsonl) {
  const Result r =
      sh("trace import " + kFixtures + "mixtral_problems.jsonl" +
         " --fields seq=problem_id,token=token_idx,weights=gating_probs --model mixtral-8x7b -o " +
         path("mx.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("96 records, 2 sequences, 32 layers x 8 experts, top-2, 0 missing cells"));
  const Json j = info(path("mx.mtr"));
  EXPECT_EQ(j["sequences"], 2);
}

TEST_F(ImportCli, SeveralInputsAndTraceOption) {
  const std::string a = write("a.csv", "token,layer,experts\n0,0,1;2\n1,0,2;3\n");
  const std::string b = write("b.csv", "token,layer,experts\n0,0,4;5\n");
  Result r = sh("trace import " + a + " " + b + " --trace " + a + " -o " + path("m.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("5 records, 3 sequences"));
  // --where takes one value per use, so a positional input after it stays an input; repeated, all must match.
  const std::string k =
      write("k.csv", "kind,rank,token,layer,experts\nroute,0,0,0,1\nroute,1,0,0,2\nmeta,0,1,0,3\n");
  r = sh("trace import --where kind=route " + k + " --where rank=0 -o " + path("k.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1 records, 1 sequence"));
  EXPECT_THAT(r.out, HasSubstr("2 skipped by --where"));
  EXPECT_THAT(r.out, HasSubstr("moesim: warning: " + k + ": --where skipped 2 of 3 records"));
  // No input at all is a usage error.
  r = sh("trace import -o " + path("none.mtr"));
  EXPECT_EQ(r.status, 2);  // a usage error
  EXPECT_THAT(r.out, HasSubstr("moesim: error: a trace is required"));
}

TEST_F(ImportCli, DuplicatesDelimiterBomAndCutLastLine) {
  const std::string d = write("d.csv", "token,layer,experts\n0,0,1\n0,0,2\n1,0,3\n");
  Result r = sh("trace import " + d + " -o " + path("d.mtr"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("moesim: error: " + d + ":3: duplicate record"));
  EXPECT_THAT(r.out, HasSubstr("--drop-duplicates keeps the first"));
  r = sh("trace import " + d + " --drop-duplicates -o " + path("d.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 records, 1 sequence"));
  EXPECT_THAT(r.out, HasSubstr("1 duplicates dropped"));
  // TSV detected from its header; --delimiter for anything else.
  const std::string t = write("t.tsv", "\xEF\xBB\xBFtoken\tlayer\texperts\n0\t0\t[1, 2]\n");
  r = sh("trace import " + t + " -o " + path("t.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string p = write("p.csv", "token|layer|experts\n0|0|1;2\n");
  r = sh("trace import " + p + " --delimiter '|' -o " + path("p.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  r = sh("trace import " + p + " --delimiter ab -o " + path("x.mtr"));
  EXPECT_EQ(r.status, 2);  // a usage error
  EXPECT_THAT(r.out, HasSubstr("moesim: error: --delimiter: 'ab' is not one character"));
  // Cut inside its last number: imported, with a warning naming file and line.
  const std::string c = write("c.csv", "token,layer,experts\n0,0,1;63\n1,0,2;6");
  r = sh("trace import " + c + " -o " + path("c.mtr"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("moesim: warning: " + c +
                               ":3: the last line has no newline; the file may have been cut"));
  const std::string c2 = write("c2.csv", "token,layer,experts\n0,0,1;63\n1,0,\"[2, 6");
  r = sh("trace import " + c2 + " -o " + path("c2.mtr"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("moesim: error: " + c2 +
                               ":3: unterminated quoted field (the last line has no newline"));
}

TEST_F(ImportCli, DetectionErrors) {
  const std::string junk = write("junk.mtr", std::string("\x07\x99\x00\x01 random", 11));
  Result r = sh("trace import " + junk + " -o " + path("o.mtr"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out,
              HasSubstr("moesim: error: " + junk + ": not an .mtr file (no MOESIMTR magic at byte 0)"));
  const std::string bin = write("junk.csv", std::string("tok\x00\x01 random", 12));
  r = sh("trace info " + bin);
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("moesim: error: " + bin + ": not a text trace (binary data at byte 3)"));
  // A folder beside the output (an output inside an input folder is refused before any reading).
  fs::create_directories(dir_ / "sub");
  r = sh("trace import " + path("sub") + " -o " + path("o.mtr"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("moesim: error: " + path("sub") + ": is a directory"));
  EXPECT_FALSE(fs::exists(path("o.mtr")));
  const std::string j = write("l.jsonl", "{\"token\":0,\"layer\":0,\"experts\":\"[1, 2\"}\n");
  r = sh("trace import " + j + " -o " + path("o.mtr"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out,
              HasSubstr("moesim: error: " + j + ":1: field 'experts': list '[1, 2' has '[' but no ']'"));
  r = sh("trace import " + j + " --token-from rows -o " + path("o.mtr"));
  EXPECT_EQ(r.status, 2);  // a usage error
  EXPECT_THAT(r.out, HasSubstr("moesim: error: --token-from: 'rows' is not column or order"));
  r = sh("trace import " + j + " --where type -o " + path("o.mtr"));
  EXPECT_EQ(r.status, 2);  // a usage error
  EXPECT_THAT(r.out, HasSubstr("moesim: error: --where: 'type' is not KEY=VALUE"));
}

TEST_F(ImportCli, OtherCommandsTakeTheSameOptions) {
  // trace info and trace export read the DeepSeek-shaped CSV with the same flags; export takes --trace.
  Result r = sh("trace info " + kDeepSeek + kDeepSeekFlags + " --layer-base 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(Json::parse(r.out.substr(r.out.find('{')))["layers"], 26);
  r = sh("trace export --trace " + kDeepSeek +
         " --in-fields 'seq=Batch Number,layer=Layer ID,experts=Activated Expert IDs'"
         " --token-from order --layer-base 1 -o " +
         path("ds.jsonl"));
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(path("ds.jsonl"));
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, R"({"seq":0,"phase":"decode","token":0,"layer":0,"experts":[8,26,56,60,2,9]})");
  r = sh("trace export " + kFixtures +
         "mixtral_problems.jsonl --in-fields seq=problem_id,token=token_idx,"
         "weights=gating_probs -o " +
         path("mx.jsonl"));
  ASSERT_EQ(r.status, 0) << r.out;
  r = sh("trace export -o " + path("none.jsonl"));
  EXPECT_EQ(r.status, 2);  // a usage error
  EXPECT_THAT(r.out, HasSubstr("moesim: error: a trace is required"));
}

}  // namespace
