// `moesim validate --matrix` end to end: a 2-cell matrix (offload and zipmoe) on the tiny model, each cell
// calibrated on another trace than it validates; the JSON's shape and verdicts, the CSV, and the refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

const std::string kModel = test::test_data("models/tiny-moe.json");

class ValidateMatrixCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_path("validate_matrix_cli");
    std::filesystem::create_directories(dir_);
    const std::string w = dir_ + "/w.safetensors";
    ASSERT_EQ(moesim_cli("-q weights synth --model " + kModel + " --seed 1 -o " + w).code, 0);
    ASSERT_EQ(
        moesim_cli("-q pack --weights " + w + " --codec zstd:3 --shards 2 -o " + dir_ + "/z.store").code, 0);
    ASSERT_EQ(moesim_cli("-q pack --weights " + w + " --codec raw --shards 1 -o " + dir_ + "/r.store").code,
              0);
    for (const char* seed : {"3", "5"})
      ASSERT_EQ(moesim_cli("-q trace synth --model " + kModel +
                           " --tokens 16 --prompt-tokens 8 --zipf 0.8 --seed " + seed + " -o " + dir_ + "/t" +
                           seed + ".mtr")
                    .code,
                0);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  // A spec in the test folder; its paths are relative to it.
  static std::string spec(const std::string& name, const std::string& calibrate) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << R"({"models": [{"name": "tiny", "model": ")" << kModel
                        << R"(", "stores": {"zipmoe": "z.store", "offload": "r.store"}}],
  "traces": [{"name": "t3-on-t5", "validate": "t3.mtr", "calibrate": ")"
                        << calibrate << R"("}],
  "systems": ["offload", {"system": "zipmoe", "options": ["--recover-on", "cpu"]}],
  "budgets": ["1MiB"], "repeat": 2,
  "options": ["--workers", "2", "--buffered", "--gpu", "off", "--no-pilot"]})";
    return path;
  }
  static std::string dir_;
};
std::string ValidateMatrixCli::dir_;

TEST_F(ValidateMatrixCli, EveryCellHasItsErrorsWithIntervalsAndVerdicts) {
  const std::string csv = dir_ + "/m.csv";
  const CliResult r = moesim_cli("-q validate --matrix " + spec("m.json", "t5.mtr") + " --json --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["header"]["command"], "validate --matrix");
  ASSERT_EQ(j["cells"].size(), 2u);
  const std::set<std::string> verdicts = {"met", "missed", "undecided"};
  for (size_t i = 0; i < 2; ++i) {
    const Json& c = j["cells"][i];
    ASSERT_EQ(c["status"], "ok") << c.dump();
    EXPECT_EQ(c["index"], i);
    EXPECT_EQ(c["system"], i == 0 ? "offload" : "zipmoe");
    EXPECT_EQ(c["calibrate"], dir_ + "/t5.mtr");
    for (const char* path :
         {"/errors/structure/tpot", "/errors/structure/layer_makespan_median", "/errors/cost/tpot"}) {
      const Json& e = c[Json::json_pointer(path)];
      EXPECT_TRUE(e["value"].is_number()) << path;
      EXPECT_TRUE(verdicts.contains(e["verdict"].get<std::string>())) << path << " " << e.dump();
    }
    // The cost TPOT error is judged over the exec median's interval (two runs): it holds the error.
    const Json& cost = c["errors"]["cost"]["tpot"];
    ASSERT_TRUE(cost["low"].is_number() && cost["high"].is_number()) << cost.dump();
    EXPECT_LE(cost["low"].get<double>(), cost["value"].get<double>());
    EXPECT_GE(cost["high"].get<double>(), cost["value"].get<double>());
    EXPECT_EQ(cost["decided_by"], "interval");
    // Each verdict agrees with its value and interval.
    const double lo = cost["low"].get<double>(), hi = cost["high"].get<double>(),
                 lim = cost["limit"].get<double>();
    const std::string want = std::max(std::abs(lo), std::abs(hi)) <= lim           ? "met"
                             : (std::min(lo, hi) > lim || std::max(lo, hi) < -lim) ? "missed"
                                                                                   : "undecided";
    EXPECT_EQ(cost["verdict"], want);
    const Json& st = c["errors"]["structure"]["tpot"];
    EXPECT_EQ(st["verdict"], std::abs(st["value"].get<double>()) <= 0.02 ? "met" : "missed");
    EXPECT_TRUE(c["ablations"].contains("structure_ops_only"));
    EXPECT_TRUE(c["ablations"].contains("cost_without:runtime"));  // a fitted profile has a runtime section
    // TTFT is no target, but a prefill's terms are weighed on it: each cell and each cost ablation carries
    // it.
    EXPECT_TRUE(c["errors"]["cost"]["ttft"]["value"].is_number()) << c["errors"].dump();
    EXPECT_TRUE(c["ablations"]["cost_without:runtime"]["ttft"].is_number());
    EXPECT_EQ(c["exec"]["runs"], 2u);
  }
  const Json& s = j["summary"];
  EXPECT_EQ(s["cells"], 2u);
  EXPECT_EQ(s["cells_failed"], 0u);
  int judged = 0;
  for (const auto& [k, v] : s["verdicts"]["cost_tpot"].items()) judged += v.get<int>();
  EXPECT_EQ(judged, 2);
  EXPECT_FALSE(j["terms"].empty());
  bool cost_ttft = false;
  for (const Json& t : j["terms"]) {
    cost_ttft |= t["check"] == "cost" && t["metric"] == "ttft";
    EXPECT_FALSE(t["check"] == "structure" && t["metric"] == "ttft")
        << t.dump();  // a structure check has no TTFT row
  }
  EXPECT_TRUE(cost_ttft);
  const std::string text = read_text(csv);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);  // header and a row per cell
  EXPECT_THAT(text, HasSubstr("index,model,trace,system,budget,batch,io,status,structure_tpot,"));
  EXPECT_THAT(text, HasSubstr("\n1,tiny,t3-on-t5,zipmoe,1MiB,1,default,ok,"));
}

TEST_F(ValidateMatrixCli, TheTableNamesEveryCell) {
  const CliResult r = moesim_cli("-q validate --matrix " + spec("t.json", "t5.mtr"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("offload 1MiB b1 tiny t3-on-t5 default"));
  EXPECT_THAT(r.out, HasSubstr("zipmoe 1MiB b1 tiny t3-on-t5 default"));
  EXPECT_THAT(r.out, HasSubstr("every target met: "));
  EXPECT_THAT(r.out, HasSubstr("terms on the matrix"));
}

TEST_F(ValidateMatrixCli, ATraceFittedToTheValidatedOneIsRefused) {
  ASSERT_EQ(moesim_cli("-q trace synth --fit " + dir_ + "/t3.mtr --tokens 8 --prompt-tokens 4 --seed 2 -o " +
                       dir_ + "/fit3.mtr")
                .code,
            0);
  const CliResult r = moesim_cli("-q validate --matrix " + spec("f.json", "fit3.mtr"));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("f.json: traces[0].calibrate: '" + dir_ +
                               "/fit3.mtr' was synthesized (trace synth "
                               "--fit) from the validated trace"));
}

TEST_F(ValidateMatrixCli, AFailedCellIsReportedAndTheOthersStillRun) {
  // zipmoe's store is missing: that cell fails with its message, offload's still runs.
  std::string s = read_text(spec("x.json", "t5.mtr"));
  s.replace(s.find("\"z.store\""), 9, "\"missing.store\"");
  std::ofstream(dir_ + "/x.json") << s;
  const CliResult r = moesim_cli("-q validate --matrix " + dir_ + "/x.json --json -o " + dir_ + "/x.out");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("1 of 2 cells failed"));
  const Json j = Json::parse(read_text(dir_ + "/x.out"));
  EXPECT_EQ(j["cells"][0]["status"], "ok");
  EXPECT_EQ(j["cells"][1]["status"], "failed");
  EXPECT_THAT(j["cells"][1]["message"].get<std::string>(), HasSubstr("missing.store"));
  EXPECT_EQ(j["summary"]["cells_failed"], 1u);
}

TEST_F(ValidateMatrixCli, OptionsOfOneValidationAndOutputsOverInputsAreRefused) {
  const std::string m = spec("r.json", "t5.mtr");
  const CliResult a = moesim_cli("-q validate --matrix " + m + " --repeat 3");
  EXPECT_EQ(a.code, 2);
  EXPECT_THAT(a.err, HasSubstr("--matrix: --repeat is not an option of a matrix"));
  const CliResult b = moesim_cli("-q validate --matrix " + m + " -o " + dir_ + "/t3.mtr");
  EXPECT_EQ(b.code, 2);
  EXPECT_THAT(b.err, HasSubstr("is the same file as input"));
  const CliResult c = moesim_cli("-q validate --matrix " + m + " --csv " + dir_ + "/z.store");
  EXPECT_EQ(c.code, 2);
  std::string bad = read_text(m);
  bad.replace(bad.find("\"--no-pilot\""), 12, "\"--no-such\"");
  std::ofstream(dir_ + "/bad.json") << bad;
  const CliResult d = moesim_cli("-q validate --matrix " + dir_ + "/bad.json");
  EXPECT_EQ(d.code, 2);
  EXPECT_THAT(d.err, HasSubstr("bad.json: cell 0 (offload 1MiB b1 tiny t3-on-t5 default): "));
}

// A transfer cell: the profile is fitted on runs at batch 1 and judged on runs at batch 2, the configuration
// a user asks about after calibrating once.
TEST_F(ValidateMatrixCli, ATransferCellCalibratesAtItsOwnBatch) {
  const std::string path = dir_ + "/transfer.json";
  std::ofstream(path) << R"({"models": [{"name": "tiny", "model": ")" << kModel << R"(", "store": "r.store"}],
  "traces": [{"name": "t3-on-t5", "validate": "t3.mtr", "calibrate": "t5.mtr"}],
  "systems": ["offload"], "budgets": ["1MiB"], "batch": [{"calibrate": 1, "validate": 2}], "repeat": 2,
  "options": ["--workers", "2", "--buffered", "--gpu", "off", "--no-pilot"]})";
  const std::string csv = dir_ + "/transfer.csv";
  const CliResult r = moesim_cli("-q validate --matrix " + path + " --json --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json c = Json::parse(r.out)["cells"][0];
  ASSERT_EQ(c["status"], "ok") << c.dump();
  EXPECT_EQ(c["label"], "offload 1MiB b1->2 tiny t3-on-t5 default");
  EXPECT_EQ(c["batch"], 2u);
  EXPECT_EQ(c["calibrated_at"]["batch"], 1u);
  EXPECT_EQ(c["calibration"]["batch"], 1u);  // what the calibration runs were served at, as the profile says
  EXPECT_EQ(c["calibrated_at"]["budget"], "1MiB");
  EXPECT_TRUE(c["errors"]["cost"]["tpot"]["value"].is_number());
  const std::string text = read_text(csv);
  EXPECT_THAT(text, HasSubstr(",calibrate_batch,calibrate_budget\n"));
  EXPECT_THAT(text, HasSubstr(",1,1MiB\n"));
}

}  // namespace
}  // namespace moesim::test
