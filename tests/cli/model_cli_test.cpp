// moesim model import on the command line, and the traces that need a model: every bundled trace runs without
// --model (its preamble's sizes, a preset's shapes), and a trace with no preset is told the command that
// makes one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

TEST(ModelCli, ImportWritesASourcedModelAndPrintsItsTotals) {
  const std::string out = temp_path("gpt-oss-20b.json");
  std::filesystem::remove(out);
  const CliResult r =
      moesim_cli("model import " + test::test_data("hf-configs/gpt-oss-20b.json --quant mxfp4 -o ") + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gpt-oss-20b: 20.91B total, 3.61B active parameters"));
  const Json m = load_json_file(out);
  EXPECT_EQ(m["routed_experts"]["value"], 32);
  EXPECT_THAT(m["routed_experts"]["source"].get<std::string>(), HasSubstr("num_local_experts"));
  EXPECT_EQ(m["totals"]["kv_bytes_per_token"], 24 * 2 * 8 * 64 * 2);
  // The written model loads as a preset does, and a synthetic trace runs on it.
  const std::string trace = temp_path("gpt-oss-20b.mtr");
  ASSERT_EQ(moesim_cli("trace synth --model " + out + " --zipf 1 --tokens 8 --seed 1 -o " + trace).code, 0);
  const CliResult run = moesim_cli("run --trace " + trace + " --model " + out + " --budget 1GiB");
  EXPECT_EQ(run.code, 0) << run.err;
}

TEST(ModelCli, BadImportsExitTwoNamingTheProblem) {
  const std::string cfg = temp_path("jamba-config.json");
  std::ofstream(cfg) << R"({"model_type": "jamba", "num_hidden_layers": 4})";
  const CliResult r = moesim_cli("model import " + cfg);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("model_type: moesim model import does not know the family 'jamba'"));
  const CliResult q = moesim_cli("model import " + test::test_data("hf-configs/qwen3-30b-a3b.json") +
                                 " --quant q4_k_m "
                                 "--dtype bf16");
  EXPECT_EQ(q.code, 2) << q.err;
  EXPECT_THAT(q.err, HasSubstr("give --dtype or --quant, not both"));
}

TEST(ModelCli, EveryBundledTraceRunsWithoutAModel) {
  for (const char* t : {"qwen3-30b-a3b", "gemma-4-26b-a4b", "gpt-oss-120b"}) {
    SCOPED_TRACE(t);
    const CliResult r =
        moesim_cli("run --trace " + test::bundled_data("traces/") + t + ".route.csv --budget 2GiB --json");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"expert_bytes_source\""));
  }
}

// The cluster without "model" takes the traces' preset, and validate --log runs on both logged traces with no
// --model (the phone's bundled profile; the engine's settings of docs/engine-logs.md).
TEST(ModelCli, EveryBundledTraceRunsTheClusterAndItsLogWithoutAModel) {
  for (const char* t : {"qwen3-30b-a3b", "gemma-4-26b-a4b", "gpt-oss-120b"}) {
    SCOPED_TRACE(t);
    const std::string spec = temp_path(std::string(t) + "-servers.json");
    std::ofstream(spec)
        << R"({"network": {"bandwidth": "1Gbit/s", "latency": "1ms"}, "servers": [)"
        << R"({"name": "a", "hw": "server-h100-nvme", "gpus": 4, "gpu_memory": "80GiB", "traces": [")"
        << test::bundled_data("traces/") << t << R"(.route.csv"], "arrival": "poisson:30s"}]})";
    const CliResult r = moesim_cli("cluster " + spec + " --placement prism --duration 1m --json");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(Json::parse(r.out)["config"]["model"], t);
  }
  for (const char* t : {"qwen3-30b-a3b", "gemma-4-26b-a4b"}) {
    SCOPED_TRACE(t);
    const std::string base = test::bundled_data("traces/") + std::string(t);
    const CliResult r =
        moesim_cli("validate --log " + base + ".metrics --trace " + base +
                   ".route.csv --hw phone-oneplus-15r-bigmoeonedge --system offload --policy lru "
                   "--budget 4000MiB --compute-on cpu --recover-on cpu --io-depth 4 "
                   "--compute-after-loads --json");
    ASSERT_EQ(r.code, 0) << r.err;
  }
}

TEST(ModelCli, ATraceWithNoPresetNamesTheCommandThatMakesOne) {
  // The bundled Qwen3 trace under another model's name.
  const std::string trace = temp_path("unknown-moe.route.csv");
  std::ifstream in(test::bundled_data("traces/qwen3-30b-a3b.route.csv"));
  std::ofstream out(trace);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# model=", 0) == 0)
      line = "# model=/x/Unknown-MoE-9B-Q4_K_M.gguf arch=x n_layer=48 n_expert=128 n_expert_used=6";
    out << line << "\n";
  }
  out.close();
  const CliResult r = moesim_cli("run --trace " + trace + " --budget 2GiB");
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("no model preset matches the trace's model 'Unknown-MoE-9B-Q4_K_M'"));
  EXPECT_THAT(r.err, HasSubstr("moesim model import config.json -o"));
  EXPECT_THAT(r.err, HasSubstr("unknown-moe-9b"));
  // The cluster says the same when its spec names no model.
  const std::string spec = temp_path("unknown-servers.json");
  std::ofstream(spec)
      << R"({"servers": [{"name": "a", "hw": "server-h100-nvme", "gpus": 1, "gpu_memory": "80GiB", "traces": [")"
      << trace << R"("], "arrival": "poisson:30s"}]})";
  const CliResult c = moesim_cli("cluster " + spec + " --placement prism --duration 1m");
  EXPECT_EQ(c.code, 1) << c.err;
  EXPECT_THAT(c.err, HasSubstr("model: not given, and no model preset matches servers[0].traces[0]'s model "
                               "'Unknown-MoE-9B-Q4_K_M'"));
  EXPECT_THAT(c.err, HasSubstr("moesim model import config.json -o MODEL.json"));
}

TEST(ModelCli, ZipMoeRefusesQuantizedExperts) {
  const std::string out = temp_path("qwen3-q4.json");
  std::filesystem::remove(out);
  ASSERT_EQ(moesim_cli("model import " + test::test_data("hf-configs/qwen3-30b-a3b.json") +
                       " --quant q4_k_m -o " + out)
                .code,
            0);
  const CliResult r =
      moesim_cli("run --trace " + test::bundled_data("traces/qwen3-30b-a3b.route.csv --model ") + out +
                 " --system zipmoe --budget 4GiB");
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err,
              HasSubstr("codes the exponents of bf16/f16 weights; the model's experts are stored as q4_k"));
}

TEST(ModelCli, PresetsListParametersAndBytesPerType) {
  const CliResult r = moesim_cli("presets --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  bool seen = false;
  for (const auto& m : j["models"])
    if (m["name"] == "deepseek-v3") {
      seen = true;
      EXPECT_NEAR(m["total_params"].get<double>(), 671.03e9, 0.01e9);
      EXPECT_EQ(m["stored_as"], "fp8");
      EXPECT_GT(m["weight_bytes_as"]["bf16"].get<double>(), m["weight_bytes_as"]["q4_k"].get<double>());
    }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace moesim::test
