// `moesim run --json`: TTFT and end-to-end latency are per sequence for every trace shape (serving/metrics.h):
// several sequences decode-only, prefill-only, and prefill + decode, at batch 1 and batch 2. At batch 1 the
// sequences run one after another, so their end-to-end latencies add up to the makespan; none of them is the
// whole makespan.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"

namespace moesim::test {
namespace {

// A CSV trace of 2 layers: for each sequence, `prefill` prompt tokens and `decode` generated tokens.
std::string write_trace(const std::string& name, const std::vector<std::pair<int, int>>& seqs) {
  const std::string path = temp_path(name);
  std::ofstream f(path);
  f << "seq,phase,token,layer,experts\n";
  for (size_t s = 0; s < seqs.size(); ++s)
    for (int phase = 0; phase < 2; ++phase)
      for (int t = 0; t < (phase == 0 ? seqs[s].first : seqs[s].second); ++t)
        for (int l = 0; l < 2; ++l)
          f << s << ',' << (phase == 0 ? "prefill" : "decode") << ',' << t << ',' << l << ",\""
            << (s * 7 + t * 3 + l) % 64 << ';' << (s * 5 + t + 2 * l + 1) % 64 + 64 << "\"\n";
  return path;
}

Json metrics_of(const std::string& trace, const std::string& extra = "") {
  const CliResult r = moesim_cli("run " + trace + " --model qwen3-30b-a3b --budget 2GiB --json" + extra);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? Json::parse(r.out)["metrics"] : Json::object();
}

double sum_of(const Json& d) {
  return d["mean_s"].get<double>() * d["count"].get<double>();
}

TEST(LatencyPerSequence, DecodeOnlySequencesEachHaveTheirOwnEndToEnd) {
  const Json m = metrics_of(write_trace("decode_only_3.csv", {{0, 4}, {0, 3}, {0, 5}}));
  ASSERT_TRUE(m.contains("end_to_end"));
  EXPECT_EQ(m["end_to_end"]["count"], 3);
  const double makespan = m["makespan_s"].get<double>();
  EXPECT_LT(m["end_to_end"]["max_s"].get<double>(), makespan);
  EXPECT_NEAR(sum_of(m["end_to_end"]), makespan, 1e-9 * makespan);
  // No prompt was simulated: no TTFT, rather than a decode step's time under that name.
  EXPECT_EQ(m["ttft"]["count"], 0);
  EXPECT_EQ(m["tpot"]["count"], 12);
}

TEST(LatencyPerSequence, PrefillOnlySequencesEachHaveTheirTtftAsEndToEnd) {
  const Json m = metrics_of(write_trace("prefill_only_3.csv", {{4, 0}, {2, 0}, {6, 0}}));
  ASSERT_TRUE(m.contains("end_to_end"));
  EXPECT_EQ(m["ttft"]["count"], 3);
  EXPECT_EQ(m["end_to_end"]["count"], 3);
  for (const char* k : {"mean_s", "p50_s", "max_s"}) EXPECT_EQ(m["end_to_end"][k], m["ttft"][k]) << k;
  const double makespan = m["makespan_s"].get<double>();
  EXPECT_NEAR(sum_of(m["end_to_end"]), makespan, 1e-9 * makespan);
}

TEST(LatencyPerSequence, PrefillAndDecodeSequencesAtBatchOne) {
  const Json m = metrics_of(write_trace("prefill_decode_2.csv", {{3, 4}, {2, 2}}));
  ASSERT_TRUE(m.contains("end_to_end"));
  EXPECT_EQ(m["ttft"]["count"], 2);
  EXPECT_EQ(m["end_to_end"]["count"], 2);
  const double makespan = m["makespan_s"].get<double>();
  EXPECT_NEAR(sum_of(m["end_to_end"]), makespan, 1e-9 * makespan);
}

// Batch 2: the sequences of a group overlap, so each has its own end-to-end latency, none longer than the
// run, and a group's shorter sequence ends before the group does.
TEST(LatencyPerSequence, DecodeOnlySequencesAtBatchTwo) {
  const Json m = metrics_of(write_trace("decode_only_4.csv", {{0, 5}, {0, 2}, {0, 3}, {0, 3}}), " --batch 2");
  ASSERT_TRUE(m.contains("end_to_end"));
  EXPECT_EQ(m["end_to_end"]["count"], 4);
  EXPECT_EQ(m["tpot"]["count"], 8);  // group 1: 5 steps, group 2: 3
  const double makespan = m["makespan_s"].get<double>();
  EXPECT_LT(m["end_to_end"]["max_s"].get<double>(), makespan);
  // Sequence 1 ends after 2 of its group's 5 steps: its latency is below the group's.
  EXPECT_LT(m["end_to_end"]["p50_s"].get<double>(), m["end_to_end"]["max_s"].get<double>());
  EXPECT_EQ(m["ttft"]["count"], 0);
}

TEST(LatencyPerSequence, PrefillOnlySequencesAtBatchTwo) {
  const Json m =
      metrics_of(write_trace("prefill_only_4.csv", {{4, 0}, {2, 0}, {6, 0}, {3, 0}}), " --batch 2");
  ASSERT_TRUE(m.contains("end_to_end"));
  EXPECT_EQ(m["ttft"]["count"], 4);
  EXPECT_EQ(m["end_to_end"]["count"], 4);
  for (const char* k : {"mean_s", "p50_s", "max_s"}) EXPECT_EQ(m["end_to_end"][k], m["ttft"][k]) << k;
}

}  // namespace
}  // namespace moesim::test
