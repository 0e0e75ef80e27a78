// The trace commands called directly (harness/trace_job.h) on the hand-checkable tiny trace
// (tests/data/traces/tiny.route.csv: 2 layers x 4 experts, top-2, expert sizes 1000 B in layer 0 and 2000 B
// in layer 1; one sequence). Its records, (token, layer) by (token, layer):
//   prefill token 0: layer 0 {1,3}                (layer 1 missing: 1 missing cell of 8)
//   prefill token 1: layer 0 {2,1}, layer 1 {0,3}
//   decode token 2:  layer 0 {1,0}, layer 1 {2,3}
//   decode token 3:  layer 0 {3,2}, layer 1 {0,1}
// 7 records; batch 1 merges the prefill into one invocation per layer (layer 0 {1,3,2}, layer 1 {0,3}):
// 6 invocations, 13 lookups, 8 of them in decode.
#include "harness/trace_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "base/error.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kTiny = test::test_data("traces/tiny.route.csv");

TEST(TraceInfoJob, CountsTheTinyTraceByHand) {
  TraceInfoArgs a;
  a.path = kTiny;
  const TraceInfoResult r = trace_info(a);
  EXPECT_EQ(r.info.layers, 2u);
  EXPECT_EQ(r.info.experts, 4u);
  EXPECT_EQ(r.info.top_k, 2u);
  EXPECT_EQ(r.info.missing_cells, 1u);
  EXPECT_THAT(r.info.expert_bytes, ElementsAre(1000u, 2000u));
  EXPECT_EQ(r.records, 7u);
  EXPECT_EQ(r.invocations, 6u);
  EXPECT_EQ(r.lookups, 13u);
  EXPECT_EQ(r.decode_lookups, 8u);
  EXPECT_EQ(r.summary["sequences"], 1);
  EXPECT_EQ(r.summary["prefill_tokens"], 2);
  EXPECT_EQ(r.summary["decode_tokens"], 2);
  EXPECT_EQ(r.summary["lookups"], 13);
  // --json: the header, the warnings (the missing cell), then the summary's keys unchanged.
  EXPECT_EQ(r.doc["header"]["command"], "trace info");
  EXPECT_EQ(r.doc["header"]["config"]["trace"], kTiny);
  EXPECT_THAT(r.doc["warnings"].dump(), HasSubstr("1 of 8 cells"));
  for (const auto& [k, v] : r.summary.items()) EXPECT_EQ(r.doc[k], v) << k;
}

// The Python module's Trace.summary() describes a trace it loaded once: the same summary as the command's.
TEST(TraceInfoJob, ALoadedTraceIsDescribedAsTheCommandDescribesIt) {
  TraceInfoArgs a;
  a.path = kTiny;
  const traces::Trace t = traces::load_trace(kTiny, a.load);
  EXPECT_EQ(describe_trace(t, kTiny, a.load).summary, trace_info(a).summary);
}

TEST(TraceInfoJob, RefusesAMissingTraceAndAnUnwritableOutput) {
  EXPECT_THAT(error_of([] { trace_info({}); }), HasSubstr("a trace is required"));
  TraceInfoArgs a;
  a.path = kTiny;
  a.out = "/nonexistent-folder/info.txt";
  EXPECT_THAT(error_of([&] { trace_info(a); }), HasSubstr("/nonexistent-folder"));
}

// Layer 0's usage counts are expert 0: 1, 1: 3, 2: 2, 3: 2 (8 = k x 4 tokens); its four pairs are each
// co-activated once, so the top pair is the one with the largest lift c_ab T / (c_a c_b): {0, 1} at 4 / 3.
// No decode token shares an expert with the one before it at the same layer.
TEST(TraceStatsJob, CountsLayerZeroByHand) {
  TraceStatsArgs a;
  a.trace = kTiny;
  const TraceStatsResult r = trace_stats(a);
  EXPECT_TRUE(r.doc.is_null());  // the JSON document only when asked for
  ASSERT_EQ(r.stats.layers.size(), 2u);
  const traces::LayerStats& l0 = r.stats.layers[0];
  EXPECT_EQ(l0.tokens, 4u);
  EXPECT_THAT(l0.counts, ElementsAre(1u, 3u, 2u, 2u));
  EXPECT_EQ(l0.rank_experts[0], 1u);
  double h = 0;
  for (const double c : {1.0, 3.0, 2.0, 2.0}) h -= c / 8 * std::log2(c / 8);
  EXPECT_NEAR(l0.entropy_bits, h, 1e-12);
  ASSERT_FALSE(l0.top_pairs.empty());
  EXPECT_EQ(l0.top_pairs[0].a, 0u);
  EXPECT_EQ(l0.top_pairs[0].b, 1u);
  EXPECT_EQ(l0.top_pairs[0].count, 1u);
  EXPECT_NEAR(l0.top_pairs[0].lift, 4.0 / 3.0, 1e-12);
  EXPECT_EQ(l0.repeat_pairs, 1u);
  EXPECT_EQ(l0.repeat_hits, 0u);
  EXPECT_THAT(r.stats.layers[1].counts, ElementsAre(2u, 1u, 1u, 2u));
}

TEST(TraceStatsJob, TheJsonDocumentCarriesTheTraceAndTheTopPairsAsked) {
  TraceStatsArgs a;
  a.trace = kTiny;
  a.json = true;
  a.top_pairs = 1;
  const TraceStatsResult r = trace_stats(a);
  EXPECT_EQ(r.doc["header"]["command"], "trace stats");
  EXPECT_EQ(r.doc["header"]["config"]["top_pairs"], 1);
  EXPECT_EQ(r.doc["trace"]["lookups"], 13);
  EXPECT_EQ(r.stats.layers[0].top_pairs.size(), 1u);
  a.top_pairs = 0;
  EXPECT_THAT(error_of([&] { trace_stats(a); }), HasSubstr("--top-pairs"));
}

class TraceFileJobs : public test::TestDir {};

// JSONL out and back in: the same trace (records, lookups, expert sizes are the model's, so compare counts).
TEST_F(TraceFileJobs, ExportedJsonlReadsBackAsTheSameTrace) {
  TraceExportArgs e;
  e.in = kTiny;
  e.out = path("tiny.jsonl");
  const TraceExportResult r = trace_export(e);
  EXPECT_EQ(r.format, "jsonl");
  EXPECT_EQ(r.count, 7u);
  EXPECT_EQ(r.wrote["records"], 7);
  TraceInfoArgs a;
  a.path = e.out;
  const TraceInfoResult back = trace_info(a);
  EXPECT_EQ(back.records, 7u);
  EXPECT_EQ(back.lookups, 13u);
  EXPECT_EQ(back.decode_lookups, 8u);
}

// oracleGeneral: one fixed-size request per lookup of the stream at the batch asked.
TEST_F(TraceFileJobs, OracleGeneralHoldsOneRequestPerLookup) {
  TraceExportArgs e;
  e.in = kTiny;
  e.out = path("tiny.bin");
  e.to = "oraclegeneral";
  const TraceExportResult r = trace_export(e);
  EXPECT_EQ(r.count, 13u);
  EXPECT_EQ(std::filesystem::file_size(e.out), 13u * r.wrote["record_bytes"].get<uint64_t>());
}

TEST_F(TraceFileJobs, ExportRefusesOptionsThatDoNotFitTheFormat) {
  TraceExportArgs e;
  e.in = kTiny;
  e.out = path("x");
  e.to = "csv";
  EXPECT_THAT(error_of([&] { trace_export(e); }), HasSubstr("--to: unknown output format 'csv'"));
  e.to = "jsonl";
  e.batch = 2;
  EXPECT_THAT(error_of([&] { trace_export(e); }), HasSubstr("--batch applies to --to oraclegeneral only"));
  e.to = "oraclegeneral";
  e.fields = "seq=s";
  EXPECT_THAT(error_of([&] { trace_export(e); }), HasSubstr("--fields applies to --to jsonl only"));
  EXPECT_FALSE(std::filesystem::exists(e.out));
}

// Two inputs become two sequences of one trace; with and without the lookup index the file reads back the
// same.
TEST_F(TraceFileJobs, ImportOfTwoInputsHoldsTwoSequences) {
  for (const bool index : {true, false}) {
    SCOPED_TRACE(index);
    TraceImportArgs m;
    m.inputs = {kTiny, kTiny};
    m.out = path(index ? "two.mtr" : "two-v1.mtr");
    m.lookup_index = index;
    const TraceImportResult r = trace_import(m);
    EXPECT_EQ(r.records, 14u);
    EXPECT_EQ(r.sequences, 2u);
    EXPECT_EQ(r.wrote["lookup_index"], index);
    EXPECT_EQ(r.wrote["where_skipped"], 0);
    TraceInfoArgs a;
    a.path = m.out;
    const TraceInfoResult back = trace_info(a);
    EXPECT_EQ(back.records, 14u);
    EXPECT_EQ(back.lookups, 26u);
    EXPECT_EQ(back.summary["sequences"], 2);
  }
  EXPECT_THAT(error_of([] { trace_import({}); }), HasSubstr("a trace is required"));
}

}  // namespace
}  // namespace moesim::harness
