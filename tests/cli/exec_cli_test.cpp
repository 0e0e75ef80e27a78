// `moesim exec` end to end through the built binary: a tiny synthetic model (tests/data/models/tiny-moe.json)
// packed into a zstd store (zipmoe) and a raw store (full-tensor offloading), served for real.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "base/json_io.h"
#include "exec/store_reader.h"
#include "exec/uring_io.h"
#include "kernels/bf16_cuda.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModel = test::test_data("models/tiny-moe.json");

class ExecCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_path("exec_cli");
    std::filesystem::create_directories(dir_);
    const std::string w = dir_ + "/w.safetensors";
    ASSERT_EQ(moesim_cli("-q weights synth --model " + kModel + " --seed 1 -o " + w).code, 0);
    ASSERT_EQ(moesim_cli("-q pack --weights " + w + " --codec zstd:3 --shards 2 -o " + zstore()).code, 0);
    ASSERT_EQ(moesim_cli("-q pack --weights " + w + " --codec raw --shards 1 -o " + rstore()).code, 0);
    ASSERT_EQ(moesim_cli("-q trace synth --model " + kModel +
                         " --tokens 24 --prompt-tokens 8 --zipf 0.8 --seed 3 -o " + trace())
                  .code,
              0);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string zstore() { return dir_ + "/z.store"; }
  static std::string rstore() { return dir_ + "/r.store"; }
  static std::string trace() { return dir_ + "/t.mtr"; }
  static std::string base(const std::string& system, const std::string& store) {
    return "-q exec " + trace() + " --model " + kModel + " --store " + store + " --system " + system +
           " --budget 1MiB --workers 2 --buffered";
  }
  // The options of a zipmoe run with recovery on the CPU workers, on the test store, without a GPU.
  static std::string zipmoe_cpu(const std::string& system = "zipmoe") {
    return " --model " + kModel + " --store " + zstore() + " --system " + system +
           " --recover-on cpu --budget 1MiB --workers 2 --buffered --gpu off";
  }
  static std::string dir_;
};
std::string ExecCli::dir_;

TEST_F(ExecCli, ZipMoeRunsLosslesslyAndComputesEveryRoutedExpert) {
  const CliResult r = moesim_cli(base("zipmoe", zstore()) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& ex = j["exec"];
  EXPECT_TRUE(ex["lossless"].get<bool>());
  EXPECT_GT(ex["frames_decoded"].get<uint64_t>(), 0u);
  EXPECT_GT(ex["chunks_read"].get<uint64_t>(), 0u);
  // Every lookup of the trace carries tokens: one real FFN each, and one dense GEMM per invocation.
  EXPECT_EQ(ex["expert_computes"].get<uint64_t>(), j["metrics"]["cache"]["lookups"].get<uint64_t>());
  EXPECT_EQ(ex["dense_computes"].get<uint64_t>(), j["metrics"]["layer_makespan"]["count"].get<uint64_t>());
  EXPECT_EQ(j["metrics"]["tpot"]["count"].get<uint64_t>(), 24u);
  EXPECT_EQ(j["header"]["command"], "exec");
  // What was read is what the pipeline asked for (SM- and E-chunks of the split store).
  EXPECT_EQ(ex["bytes_read"].get<uint64_t>() > 0, j["metrics"]["ssd_bytes_read"].get<uint64_t>() > 0);
  // Where the cores went: every thread that ran ops, and the pipeline thread, used some CPU (Linux's clocks).
#ifdef __linux__
  const Json& cpu = ex["thread_cpu_s"];
  for (const char* k : {"io_threads", "cpu_workers", "gpu_streams", "pipeline"}) {
    ASSERT_TRUE(cpu[k].is_number()) << k << " " << cpu.dump();
    EXPECT_GT(cpu[k].get<double>(), 0) << k;
    EXPECT_LT(cpu[k].get<double>(), 600) << k;  // seconds, not a unit off
  }
  const CliResult t = moesim_cli(base("zipmoe", zstore()));
  EXPECT_THAT(t.out, HasSubstr("CPU time by thread: I/O "));
#endif
}

TEST_F(ExecCli, ZipMoeReadsEChunksOnTheWorkersOrOnTheIoThread) {
  // io=fused: each CPU worker preads its E-chunk (buffered) and decompresses it in one task; io=thread: the
  // I/O thread reads every chunk. Under the same pools both serve the same lookups, read and decode the same
  // chunks losslessly, and time every decode step.
  std::map<std::string, Json> runs;
  for (const char* io : {"fused", "thread"}) {
    const CliResult r =
        moesim_cli(base(std::string("zipmoe:io=") + io, zstore()) + " --pools F=0.3,C=0.3,S=0.4 --json");
    ASSERT_EQ(r.code, 0) << io << ": " << r.err;
    runs[io] = Json::parse(r.out);
    EXPECT_EQ(runs[io]["header"]["config"]["plan"]["io"], io);
    EXPECT_TRUE(runs[io]["exec"]["lossless"].get<bool>()) << io;
    EXPECT_EQ(runs[io]["metrics"]["tpot"]["count"].get<uint64_t>(), 24u) << io;
    EXPECT_GT(runs[io]["metrics"]["tpot"]["mean_s"].get<double>(), 0) << io;
  }
  const Json &f = runs["fused"], &t = runs["thread"];
  EXPECT_EQ(f["metrics"]["cache"]["hits"], t["metrics"]["cache"]["hits"]);
  EXPECT_EQ(f["metrics"]["states"], t["metrics"]["states"]);
  for (const char* k : {"chunks_read", "bytes_read", "frames_decoded", "expert_computes"})
    EXPECT_EQ(f["exec"][k], t["exec"][k]) << k;
  EXPECT_GT(f["exec"]["frames_decoded"].get<uint64_t>(), 0u);
  EXPECT_LT(f["metrics"]["resources"]["io_thread"]["ops"].get<uint64_t>(),
            t["metrics"]["resources"]["io_thread"]["ops"].get<uint64_t>());
}

TEST_F(ExecCli, OffloadReadsWholeTensorsFromARawStore) {
  const CliResult r = moesim_cli(base("offload", rstore()) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& ex = j["exec"];
  EXPECT_TRUE(ex["lossless"].get<bool>());
  EXPECT_EQ(ex["frames_decoded"].get<uint64_t>(), 0u);
  // Whole-tensor reads: every byte the simulator charges is a byte read (payloads, no padding).
  EXPECT_EQ(ex["bytes_read"].get<uint64_t>(), j["metrics"]["ssd_bytes_read"].get<uint64_t>());
  EXPECT_EQ(ex["expert_computes"].get<uint64_t>(), j["metrics"]["cache"]["lookups"].get<uint64_t>());
  const CliResult lo = moesim_cli(base("layer-offload", rstore()));
  EXPECT_EQ(lo.code, 0) << lo.err;
  EXPECT_THAT(lo.out, HasSubstr("lossless"));
}

TEST_F(ExecCli, OffloadRefusesACompressedStore) {
  const CliResult r = moesim_cli(base("offload", zstore()));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--codec raw"));
  EXPECT_THAT(r.err, HasSubstr("layer 0"));
}

TEST_F(ExecCli, ACorruptChunkStopsTheRunNamingIt) {
  const std::string bad = dir_ + "/bad.store";
  std::filesystem::copy_file(zstore(), bad, std::filesystem::copy_options::overwrite_existing);
  uint64_t offset = 0;
  {
    const exec::StoreReader reader(bad);
    const exec::StoreEntry* e = reader.find(0, 0, "gate_proj");
    ASSERT_NE(e, nullptr);
    offset = e->shards[0].offset + 1;
  }
  {
    std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x40);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&c, 1);
  }
  const CliResult r = moesim_cli(base("zipmoe", bad));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("layer 0 expert 0 tensor gate_proj E-chunk shard 0"));
  EXPECT_THAT(r.err, HasSubstr("checksum"));
  EXPECT_EQ(r.out, "");  // nothing half-written
}

TEST_F(ExecCli, AStoreOfAnotherModelIsRefused) {
  // The same layers and experts, narrower experts: the store's tensors are not this model's.
  Json m = Json::parse(read_text(kModel));
  m["expert_intermediate_size"]["value"] = 64;
  m["expert_tensors"][0]["shape"][0] = 64;
  m["expert_tensors"][1]["shape"][0] = 64;
  m["expert_tensors"][2]["shape"][1] = 64;
  const std::string other = dir_ + "/narrow.json";
  std::ofstream(other) << m.dump(2);
  const CliResult r = moesim_cli("-q exec " + trace() + " --model " + other + " --store " + zstore() +
                                 " --system zipmoe --budget 1MiB --workers 2");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr(zstore()));
  EXPECT_THAT(r.err, HasSubstr("pass the --model the store was made from"));
}

TEST_F(ExecCli, TimelineRecordsTheRealOps) {
  const std::string tl = dir_ + "/timeline.json";
  const CliResult r = moesim_cli(base("zipmoe", zstore()) + " --timeline " + tl);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json t = Json::parse(read_text(tl));
  size_t decompress = 0;
  const Json& events = t.is_array() ? t : t["traceEvents"];
  for (const auto& e : events)
    if (e.value("ph", "") == "X" && e.value("name", "").rfind("decompress", 0) == 0) ++decompress;
  EXPECT_GT(decompress, 0u);
}

TEST_F(ExecCli, ValidateReportsStructureAndCostErrors) {
  const std::string csv = dir_ + "/errors.csv";
  const CliResult r = moesim_cli("-q validate " + trace() + " --model " + kModel + " --store " + zstore() +
                                 " --system zipmoe --budget 1MiB --workers 2 --buffered --gpu off --profile "
                                 "jetson-agx-orin-64gb --repeat 2 --json --csv " +
                                 csv);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& e = j["errors"];
  for (const char* check : {"structure", "cost"})
    for (const char* m : {"tpot", "ttft", "layer_makespan_median", "layer_makespan_p95"}) {
      SCOPED_TRACE(std::string(check) + "." + m);
      ASSERT_TRUE(e[check][m].is_number());
    }
  // Every op of the reference run found its measured twin: the simulator made the same decisions.
  EXPECT_EQ(e["structure"]["ops_unmatched"].get<uint64_t>(), 0u);
  EXPECT_GT(e["structure"]["ops_matched"].get<uint64_t>(), 0u);
  // And every graph its measured planning time.
  EXPECT_EQ(e["structure"]["planning_unmatched"].get<uint64_t>(), 0u);
  EXPECT_GT(e["structure"]["planning_matched"].get<uint64_t>(), 0u);
  for (const char* k :
       {"plan_latency_fixed_s", "plan_latency_per_op_s", "plan_tail_fixed_s", "plan_tail_per_op_s"})
    EXPECT_GE(e["structure"][k].get<double>(), 0) << k;
  // Fed with the measured durations, the simulator lands near the measured TPOT (a loose sanity bound that a
  // wrong structure model breaks: ctest runs other tests beside this one on 2 cores, and a loaded machine
  // measured up to +83% here; the figures of record are in bench/results/validate.md and gpu.md).
  EXPECT_LT(std::abs(e["structure"]["tpot"].get<double>()), 1.0);
  EXPECT_EQ(j["exec"]["tpot_s"].size(), 2u);
  // The exec median's interval (two runs: min and max, which hold the median half the time) and the cost
  // error at its ends.
  const Json& mi = j["exec"]["tpot_median_interval"];
  const std::vector<double> tp = j["exec"]["tpot_s"].get<std::vector<double>>();
  EXPECT_DOUBLE_EQ(mi["lo_s"].get<double>(), std::min(tp[0], tp[1]));
  EXPECT_DOUBLE_EQ(mi["hi_s"].get<double>(), std::max(tp[0], tp[1]));
  EXPECT_DOUBLE_EQ(mi["coverage"].get<double>(), 0.5);
  EXPECT_EQ(mi["order_statistic"].get<uint32_t>(), 1u);
  const double sim_tpot = e["cost"]["sim"]["tpot_s"].get<double>();
  ASSERT_EQ(e["cost"]["tpot_interval"].size(), 2u);
  EXPECT_NEAR(e["cost"]["tpot_interval"][0].get<double>(), sim_tpot / mi["hi_s"].get<double>() - 1, 1e-12);
  EXPECT_NEAR(e["cost"]["tpot_interval"][1].get<double>(), sim_tpot / mi["lo_s"].get<double>() - 1, 1e-12);
  EXPECT_LE(e["cost"]["tpot_interval"][0].get<double>(), e["cost"]["tpot"].get<double>());
  EXPECT_GE(e["cost"]["tpot_interval"][1].get<double>(), e["cost"]["tpot"].get<double>());
  EXPECT_TRUE(j["exec"]["report"]["lossless"].get<bool>());
  EXPECT_TRUE(e["cost"]["op_kinds"].contains("decompress"));
  const std::string text = read_text(csv);
  EXPECT_THAT(text, HasSubstr("check,metric,sim_s,exec_s,error\n"));
  EXPECT_THAT(text, HasSubstr("structure,tpot,"));
  EXPECT_THAT(text, HasSubstr("cost,op:decompress,"));
  EXPECT_THAT(text, HasSubstr("structure_ops_only,tpot,"));
  EXPECT_TRUE(e["structure_ops_only"]["tpot"].is_number());
  // The contention model's row, and what the structure check ran with.
  EXPECT_THAT(text, HasSubstr("structure_no_contention,tpot,"));
  EXPECT_TRUE(e["structure_no_contention"]["tpot"].is_number());
  // And the runtime's costs as means, as the cost check charges them.
  EXPECT_THAT(text, HasSubstr("structure_mean_runtime,tpot,"));
  EXPECT_TRUE(e["structure_mean_runtime"]["tpot"].is_number());
  EXPECT_GE(e["structure"]["cpu_cores"].get<uint32_t>(), 1u);
  EXPECT_TRUE(e["structure"]["gpu_stream_on_cpu"].get<bool>());
  EXPECT_GE(e["structure"]["dispatch_latency_ssd_s"].get<double>(), 0);
  // The targets by default, each judged on its error; the cost TPOT one over the interval too.
  const Json& t = j["targets"];
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0]["check"], "structure");
  EXPECT_EQ(t[0]["metric"], "tpot");
  EXPECT_DOUBLE_EQ(t[0]["limit"].get<double>(), 0.02);
  EXPECT_EQ(t[1]["metric"], "layer_makespan_median");
  EXPECT_DOUBLE_EQ(t[1]["limit"].get<double>(), 0.05);
  EXPECT_EQ(t[2]["check"], "cost");
  for (const Json& v : t) {
    const double err = e[v["check"].get<std::string>()][v["metric"].get<std::string>()].get<double>();
    EXPECT_DOUBLE_EQ(v["error"].get<double>(), err);
    EXPECT_EQ(v["met"].get<bool>(), std::abs(err) <= v["limit"].get<double>());
  }
  const double lo = e["cost"]["tpot_interval"][0].get<double>(),
               hi = e["cost"]["tpot_interval"][1].get<double>();
  EXPECT_EQ(t[2]["decided"].get<bool>(),
            (std::abs(lo) <= 0.05 && std::abs(hi) <= 0.05) || lo > 0.05 || hi < -0.05);
  EXPECT_FALSE(t[0].contains("decided"));
}

TEST_F(ExecCli, ValidateTargetsAreCheckedBeforeAnyRun) {
  const std::string common =
      " --model " + std::string(kModel) + " --store " + zstore() +
      " --system zipmoe --budget 1MiB --buffered --gpu off --profile jetson-agx-orin-64gb";
  for (const auto& [spec, says] :
       std::vector<std::pair<std::string, std::string>>{{"cost.tpot", "not CHECK.METRIC=LIMIT"},
                                                        {"costs.tpot=5%", "no check 'costs'"},
                                                        {"cost.tpop=5%", "no metric 'tpop'"},
                                                        {"cost.tpot=-1", "positive number"},
                                                        {"cost.tpot=5%%", "positive number"},
                                                        {"cost.tpot=5%,", "empty item"},
                                                        {"transfer.ttft=5%", "TPOT only"}}) {
    SCOPED_TRACE(spec);
    const CliResult r = moesim_cli("-q validate " + trace() + common + " --targets '" + spec + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(says));
    EXPECT_THAT(r.err, HasSubstr("--targets"));
    EXPECT_TRUE(r.out.empty());  // refused before any exec run
  }
  // Given ones replace the defaults; "" judges none; the text names each verdict.
  const CliResult r =
      moesim_cli("-q validate " + trace() + common + " --targets 'structure.ttft=0.5,cost.tpot=100%'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("targets:\n  structure TTFT within 50%: "));
  EXPECT_THAT(r.out, HasSubstr("  cost TPOT within 100%: "));
  EXPECT_THAT(r.out, Not(HasSubstr("structure TPOT within")));
  const CliResult none = moesim_cli("-q validate " + trace() + common + " --targets '' --json");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_TRUE(Json::parse(none.out)["targets"].empty());
}

TEST_F(ExecCli, ValidateWritesTheExecAndStructureTimelinesSideBySide) {
  const std::string prefix = dir_ + "/vt";
  const CliResult r = moesim_cli("-q validate " + trace() + " --model " + kModel + " --store " + zstore() +
                                 " --system zipmoe --budget 1MiB --workers 2 --buffered --profile "
                                 "jetson-agx-orin-64gb --timeline " +
                                 prefix);
  ASSERT_EQ(r.code, 0) << r.err;
  size_t ops[3] = {0, 0, 0}, submitted[3] = {0, 0, 0}, cpu[3] = {0, 0, 0};
  std::vector<double> over;  // CPU time - wall time per op: at most a few us for the typical op (a loaded
                             // machine's thread clock can jump a scheduler tick within one op)
  int i = 0;
  for (const char* which : {"-exec.json", "-structure.json", "-cost.json"}) {
    const Json t = Json::parse(read_text(prefix + which));
    for (const Json& e : t.is_array() ? t : t["traceEvents"])
      if (e.value("ph", "") == "X" && e.contains("args") && e["args"].contains("bytes")) {
        ++ops[i];
        if (e["args"].contains("submitted")) {
          ++submitted[i];
          EXPECT_LE(e["args"]["submitted"].get<double>(), e["ts"].get<double>() + 1e-3) << e.dump();
        }
        if (e["args"].contains("cpu")) {  // the thread's CPU time over the op, microseconds
          ++cpu[i];
          EXPECT_GE(e["args"]["cpu"].get<double>(), 0) << e.dump();
          over.push_back(e["args"]["cpu"].get<double>() - e["dur"].get<double>());
        }
      }
    ++i;
  }
  EXPECT_EQ(cpu[0], ops[0]);  // and each op's CPU time
  ASSERT_FALSE(over.empty());
  std::nth_element(over.begin(), over.begin() + over.size() / 2, over.end());
  EXPECT_LE(over[over.size() / 2], 20.0);
  EXPECT_EQ(cpu[1] + cpu[2], 0u);
  EXPECT_GT(ops[0], 0u);
  EXPECT_EQ(ops[0], ops[1]);        // the same ops, one schedule measured and one simulated
  EXPECT_GT(ops[2], 0u);            // and the cost simulation's schedule
  EXPECT_EQ(submitted[0], ops[0]);  // a real run records when each op was handed over
  EXPECT_EQ(submitted[1] + submitted[2], 0u);
  const CliResult w =
      moesim_cli("-q validate " + trace() + " --model " + kModel + " --store " + zstore() +
                 " --system zipmoe --budget 1MiB --buffered --timeline " + prefix + " --timeline-steps 0:3");
  EXPECT_EQ(w.code, 2);
  EXPECT_THAT(w.err, HasSubstr("whole runs"));
}

// --repeat N fits every run's ops together: the same trace and decisions, N times the points.
TEST_F(ExecCli, CalibrateRepeatFitsEveryRunTogether) {
  // --no-pilot: both plan with the base profile, so their runs serve the same ops.
  const std::string args =
      "-q calibrate " + trace() + " --model " + kModel + " --store " + zstore() +
      " --system zipmoe --recover-on cpu --budget 1MiB --workers 2 --buffered --gpu off --no-pilot";
  const CliResult one = moesim_cli(args + " -o " + dir_ + "/one.json");
  ASSERT_EQ(one.code, 0) << one.err;
  const CliResult two = moesim_cli(args + " --repeat 2 -o " + dir_ + "/two.json");
  ASSERT_EQ(two.code, 0) << two.err;
  const Json p1 = Json::parse(read_text(dir_ + "/one.json")), p2 = Json::parse(read_text(dir_ + "/two.json"));
  EXPECT_EQ(p1["calibration"]["runs"], 1);
  EXPECT_EQ(p2["calibration"]["runs"], 2);
  for (const char* f : {"ssd_read", "decompress", "compute_bytes"})
    EXPECT_EQ(p2["calibration"]["fits"][f]["points"].get<uint64_t>(),
              2 * p1["calibration"]["fits"][f]["points"].get<uint64_t>())
        << f;
  EXPECT_GE(p2["runtime"]["dispatch_latency"]["value"].get<double>(), 0);
  const CliResult zero = moesim_cli(args + " --repeat 0 -o " + dir_ + "/x.json");
  EXPECT_EQ(zero.code, 2);
  EXPECT_THAT(zero.err, HasSubstr("--repeat must be 1..1000"));
  const CliResult micro =
      moesim_cli("-q calibrate --store " + zstore() + " --micro --repeat 2 -o " + dir_ + "/m.json");
  EXPECT_EQ(micro.code, 2);
  EXPECT_THAT(micro.err, HasSubstr("--repeat repeats the calibration trace's run"));
}

// zipmoe plans with the cost model (ZipMoE Alg. 4): a pilot run under the base profile, then the measured
// runs planned with its fit; only the measured runs' ops are fitted. Every profile says how well it
// reproduces the runs it came from (in sample).
TEST_F(ExecCli, CalibratePlansTheMeasuredRunsWithAPilotFitAndChecksItselfInSample) {
  const std::string args = "-q calibrate " + trace() + " --model " + kModel + " --store " + zstore() +
                           " --system zipmoe --recover-on cpu --budget 1MiB --workers 2 --buffered --gpu off";
  const CliResult c = moesim_cli(args + " --repeat 3 -o " + dir_ + "/pilot.json");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("in sample: the profile simulates the calibration trace at TPOT"));
  const Json p = Json::parse(read_text(dir_ + "/pilot.json"));
  const Json& cal = p["calibration"];
  EXPECT_EQ(cal["runs"], 3);
  // The pilots: each served under the last one's fit until a fit plans what its run was served with.
  const Json& pilots = cal["pilot"]["runs"];
  ASSERT_GE(pilots.size(), 1u);
  ASSERT_LE(pilots.size(), 3u);
  for (size_t i = 0; i + 1 < pilots.size(); ++i) {
    EXPECT_NE(pilots[i]["served"], pilots[i]["fit_plans"]) << "pilot " << i + 1 << " reached the fixed point";
    EXPECT_EQ(pilots[i + 1]["served"], pilots[i]["fit_plans"])
        << "pilot " << i + 2 << " ran under the last fit";
  }
  EXPECT_EQ(cal["pilot"]["fixed_point"].get<bool>(), pilots.back()["served"] == pilots.back()["fit_plans"]);
  EXPECT_EQ(cal["pilot"]["plan"], pilots[0]["served"]);
  EXPECT_EQ(cal["planned_with"], "pilot run " + std::to_string(pilots.size()) + "'s fit");
  EXPECT_EQ(cal["pilot"]["runs_plan"], pilots.back()["fit_plans"]);  // the measured runs: the last fit's plan
  // Three runs: each fitted value is the median of the runs' own fits, and says so.
  EXPECT_EQ(cal["values_from"], "the median of the 3 runs' own fits");
  EXPECT_THAT(p["ssd"]["read_bandwidth"]["source"].get<std::string>(),
              HasSubstr("the median of the 3 runs' own fits"));
  EXPECT_THAT(cal["pilot"]["hardware"].get<std::string>(), HasSubstr("jetson-agx-orin-64gb"));
  EXPECT_THAT(cal["pilot"]["plan"].get<std::string>(), ::testing::MatchesRegex("[FCSE]=.*"));  // pool ratios
  const Json& in = cal["in_sample"];
  ASSERT_EQ(in["runs_tpot_s"].size(), 3u);
  ASSERT_EQ(in["runs"].size(), 3u);
  EXPECT_GT(in["sim_tpot_s"].get<double>(), 0);
  EXPECT_GT(in["exec_tpot_median_s"].get<double>(), 0);
  EXPECT_TRUE(in["tpot_error"].is_number());
  EXPECT_NEAR(in["tpot_error"].get<double>(),
              in["sim_tpot_s"].get<double>() / in["exec_tpot_median_s"].get<double>() - 1, 1e-12);
  // TTFT beside it: the prefill's models are fitted on the same runs.
  ASSERT_EQ(in["runs_ttft_s"].size(), 3u);
  std::vector<double> ttfts = in["runs_ttft_s"].get<std::vector<double>>();
  std::sort(ttfts.begin(), ttfts.end());
  EXPECT_DOUBLE_EQ(in["exec_ttft_median_s"].get<double>(), ttfts[1]);
  EXPECT_GT(in["sim_ttft_s"].get<double>(), 0);
  EXPECT_NEAR(in["ttft_error"].get<double>(), in["sim_ttft_s"].get<double>() / ttfts[1] - 1, 1e-12);
  EXPECT_THAT(c.err, HasSubstr("; TTFT "));
  EXPECT_EQ(in["runs_plan"], cal["pilot"]["runs_plan"]);
  // The fits hold the measured runs' reads, not the pilot's.
  uint64_t reads = 0;
  for (const Json& r : in["runs"]) {
    EXPECT_GT(r["tpot_s"].get<double>(), 0);
    for (const auto& [kind, v] : r["op_kinds"].items())
      if (kind.rfind("ssd_read", 0) == 0) reads += v["ops"].get<uint64_t>();
    EXPECT_TRUE(r["op_kinds"].contains("decompress"));
  }
  // (a decode step's reads and a prefill's, fitted apart when both phases read)
  EXPECT_EQ(cal["fits"]["ssd_read"]["points"].get<uint64_t>() +
                cal["fits"]["ssd_read_prefill"]["points"].get<uint64_t>(),
            reads);
  // --pilot-runs 1: one pilot whatever its fit plans; where the fit moves the plan, calibrate says so.
  const CliResult one = moesim_cli(args + " --pilot-runs 1 -o " + dir_ + "/pilot1.json");
  ASSERT_EQ(one.code, 0) << one.err;
  const Json p1 = Json::parse(read_text(dir_ + "/pilot1.json"))["calibration"]["pilot"];
  ASSERT_EQ(p1["runs"].size(), 1u);
  if (p1["fixed_point"].get<bool>())
    EXPECT_THAT(one.err, Not(HasSubstr("the fit still moves ZipMoE's pools")));
  else
    EXPECT_THAT(one.err, HasSubstr("after 1 pilot run the fit still moves ZipMoE's pools"));
  EXPECT_EQ(moesim_cli(args + " --pilot-runs 0 -o " + dir_ + "/pilot0.json").code, 2);
  // --no-pilot, and a system that plans nothing with the cost model: the base profile plans the runs.
  const CliResult n = moesim_cli(args + " --no-pilot -o " + dir_ + "/nopilot.json");
  ASSERT_EQ(n.code, 0) << n.err;
  const Json np = Json::parse(read_text(dir_ + "/nopilot.json"));
  EXPECT_FALSE(np["calibration"].contains("pilot"));
  EXPECT_EQ(np["calibration"]["values_from"], "the run's fit");
  EXPECT_THAT(np["calibration"]["planned_with"].get<std::string>(), HasSubstr("jetson-agx-orin-64gb"));
  const CliResult o = moesim_cli("-q calibrate " + trace() + " --model " + kModel + " --store " + rstore() +
                                 " --system offload --budget 1MiB --workers 2 --buffered --gpu off -o " +
                                 dir_ + "/offload.json");
  ASSERT_EQ(o.code, 0) << o.err;
  const Json op = Json::parse(read_text(dir_ + "/offload.json"));
  EXPECT_FALSE(op["calibration"].contains("pilot"));
  EXPECT_FALSE(op["calibration"]["in_sample"].contains("runs_plan"));
  EXPECT_TRUE(op["calibration"]["in_sample"]["tpot_error"].is_number());
}

// With O_DIRECT reads exec records each read's CPU time (the I/O thread's: the kernel's path, the checksum, a
// full tensor's merge) and calibrate fits it apart from the device's time (ssd.read_cpu_*), both
// non-negative, the profile's value the fit's. Where the filesystem refuses O_DIRECT exec reads buffered: no
// split.
TEST_F(ExecCli, CalibrateSplitsDirectReads) {
  const std::string prof = dir_ + "/direct.json";
  const CliResult c =
      moesim_cli("-q calibrate " + trace() + " --model " + kModel + " --store " + rstore() +
                 " --system offload --budget 1MiB --workers 2 --gpu off --no-gemm-probe -o " + prof);
  ASSERT_EQ(c.code, 0) << c.err;
  const Json p = Json::parse(read_text(prof));
  // --no-gemm-probe: no probe, no GEMM lines (ops of 2+ tokens cost the roofline and a fixed cost).
  EXPECT_FALSE(p["calibration"].contains("gemm_probe"));
  EXPECT_FALSE(p["gpu"].contains("expert_gemm_flops"));
  EXPECT_FALSE(p["gpu"].contains("dense_gemm_flops"));
  const Json& fit = p["calibration"]["fits"]["ssd_read_cpu"];
  if (!p["calibration"]["direct_io"].get<bool>()) {
    EXPECT_FALSE(p["ssd"].contains("read_cpu_overhead")) << "buffered reads are not split";
    GTEST_SKIP() << "the filesystem of " << dir_ << " refused O_DIRECT: exec read buffered, nothing to split";
  }
  ASSERT_GE(fit["points"].get<uint64_t>(), 2u);
  ASSERT_TRUE(p["ssd"].contains("read_cpu_overhead")) << p["ssd"].dump(2);
  EXPECT_GE(p["ssd"]["read_cpu_overhead"]["value"].get<double>(), 0);
  EXPECT_EQ(p["ssd"]["read_cpu_overhead"]["value"].get<double>(),
            std::max(fit["intercept_s"].get<double>(), 0.0));
  EXPECT_THAT(p["ssd"]["read_bandwidth"]["source"].get<std::string>(), HasSubstr("the device's part"));
  EXPECT_GT(p["ssd"]["read_bandwidth"]["value"].get<double>(), 0);
  // The profile loads and simulates.
  const CliResult r =
      moesim_cli("-q run " + trace() + " --model " + kModel + " --system offload --budget 1MiB --hw " + prof);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(ExecCli, CalibrateWritesAProfileThatRunAndValidateLoad) {
  const std::string prof = dir_ + "/calibrated.json";
  const CliResult c =
      moesim_cli("-q calibrate " + trace() + " --model " + kModel + " --store " + zstore() +
                 " --system zipmoe --recover-on cpu --budget 1MiB --workers 2 --buffered --gpu off "
                 "--name t -o " +
                 prof);
  ASSERT_EQ(c.code, 0) << c.err;
  const Json p = Json::parse(read_text(prof));
  EXPECT_EQ(p["name"], "t");
  for (const char* k : {"read_bandwidth", "read_latency"})
    EXPECT_THAT(p["ssd"][k]["source"].get<std::string>(), HasSubstr("moesim calibrate"));
  EXPECT_GT(p["cpu"]["decompress_bandwidth_per_core"]["value"].get<double>(), 0);
  EXPECT_GT(p["gpu"]["bf16_flops"]["value"].get<double>(), 0);
  // The trace prefills and decodes, and misses: a prefill's reads and a decode step's are fitted apart. The
  // experts computed on weights their request just recovered have their fixed cost fitted, reported and
  // written (gpu.fresh_expert_overhead: bench/results/batch-transfer-2026-12-06e.md).
  EXPECT_GT(p["ssd"]["prefill_read_bandwidth"]["value"].get<double>(), 0);
  EXPECT_GE(p["ssd"]["prefill_read_latency"]["value"].get<double>(), 0);
  EXPECT_GE(p["calibration"]["fits"]["ssd_read_prefill"]["points"].get<uint64_t>(), 2u);
  EXPECT_GE(p["calibration"]["fits"]["compute_fresh"]["points"].get<uint64_t>(), 2u);
  ASSERT_TRUE(p["gpu"].contains("fresh_expert_overhead")) << p["gpu"].dump();
  EXPECT_DOUBLE_EQ(p["gpu"]["fresh_expert_overhead"]["value"].get<double>(),
                   p["calibration"]["fits"]["compute_fresh"]["intercept_s"].get<double>());
  // The CPU-worker ops' models come from decode steps; a prefill's are scaled by fitted slowdowns, the
  // decompressions' and the recoveries' apart.
  EXPECT_GT(p["cpu"]["prefill_slowdown"]["value"].get<double>(), 0);
  EXPECT_GT(p["cpu"]["prefill_recover_slowdown"]["value"].get<double>(), 0);
  EXPECT_THAT(p["cpu"]["prefill_recover_slowdown"]["source"].get<std::string>(), HasSubstr("recoveries"));
  // The prefill's experts of 2+ tokens (GEMMs) get a fixed cost of their own, and only they are in its fit.
  const Json& gemm = p["calibration"]["fits"]["compute_expert_gemm"];
  EXPECT_GE(gemm["points"].get<uint64_t>(), 2u);
  EXPECT_GE(p["gpu"]["expert_gemm_overhead"]["value"].get<double>(), 0);
  EXPECT_EQ(p["gpu"]["expert_gemm_overhead"]["value"].get<double>(), gemm["intercept_s"].get<double>());
  // Without a GPU, the run's GEMMs were timed alone at 2-32 tokens (9 counts, each kind), and
  // each kind costs its line: the probe's fixed part and FLOP rate, its residuals on the runs' ops.
  const Json& probe = p["calibration"]["gemm_probe"];
  ASSERT_TRUE(probe.is_object()) << p["calibration"].dump();
  const size_t kinds = probe["shapes"]["dense_rows"].get<uint64_t>() > 0 ? 2 : 1;
  EXPECT_EQ(probe["points"].size(), 9 * kinds);
  EXPECT_EQ(p["gpu"]["expert_gemm_overhead"]["value"].get<double>(),
            probe["expert"]["intercept_s"].get<double>());
  EXPECT_NEAR(p["gpu"]["expert_gemm_flops"]["value"].get<double>(),
              1 / probe["expert"]["slope"].get<double>(),
              1e-6 * p["gpu"]["expert_gemm_flops"]["value"].get<double>());
  EXPECT_THAT(p["gpu"]["expert_gemm_flops"]["source"].get<std::string>(), HasSubstr("timed alone"));
  // Buffered reads are not split into the device's time and the I/O thread's CPU work (a page-cache hit is a
  // copy, all CPU): no ssd.read_cpu_* (the direct-I/O case: CalibrateSplitsDirectReads below).
  EXPECT_FALSE(p["ssd"].contains("read_cpu_overhead"));
  EXPECT_EQ(p["calibration"]["fits"]["ssd_read_cpu"]["points"].get<uint64_t>(), 0u);
  for (const char* k :
       {"dispatch_latency", "plan_latency_per_op", "plan_latency_fixed", "plan_tail_per_op",
        "plan_tail_fixed", "dispatch_latency_ssd", "dispatch_latency_cpu", "dispatch_latency_gpu"})
    EXPECT_GE(p["runtime"][k]["value"].get<double>(), 0) << k;
  // The contention model's cores (the CPUs this test could run on) and, without --gpu, the GPU stream among
  // the CPU-bound threads.
  EXPECT_GE(p["runtime"]["cpu_cores"]["value"].get<uint32_t>(), 1u);
  EXPECT_TRUE(p["runtime"]["gpu_stream_on_cpu"]["value"].get<bool>());
  // The distributions the simulator draws hand-offs and wake-ups from, ascending; the in-sample error with
  // every runtime cost at its mean beside the one with them.
  for (const char* k :
       {"dispatch_latency_cpu_quantiles", "dispatch_latency_ssd_quantiles", "wake_latency_quantiles"}) {
    const Json& q = p["runtime"][k]["value"];
    ASSERT_EQ(q.size(), 20u) << k;
    for (size_t i = 1; i < q.size(); ++i) EXPECT_LE(q[i - 1].get<double>(), q[i].get<double>()) << k;
  }
  EXPECT_TRUE(p["calibration"]["in_sample"]["tpot_error_runtime_means"].is_number());
  EXPECT_TRUE(p["calibration"]["fits"].contains("decompress"));
  // The profile is a hardware profile like any other: run simulates with it, validate compares with it.
  const CliResult r = moesim_cli("-q run " + trace() + " --model " + kModel +
                                 " --system zipmoe --recover-on cpu "
                                 "--budget 1MiB --hw " +
                                 prof);
  EXPECT_EQ(r.code, 0) << r.err;
  const CliResult v = moesim_cli(
      "-q validate " + trace() + " --model " + kModel + " --store " + zstore() +
      " --system zipmoe --recover-on cpu --budget 1MiB --workers 2 --buffered --profile " + prof + " --json");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_TRUE(Json::parse(v.out)["errors"]["cost"]["tpot"].is_number());
}

TEST_F(ExecCli, ValidateCalibratesOnAnotherTraceInterleavedWithItsOwnRuns) {
  const std::string cal = dir_ + "/cal.mtr", prof = dir_ + "/interleaved.json";
  ASSERT_EQ(moesim_cli("-q trace synth --model " + kModel +
                       " --tokens 16 --prompt-tokens 8 --zipf 0.8 --seed 5 -o " + cal)
                .code,
            0);
  const std::string common = zipmoe_cpu();
  const CliResult v = moesim_cli("-q validate " + trace() + common + " --calibrate-on " + cal +
                                 " --repeat 2 --profile-out " + prof + " --name il --json");
  ASSERT_EQ(v.code, 0) << v.err;
  const Json j = Json::parse(v.out);
  EXPECT_EQ(j["header"]["config"]["calibrated_on"], cal);
  EXPECT_EQ(j["header"]["config"]["profile_out"], prof);
  const Json& c = j["calibration"];
  EXPECT_TRUE(c["interleaved"].get<bool>());
  EXPECT_EQ(c["runs"].get<uint32_t>(), 2u);
  EXPECT_TRUE(c["in_sample_tpot_error"].is_number());
  // The cost error net of the in-sample one: (1 + cost) / (1 + in sample) - 1.
  const double cost = j["errors"]["cost"]["tpot"].get<double>(), in = c["in_sample_tpot_error"].get<double>();
  EXPECT_NEAR(c["beyond_in_sample"].get<double>(), (1 + cost) / (1 + in) - 1, 1e-12);
  EXPECT_EQ(j["exec"]["tpot_s"].size(),
            2u);  // the validated trace's own runs, one after each calibration run
  EXPECT_EQ(j["errors"]["structure"]["ops_unmatched"].get<uint64_t>(),
            0u);  // replayed under the runs' own plan
  // The profile was fitted to the calibration trace's two runs only, and is a profile like any other.
  const Json p = Json::parse(read_text(prof));
  EXPECT_EQ(p["name"], "il");
  EXPECT_EQ(p["calibration"]["trace"], cal);
  EXPECT_EQ(p["calibration"]["in_sample"]["runs"].size(), 2u);
  EXPECT_EQ(p["calibration"]["in_sample"]["runs_tpot_s"].size(), 2u);
  EXPECT_TRUE(p["calibration"]["in_sample"].contains("sim_op_kinds"));
  EXPECT_DOUBLE_EQ(p["calibration"]["in_sample"]["tpot_error"].get<double>(), in);
  // Paired: exec run i over calibration run i (the run just before it), against the simulator's ratio.
  const Json& pr = c["paired"];
  const std::vector<double> cal_t = p["calibration"]["in_sample"]["runs_tpot_s"].get<std::vector<double>>();
  const std::vector<double> ex_t = j["exec"]["tpot_s"].get<std::vector<double>>();
  ASSERT_EQ(pr["ratios"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(pr["ratios"][i].get<double>(), ex_t[i] / cal_t[i], 1e-12);
  const double sim_ratio = j["errors"]["cost"]["sim"]["tpot_s"].get<double>() /
                           p["calibration"]["in_sample"]["sim_tpot_s"].get<double>();
  EXPECT_NEAR(pr["sim_ratio"].get<double>(), sim_ratio, 1e-12);
  const double med = (pr["ratios"][0].get<double>() + pr["ratios"][1].get<double>()) / 2;
  EXPECT_NEAR(pr["ratio_median"].get<double>(), med, 1e-12);
  EXPECT_NEAR(pr["transfer_error"].get<double>(), sim_ratio / med - 1, 1e-12);
  EXPECT_DOUBLE_EQ(pr["coverage"].get<double>(), 0.5);  // two pairs: min and max
  EXPECT_LE(pr["transfer_interval"][0].get<double>(), pr["transfer_error"].get<double>());
  EXPECT_GE(pr["transfer_interval"][1].get<double>(), pr["transfer_error"].get<double>());
  // The transfer error is judged too, by default against 5%, over the pairs' interval.
  ASSERT_EQ(j["targets"].size(), 4u);
  const Json& tt = j["targets"][3];
  EXPECT_EQ(tt["check"], "transfer");
  EXPECT_DOUBLE_EQ(tt["error"].get<double>(), pr["transfer_error"].get<double>());
  EXPECT_EQ(tt["met"].get<bool>(), std::abs(pr["transfer_error"].get<double>()) <= 0.05);
  EXPECT_EQ(tt["interval"], pr["transfer_interval"]);
  EXPECT_EQ(tt["interval_of"], "the paired ratio");
  const CliResult r = moesim_cli("-q run " + trace() + " --model " + kModel +
                                 " --system zipmoe --recover-on cpu "
                                 "--budget 1MiB --hw " +
                                 prof);
  EXPECT_EQ(r.code, 0) << r.err;
  // The text names the calibration and where the profile went.
  const CliResult t =
      moesim_cli("-q validate " + trace() + common + " --calibrate-on " + cal + " --repeat 1");
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_THAT(t.out,
              HasSubstr("calibrated: on " + cal + ", 1 run, each followed by one exec run of this trace"));
  EXPECT_THAT(t.out, HasSubstr("in sample"));
  EXPECT_THAT(t.out, Not(HasSubstr("paired:")));               // one pair: no interval to speak of
  EXPECT_THAT(t.out, Not(HasSubstr("transfer TPOT within")));  // and no transfer error to judge
}

TEST_F(ExecCli, TheInSampleCheckSimulatesTheOpsTheRunsMade) {
  // --no-pilot: the runs are planned with the base profile (a Jetson: E=1 at this budget when the I/O thread
  // reads every chunk, io=thread; with the workers' fused reads it keeps F as well), which the fitted profile
  // need not repeat. The in-sample simulation then keeps the runs' pools, so it makes exactly the ops the
  // runs made, kind by kind, and the error under the profile's own plan is reported beside it.
  const std::string thread_io = zipmoe_cpu("zipmoe:io=thread");
  const std::string prof = dir_ + "/nopilot.json";
  const CliResult c = moesim_cli("-q calibrate " + trace() + thread_io + " --no-pilot -o " + prof);
  ASSERT_EQ(c.code, 0) << c.err;
  const Json in = Json::parse(read_text(prof))["calibration"]["in_sample"];
  EXPECT_EQ(in["runs_plan"], "E=1");
  const Json& sim = in["sim_op_kinds"];
  const Json& run = in["runs"][0]["op_kinds"];
  ASSERT_EQ(sim.size(), run.size());
  for (const auto& [k, v] : run.items()) {
    ASSERT_TRUE(sim.contains(k)) << k;
    EXPECT_EQ(sim[k]["ops"], v["ops"]) << k;
  }
  EXPECT_TRUE(sim.contains("decompress (prefill)"));  // phases apart
  // validate --profile serves its exec runs under the profile's own plan, which the calibration runs never
  // measured when it differs from theirs: it says so.
  const CliResult vp = moesim_cli("-q validate " + trace() + thread_io + " --profile " + prof + " --json");
  ASSERT_EQ(vp.code, 0) << vp.err;
  const std::string warned = "but the profile's calibration runs were served E=1";
  if (in["profile_plan"] != in["runs_plan"]) {
    EXPECT_THAT(in["simulated_under"].get<std::string>(), HasSubstr("E=1"));
    EXPECT_TRUE(in["tpot_error_own_plan"].is_number());
    EXPECT_THAT(c.err, HasSubstr("under its own plan"));
    EXPECT_THAT(Json::parse(vp.out)["warnings"].dump(), HasSubstr(warned));
  } else {
    EXPECT_FALSE(in.contains("simulated_under"));
    EXPECT_THAT(Json::parse(vp.out)["warnings"].dump(), Not(HasSubstr(warned)));
  }
  // The same in validate --calibrate-on: the exec runs keep the base profile's plan, and the cost check
  // simulates it when the fitted profile plans otherwise.
  const CliResult v =
      moesim_cli("-q validate " + trace() + thread_io + " --calibrate-on " + trace() + " --no-pilot --json");
  ASSERT_EQ(v.code, 0) << v.err;
  const Json j = Json::parse(v.out);
  EXPECT_EQ(j["errors"]["structure"]["ops_unmatched"].get<uint64_t>(), 0u);
  const bool moved = j["calibration"]["profile_plan"] != j["calibration"]["runs_plan"];
  EXPECT_EQ(j["errors"].contains("cost_own_plan"), moved);
  if (moved) {
    EXPECT_THAT(j["warnings"].dump(), HasSubstr("the cost check simulates E=1"));
  }
}

TEST_F(ExecCli, ValidateCalibrateOnRejectsBadInputWithoutWritingAProfile) {
  const std::string prof = dir_ + "/never.json";
  const std::string common = zipmoe_cpu();
  const CliResult a = moesim_cli("-q validate " + trace() + common + " --profile-out " + prof);
  EXPECT_EQ(a.code, 2) << a.err;
  EXPECT_THAT(a.err, HasSubstr("go with --calibrate-on"));
  const CliResult a2 =
      moesim_cli("-q validate " + trace() + common + " --profile " + prof + " --pilot-runs 2");
  EXPECT_EQ(a2.code, 2) << a2.err;
  EXPECT_THAT(a2.err, HasSubstr("--pilot-runs and --no-gemm-probe go with --calibrate-on"));
  const CliResult a2b =
      moesim_cli("-q validate " + trace() + common + " --profile " + prof + " --no-gemm-probe");
  EXPECT_EQ(a2b.code, 2) << a2b.err;
  EXPECT_THAT(a2b.err, HasSubstr("go with --calibrate-on"));
  const CliResult a3 =
      moesim_cli("-q validate " + trace() + common + " --profile " + prof + " --calibrate-batch 2");
  EXPECT_EQ(a3.code, 2) << a3.err;
  EXPECT_THAT(a3.err, HasSubstr("--calibrate-batch and --calibrate-budget go with --calibrate-on"));
  const CliResult a4 = moesim_cli("-q validate " + trace() + common + " --calibrate-on " + trace() +
                                  " --calibrate-budget lots");
  EXPECT_EQ(a4.code, 2) << a4.err;
  EXPECT_THAT(a4.err, HasSubstr("--calibrate-budget"));
  const CliResult b = moesim_cli("-q validate " + trace() + common + " --calibrate-on " + dir_ +
                                 "/missing.mtr" + " --profile-out " + prof);
  EXPECT_NE(b.code, 0);
  EXPECT_THAT(b.err, HasSubstr("missing.mtr"));
  const CliResult c = moesim_cli("-q validate " + trace() + " --model " + kModel +
                                 " --system zipmoe --budget 1MiB --calibrate-on " + trace());
  EXPECT_EQ(c.code, 2) << c.err;
  EXPECT_THAT(c.err, HasSubstr("--store is required"));
  EXPECT_FALSE(std::filesystem::exists(prof));
}

// ---- --io uring (exec/uring_io.h) and calibrate's microbenchmarks (exec/microbench.h) ----

TEST_F(ExecCli, IoUringGivesTheSameVerifiedResultsAsPread) {
  const std::string why = exec::uring_probe();
  if (!why.empty()) GTEST_SKIP() << "io_uring is unavailable here: " << why;
  for (const auto& [system, store] :
       {std::pair{std::string("zipmoe"), zstore()}, std::pair{std::string("offload"), rstore()}}) {
    SCOPED_TRACE(system);
    const std::string cmd = "-q exec " + trace() + " --model " + kModel + " --store " + store + " --system " +
                            system + " --budget 1MiB --workers 2 --json";
    const CliResult p = moesim_cli(cmd + " --io pread");
    const CliResult u = moesim_cli(cmd + " --io uring");
    ASSERT_EQ(p.code, 0) << p.err;
    ASSERT_EQ(u.code, 0) << u.err;
    const Json jp = Json::parse(p.out)["exec"], ju = Json::parse(u.out)["exec"];
    EXPECT_EQ(jp["io"], "pread");
    EXPECT_EQ(ju["io"], "uring");
    EXPECT_FALSE(ju.contains("io_fallback"));
    EXPECT_THAT(ju["platform"].get<std::string>(), HasSubstr("io_uring"));
    EXPECT_TRUE(ju["lossless"].get<bool>());
    for (const char* k : {"chunks_read", "bytes_read", "chunks_verified", "frames_decoded",
                          "tensors_recovered", "expert_computes", "dense_computes"})
      EXPECT_EQ(jp[k], ju[k]) << k;
  }
}

TEST_F(ExecCli, IoOptionIsChecked) {
  const CliResult r = moesim_cli(base("zipmoe", zstore()) + " --io aio");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--io"));
}

TEST_F(ExecCli, CalibrateMicroFitsEveryCostAndKeepsTheRawPoints) {
  const std::string prof = dir_ + "/micro.json";
  const CliResult c = moesim_cli("-q calibrate --store " + zstore() +
                                 " --micro --micro-budget 3 --micro-depth 4 "
                                 "--threads 2 --micro-codecs lz4 --gpu off --name m -o " +
                                 prof);
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_THAT(c.err, HasSubstr("micro: SSD"));
  const Json p = Json::parse(read_text(prof));
  const Json& m = p["micro"];
  EXPECT_EQ(p["calibration"]["fields_from"], "micro");
  EXPECT_TRUE(p["calibration"]["trace"].is_null());
  // Reads: 4 KiB ... (sizes of the store) x depths 1, 2, 4; the fitted line is positive and says how well it
  // fits.
  ASSERT_GE(m["ssd"]["points"].size(), 3u);
  EXPECT_EQ(m["ssd"]["points"].size() % 3, 0u);
  for (const Json& pt : m["ssd"]["points"]) {
    EXPECT_GT(pt["bandwidth"].get<double>(), 0);
    EXPECT_GE(pt["requests"].get<uint64_t>(),
              4u * pt["depth"].get<uint64_t>());  // at least 4 per thread/slot
  }
  const uint32_t q = m["ssd"]["queue_depth"].get<uint32_t>();
  EXPECT_TRUE(q == 1 || q == 2 || q == 4) << q;
  EXPECT_GT(m["ssd"]["fit"]["bandwidth"].get<double>(), 0);
  EXPECT_GE(m["ssd"]["fit"]["relative_rms"].get<double>(), 0);
  EXPECT_GE(m["ssd"]["fit"]["points"].get<uint64_t>(), 2u);
  EXPECT_DOUBLE_EQ(p["ssd"]["read_bandwidth"]["value"].get<double>(),
                   m["ssd"]["fit"]["bandwidth"].get<double>());
  EXPECT_THAT(p["ssd"]["read_bandwidth"]["source"].get<std::string>(), HasSubstr("microbenchmark"));
  EXPECT_THAT(p["ssd"]["read_bandwidth"]["source"].get<std::string>(), HasSubstr("relative RMS residual"));
  EXPECT_EQ(p["ssd"]["queue_depth"]["value"].get<uint32_t>(), q);
  // Each request's CPU time (the I/O thread's: the kernel's O_DIRECT path and the hash exec verifies with).
  // With O_DIRECT it is fitted as ssd.read_cpu_* and the device's line to the rest, as calibrate's trace fit
  // does; buffered reads (a filesystem refusing O_DIRECT) are fitted whole.
  for (const Json& pt : m["ssd"]["points"]) {
    ASSERT_TRUE(pt["cpu_s"].is_number()) << pt.dump();
    EXPECT_GT(pt["cpu_s"].get<double>(), 0);
  }
  if (m["direct_io"].get<bool>()) {
    ASSERT_TRUE(m["ssd"].contains("fit_cpu"));
    EXPECT_GE(m["ssd"]["fit_cpu"]["points"].get<uint64_t>(), 2u);
    ASSERT_TRUE(p["ssd"].contains("read_cpu_overhead"));
    EXPECT_GE(p["ssd"]["read_cpu_overhead"]["value"].get<double>(), 0);
    EXPECT_THAT(p["ssd"]["read_cpu_overhead"]["source"].get<std::string>(), HasSubstr("microbenchmark"));
    EXPECT_THAT(p["ssd"]["read_bandwidth"]["source"].get<std::string>(), HasSubstr("less its CPU time"));
    EXPECT_THAT(c.err, HasSubstr("then the I/O thread's CPU"));
  } else {
    EXPECT_FALSE(m["ssd"].contains("fit_cpu"));
    EXPECT_FALSE(p["ssd"].contains("read_cpu_overhead"));
  }
  // Decompression: the store's codec and lz4, each at 1 and 2 threads.
  std::set<std::pair<std::string, uint32_t>> fits;
  for (const Json& f : m["decompress"]["fits"]) {
    fits.insert({f["codec"].get<std::string>(), f["threads"].get<uint32_t>()});
    EXPECT_GT(f["bandwidth_per_core"].get<double>(), 0) << f.dump();
    EXPECT_GE(f["points"].get<uint64_t>(), 2u);
  }
  EXPECT_EQ(fits, (std::set<std::pair<std::string, uint32_t>>{
                      {"zstd:3", 1}, {"zstd:3", 2}, {"lz4", 1}, {"lz4", 2}}));
  EXPECT_THAT(p["cpu"]["decompress_bandwidth_per_core"]["source"].get<std::string>(), HasSubstr("zstd:3"));
  EXPECT_EQ(m["recover"]["fits"].size(), 2u);
  EXPECT_GT(p["cpu"]["memcpy_bandwidth_per_core"]["value"].get<double>(), 0);
  // Compute: the expert FFN's tokens ladder and the one-token GEMMs; the roofline's two sides.
  size_t experts = 0;
  for (const Json& pt : m["compute"]["points"]) experts += pt["kind"] == "expert";
  EXPECT_EQ(experts, 7u);
  EXPECT_GT(p["gpu"]["bf16_flops"]["value"].get<double>(), 0);
  EXPECT_GT(p["gpu"]["memory_bandwidth"]["value"].get<double>(), 0);
  EXPECT_GT(p["cpu"]["flops_per_core"]["value"].get<double>(), 0);
  // The ladder's experts of 2+ tokens (6 of 7) give the fixed cost of an expert's GEMMs: the mean of their
  // time less the roofline at the fitted rates (never negative).
  EXPECT_EQ(m["compute"]["fit_expert_gemm"]["points"].get<uint64_t>(), 6u);
  const double bw = m["compute"]["fit_bytes"]["bandwidth"].get<double>(),
               peak = m["compute"]["fit_flops"]["flops"].get<double>();
  double over = 0;
  for (const Json& pt : m["compute"]["points"])
    if (pt["kind"] == "expert" && pt["tokens"].get<uint32_t>() >= 2)
      over += pt["time_s"].get<double>() -
              std::max(pt["bytes"].get<double>() / bw, pt["flops"].get<double>() / peak);
  EXPECT_NEAR(m["compute"]["fit_expert_gemm"]["overhead_s"].get<double>(), std::max(0.0, over / 6), 1e-12);
  EXPECT_DOUBLE_EQ(p["gpu"]["expert_gemm_overhead"]["value"].get<double>(),
                   m["compute"]["fit_expert_gemm"]["overhead_s"].get<double>());
  // Interference: each component alone and all at once.
  std::set<std::string> comps;
  for (const Json& i : m["interference"]) {
    comps.insert(i["component"].get<std::string>());
    EXPECT_GT(i["alone_s"].get<double>(), 0);
    EXPECT_GT(i["together_s"].get<double>(), 0);
    EXPECT_GT(i["slowdown"].get<double>(), 0);
  }
  EXPECT_EQ(comps, (std::set<std::string>{"io", "decompress", "compute"}));
  // The profile is a hardware profile: run simulates with it.
  const CliResult r = moesim_cli("-q run " + trace() + " --model " + kModel +
                                 " --system zipmoe --recover-on cpu "
                                 "--budget 1MiB --hw " +
                                 prof);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(ExecCli, CalibrateWithATraceAndMicroFillsTheFieldsFromEitherOnRequest) {
  const std::string prof = dir_ + "/both.json";
  const CliResult c =
      moesim_cli("-q calibrate " + trace() + " --model " + kModel + " --store " + zstore() +
                 " --system zipmoe --recover-on cpu --budget 1MiB --workers 2 --buffered --micro "
                 "--micro-budget 2 --micro-depth 2 --fit-from micro -o " +
                 prof);
  ASSERT_EQ(c.code, 0) << c.err;
  const Json p = Json::parse(read_text(prof));
  EXPECT_EQ(p["calibration"]["fields_from"], "micro");
  EXPECT_TRUE(p["calibration"]["fits"].contains("ssd_read"));  // the trace run's fits are kept beside
  EXPECT_TRUE(p["runtime"].contains("dispatch_latency"));      // only a trace run measures the runtime
  EXPECT_THAT(p["ssd"]["read_bandwidth"]["source"].get<std::string>(), HasSubstr("microbenchmark"));
  EXPECT_TRUE(p.contains("micro"));
}

TEST_F(ExecCli, CalibrateRejectsBadMicroOptionsClearly) {
  const std::string out = " -o " + dir_ + "/bad.json";
  const std::string st = " --store " + zstore();
  struct Case {
    std::string args, message;
  };
  for (const Case& k : std::vector<Case>{
           {st, "calibrate needs a calibration trace (TRACE or --trace), --micro"},
           {st + " --micro --micro-budget 0", "--micro-budget must be between 0 and 86400"},
           {st + " --micro --micro-depth 0", "--micro-depth must be between 1 and 1024"},
           {st + " --micro --micro-codecs zstd:99", "--micro-codecs"},
           {st + " --micro-budget 5", "--micro"},
           {st + " --fit-from micro", "--micro"},
           {st + " --micro --fit-from trace", "--fit-from trace needs a calibration trace"},
           {st + " --micro --io aio", "--io"},
           {" --micro", "--store is required"},
       }) {
    SCOPED_TRACE(k.args);
    const CliResult r = moesim_cli("-q calibrate" + k.args + out);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(k.message));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/bad.json"));
}

// ---- the CUDA path (exec/exec_platform.h, kernels/gpu_exec.h): skipped where there is no usable GPU ----

bool have_gpu(std::string* why) {
  return kernels::cuda_available(why);
}

TEST_F(ExecCli, GpuOnWithoutAGpuFailsClearly) {
  std::string why;
  if (have_gpu(&why)) GTEST_SKIP() << "a CUDA GPU is present: the GPU tests below cover --gpu on";
  const CliResult r = moesim_cli(base("zipmoe", zstore()) + " --gpu on");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("--gpu on: no usable CUDA GPU"));
  // auto falls back to the CPU-emulated GPU stream and says so.
  const CliResult a = moesim_cli(base("zipmoe", zstore()));
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_THAT(a.out, HasSubstr("cpu-emulated GPU stream"));
}

TEST_F(ExecCli, GpuZipMoeOnADiscreteGpuRecoversEveryTensorOnTheDeviceLosslessly) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA GPU: " << why;
  const CliResult r =
      moesim_cli(base("zipmoe", zstore()) + " --hw server-h100-nvme --gpu on --verify-gpu --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& ex = j["exec"];
  EXPECT_TRUE(ex["gpu"].get<bool>());
  EXPECT_THAT(ex["platform"].get<std::string>(), HasSubstr("CUDA GPU"));
  EXPECT_GT(ex["gpu_recoveries"].get<uint64_t>(), 0u);
  EXPECT_EQ(ex["gpu_recoveries_verified"], ex["gpu_recoveries"]);
  EXPECT_GT(ex["transfers"].get<uint64_t>(), 0u);
  EXPECT_GT(ex["device_peak_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(ex["expert_computes"].get<uint64_t>(), j["metrics"]["cache"]["lookups"].get<uint64_t>());
  EXPECT_EQ(j["header"]["config"]["memory"], "discrete");
}

TEST_F(ExecCli, GpuOffloadCopiesWholeTensorsToTheDevice) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA GPU: " << why;
  const CliResult r = moesim_cli(base("offload", rstore()) + " --hw server-h100-nvme --gpu on --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json ex = Json::parse(r.out)["exec"];
  EXPECT_EQ(ex["gpu_recoveries"].get<uint64_t>(), 0u);
  // Every tensor read from the SSD goes over the link once at least.
  EXPECT_GE(ex["transfer_bytes"].get<uint64_t>(), ex["bytes_read"].get<uint64_t>());
}

TEST_F(ExecCli, GpuCalibrateFitsTheRecoveryKernelAndTheLinkAndValidateRuns) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA GPU: " << why;
  const std::string prof = dir_ + "/calibrated-gpu.json";
  const std::string common = " --model " + kModel + " --store " + zstore() +
                             " --system zipmoe --budget 1MiB --workers 2 --buffered --gpu on";
  const CliResult c = moesim_cli("-q calibrate " + trace() + common + " --hw server-h100-nvme -o " + prof);
  ASSERT_EQ(c.code, 0) << c.err;
  const Json p = Json::parse(read_text(prof));
  EXPECT_GT(p["gpu"]["recover_bandwidth"]["value"].get<double>(), 0);
  EXPECT_EQ(p["link"]["kind"], "pcie");
  EXPECT_FALSE(p["memory"]["unified"].get<bool>());
  // The calibrated profile alone: --profile is --hw's older name, and giving both is refused.
  const CliResult v = moesim_cli("-q validate " + trace() + common + " --profile " + prof + " --json");
  ASSERT_EQ(v.code, 0) << v.err;
  const Json e = Json::parse(v.out)["errors"];
  EXPECT_EQ(e["structure"]["ops_unmatched"].get<uint64_t>(), 0u);
  EXPECT_TRUE(e["cost"]["op_kinds"].contains("transfer"));
}

TEST_F(ExecCli, StoreIsRequired) {
  const CliResult r = moesim_cli("-q exec " + trace() + " --model " + kModel + " --budget 1MiB");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--store"));
}

}  // namespace
}  // namespace moesim::test
