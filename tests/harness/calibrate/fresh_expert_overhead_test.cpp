// `moesim calibrate` without a GPU writes gpu.fresh_expert_overhead, the fixed cost of a 1-token expert on
// weights its request just produced, from its own fit (calibration.fits.compute_fresh): without it the
// simulator costs those experts by the 1-token line of resident weights
// (bench/results/batch-transfer-2026-12-06e.md). A real calibration run of the tiny model, as
// tests/cli/exec_cli_test.cpp's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim {
namespace {

using test::moesim_cli;
using ::testing::HasSubstr;

TEST(CalibrateFreshExperts, TheFitsFixedCostIsWrittenToTheProfile) {
  MOESIM_SKIP_WITHOUT_EXEC();
  const std::string model = test::test_data("models/tiny-moe.json");
  const auto dir = test::fresh_test_dir("moesim_fresh", "calibrate");
  const std::string w = (dir / "w.bin").string(), store = (dir / "z.store").string(),
                    trace = (dir / "t.mtr").string(), prof = (dir / "p.json").string();
  ASSERT_EQ(moesim_cli("-q weights synth --model " + model + " --seed 1 -o " + w).code, 0);
  ASSERT_EQ(moesim_cli("-q pack --weights " + w + " --codec zstd:3 --shards 2 -o " + store).code, 0);
  ASSERT_EQ(moesim_cli("-q trace synth --model " + model +
                       " --tokens 24 --prompt-tokens 8 --zipf 0.8 --seed 3 -o " + trace)
                .code,
            0);
  const test::CliResult c =
      moesim_cli("-q calibrate " + trace + " --model " + model + " --store " + store +
                 " --system zipmoe --recover-on cpu --budget 1MiB --workers 2 --buffered "
                 "--gpu off -o " +
                 prof);
  ASSERT_EQ(c.code, 0) << c.err;
  const Json p = Json::parse(test::read_text(prof));
  const Json& fit = p["calibration"]["fits"]["compute_fresh"];
  ASSERT_GE(fit["points"].get<uint64_t>(), 2u);
  ASSERT_TRUE(p["gpu"].contains("fresh_expert_overhead")) << p["gpu"].dump();
  const Json& v = p["gpu"]["fresh_expert_overhead"];
  // One run: the fit over its ops, exactly (with 3+ runs every fitted value is the median of the runs' own).
  EXPECT_DOUBLE_EQ(v["value"].get<double>(), fit["intercept_s"].get<double>());
  EXPECT_GE(v["value"].get<double>(), 0);
  EXPECT_THAT(v["source"].get<std::string>(), HasSubstr("fresh weights"));
  // The profile loads, and the simulator costs the run's fresh experts by the field: the same run without it
  // (a fresh expert then costed as a resident one) has another TPOT.
  Json without = p;
  without["gpu"].erase("fresh_expert_overhead");
  const std::string prof_without = (dir / "p-without.json").string();
  { std::ofstream(prof_without) << without.dump(); }
  auto tpot = [&](const std::string& hw) {
    const test::CliResult r =
        moesim_cli("-q run " + trace + " --model " + model + " --system zipmoe --store " + store +
                   " --recover-on cpu --budget 1MiB --workers 2 --hw " + hw + " --json");
    EXPECT_EQ(r.code, 0) << r.err;
    return Json::parse(r.out)["metrics"]["tpot"]["mean_s"].get<double>();
  };
  EXPECT_NE(tpot(prof), tpot(prof_without));
}

}  // namespace
}  // namespace moesim
