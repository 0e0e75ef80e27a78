// The held-out validation matrix of the long tier (experiments/validate-matrix/run.sh): offload and zipmoe x
// two budgets x batch 1, 4, and 4 and 8 with the profile calibrated at batch 1 (transfer cells) on the small
// model, each cell calibrated on one set of sequences and validated on another. Every cell must complete with
// its errors judged; whether they are met is this machine's result, recorded in bench/results/, not asserted
// here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

TEST(ValidateMatrixLong, EveryCellOfTheSixteenCellMatrixIsJudged) {
  const std::string out = temp_path("validate_matrix_long");
  const std::string build = std::filesystem::path(MOESIM_CLI_PATH).parent_path().string();
  const std::string cmd = test::source_path("experiments/validate-matrix/run.sh ") + build + " " + out +
                          " > " + out + ".log 2>&1";
  const int rc = std::system(cmd.c_str());
  const std::string csv = read_text(out + "/matrix.csv");
  ASSERT_EQ(rc, 0) << read_text(out + ".log") << csv;
  std::stringstream in(csv);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = split_csv_row(line);
  auto col = [&](const char* name) { return std::find(head.begin(), head.end(), name) - head.begin(); };
  const std::set<std::string> verdicts = {"met", "missed", "undecided"};
  std::set<std::string> systems, budgets, batches;
  size_t cells = 0, transfers = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> row = split_csv_row(line);
    ASSERT_EQ(row.size(), head.size()) << line;
    EXPECT_EQ(row[col("status")], "ok") << line;
    for (const char* v : {"structure_tpot_verdict", "structure_layer_median_verdict", "cost_tpot_verdict"})
      EXPECT_TRUE(verdicts.contains(row[col(v)])) << v << ": " << line;
    EXPECT_FALSE(row[col("cost_tpot_low")].empty()) << line;  // judged over the exec median's interval
    systems.insert(row[col("system")]);
    budgets.insert(row[col("budget")]);
    batches.insert(row[col("batch")]);
    transfers += row[col("calibrate_batch")] != row[col("batch")];
    ++cells;
  }
  EXPECT_EQ(cells, 16u);
  EXPECT_EQ(transfers, 8u);  // b1->4 and b1->8, per system and budget
  EXPECT_EQ(systems, (std::set<std::string>{"offload", "zipmoe"}));
  EXPECT_EQ(budgets.size(), 2u);
  EXPECT_EQ(batches, (std::set<std::string>{"1", "4", "8"}));
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace moesim::test
