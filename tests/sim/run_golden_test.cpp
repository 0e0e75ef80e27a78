// Golden timed results: `moesim run --system offload` (harness::run_simulated on jetson-agx-orin-64gb) on the
// bundled real traces -- qwen3 with its own quantized sizes and as the BF16 what-if (--model qwen3-30b-a3b),
// gpt-oss with its own sizes -- x eviction {lru, fifo, belady} x budgets (global 1, 4, 16 GiB; per layer 4,
// 16 GiB: 1 GiB split over 48 layers holds fewer BF16 experts than the top-k) x scopes, against
// tests/data/golden/run.csv. It guards every refactor of the serving spine: the same inputs must give the
// same TTFT, TPOT, makespan, hits and SSD bytes. (No timed gemma row: the table predates its preset.)
//
// Counts must match exactly; times to a relative 1e-9, since a compiler may contract a*b+c into an FMA on
// another architecture (aarch64) and move the last bits.
// Regenerate (after an intended change of the timing model, and say why in the commit):
//   MOESIM_REGEN_GOLDEN=1 ./build/tests/tests_sim --gtest_filter='RunGolden.*'
//
// tests/data/golden/zipmoe.csv: `moesim run --system zipmoe` on the qwen3 trace as BF16 weights, with
// ZipMoE's E-chunk reads on the I/O thread (io=thread: the rows the simulator gave before io=fused existed)
// and fused with their decompressions on the CPU workers (io=fused, the default), at 4 and 16 GiB.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "harness/sim_runner.h"
#include "serving/metrics.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace moesim {
namespace {

const std::string kGoldenPath = test::test_data("golden/run.csv");
const std::string kZipMoeGoldenPath = test::test_data("golden/zipmoe.csv");
constexpr const char* kMetricColumns =
    "lookups,hits,decode_hits,ssd_bytes_read,ops,ttft_mean_s,tpot_mean_s,tpot_p50_s,tpot_p90_s,tpot_p99_s,"
    "makespan_s";
const std::string kHeader = std::string("trace,model,eviction,scope,budget,") + kMetricColumns;
const std::string kZipMoeHeader = std::string("trace,model,system,budget,") + kMetricColumns;
constexpr size_t kMetricCounts = 5;  // lookups .. ops: compared exactly, with the columns naming the row

std::string num(const Json& v) {
  if (v.is_null()) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
  return buf;
}

// A row's metric columns (kMetricColumns).
std::string metric_columns(const Json& m) {
  const Json& cache = m["cache"];
  std::ostringstream out;
  out << cache["lookups"] << ',' << cache["hits"] << ',' << cache["decode_hits"] << ',' << m["ssd_bytes_read"]
      << ',' << m["ops"] << ',' << num(m["ttft"]["mean_s"]) << ',' << num(m["tpot"]["mean_s"]) << ','
      << num(m["tpot"]["p50_s"]) << ',' << num(m["tpot"]["p90_s"]) << ',' << num(m["tpot"]["p99_s"]) << ','
      << num(m["makespan_s"]);
  return out.str();
}

std::string current_table() {
  struct Case {
    const char* trace;
    const char* model;  // "" = the trace's own sizes
  };
  const HardwareProfile hw = load_hardware("jetson-agx-orin-64gb");
  std::ostringstream out;
  out << kHeader << '\n';
  for (const Case& c :
       {Case{"qwen3-30b-a3b", ""}, Case{"qwen3-30b-a3b", "qwen3-30b-a3b"}, Case{"gpt-oss-120b", ""}}) {
    traces::LoadOptions lo;
    lo.model = c.model;
    const traces::Trace t = traces::load_trace(test::bundled_data("traces/") + c.trace + ".route.csv", lo);
    std::optional<ModelSpec> model;
    if (*c.model) model = load_model(c.model);
    const serving::SourcedCosts costs = serving::model_costs(t.info(), model);
    const traces::LookupStream stream = traces::build_lookup_stream(t, 1);
    for (const char* eviction : {"lru", "fifo", "belady"})
      for (CacheScope scope : {CacheScope::kGlobal, CacheScope::kPerLayer})
        for (const char* budget : scope == CacheScope::kGlobal
                                      ? std::vector<const char*>{"1GiB", "4GiB", "16GiB"}
                                      : std::vector<const char*>{"4GiB", "16GiB"}) {
          serving::SystemConfig cfg;
          cfg.eviction = PolicySpec::parse(eviction);
          cfg.scope = scope;
          cfg.budget = CacheCapacity::parse(budget);
          const Json m = metrics_json(harness::run_simulated(cfg, stream, t.info(), costs, hw).result);
          out << c.trace << ',' << (*c.model ? c.model : "own") << ',' << eviction << ',' << scope_name(scope)
              << ',' << budget << ',' << metric_columns(m) << '\n';
        }
  }
  return out.str();
}

std::string zipmoe_table() {
  const HardwareProfile hw = load_hardware("jetson-agx-orin-64gb");
  traces::LoadOptions lo;
  lo.model = "qwen3-30b-a3b";
  const traces::Trace t = traces::load_trace(test::bundled_data("traces/qwen3-30b-a3b.route.csv"), lo);
  const serving::SourcedCosts costs = serving::model_costs(t.info(), load_model(lo.model));
  const traces::LookupStream stream = traces::build_lookup_stream(t, 1);
  std::ostringstream out;
  out << kZipMoeHeader << '\n';
  for (const char* system : {"zipmoe:io=thread", "zipmoe:io=fused"})
    for (const char* budget : {"4GiB", "16GiB"}) {
      serving::SystemConfig cfg;
      cfg.system = PolicySpec::parse(system);
      cfg.budget = CacheCapacity::parse(budget);
      const Json m = metrics_json(harness::run_simulated(cfg, stream, t.info(), costs, hw).result);
      out << "qwen3-30b-a3b,qwen3-30b-a3b," << system << ',' << budget << ',' << metric_columns(m) << '\n';
    }
  return out.str();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string x; std::getline(in, x, sep);) v.push_back(x);
  return v;
}

// Compares `now` with the table at `path` (or, with MOESIM_REGEN_GOLDEN=1, writes it there). The first
// `exact` columns (names and counts) must match exactly, the times to a relative 1e-9.
void expect_golden(const std::string& path, const std::string& now, size_t exact) {
  const char* regen = std::getenv("MOESIM_REGEN_GOLDEN");
  if (regen && std::string(regen) == "1") {
    write_file_atomic(path, now);
    GTEST_SKIP() << "regenerated " << path;
  }
  const auto want = split(read_file(path), '\n');
  const auto got = split(now, '\n');
  ASSERT_EQ(got.size(), want.size()) << "row count differs (regenerate with MOESIM_REGEN_GOLDEN=1)";
  ASSERT_EQ(got[0], want[0]) << "columns differ";
  for (size_t i = 1; i < got.size(); ++i) {
    const auto g = split(got[i], ','), w = split(want[i], ',');
    ASSERT_EQ(g.size(), w.size()) << "golden row " << i;
    for (size_t k = 0; k < g.size(); ++k) {
      if (k < exact || g[k] == "null" || w[k] == "null") {
        EXPECT_EQ(g[k], w[k]) << "golden row " << i << " column " << k << ": " << got[i];
      } else {
        const double a = std::stod(g[k]), b = std::stod(w[k]);
        EXPECT_LE(std::fabs(a - b), 1e-9 * std::fabs(b))
            << "golden row " << i << " column " << k << ": " << got[i];
      }
    }
  }
}

TEST(RunGolden, MatchesCommittedTable) {
  expect_golden(kGoldenPath, current_table(), 5 + kMetricCounts);
}

TEST(RunGolden, ZipMoeMatchesCommittedTable) {
  expect_golden(kZipMoeGoldenPath, zipmoe_table(), 4 + kMetricCounts);
}

}  // namespace
}  // namespace moesim
