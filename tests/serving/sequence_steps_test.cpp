// The steps each sequence spans (traces::LookupStream::seq_first_step/seq_last_step, handed to the pipeline
// by serving::workload_view): what per-sequence TTFT and end-to-end latency are read from (serving/metrics.h).
// A hand-written trace mixing the three shapes: prefill + decode, decode-only, prefill-only.
#include <gtest/gtest.h>

#include <vector>

#include "serving/workload_view.h"
#include "traces/lookup_stream.h"

namespace moesim {
namespace {

// 2 layers, 4 experts, top-1. Sequence 0: a prompt and 3 decode tokens; sequence 1: 1 decode token and no
// prefill; sequence 2: a prompt and no decode.
traces::Trace mixed_trace() {
  traces::TraceInfo info;
  info.layers = 2;
  info.experts = 4;
  traces::TraceBuilder b(info, false, false, "mixed");
  uint64_t line = 0;
  auto add = [&](uint32_t seq, traces::Phase ph, uint32_t step) {
    for (uint32_t layer = 0; layer < 2; ++layer) {
      const std::vector<uint32_t> ex{(seq + step + layer) % 4};
      b.add(seq, ph, step, layer, ex, {}, {}, ++line);
    }
  };
  const auto P = traces::Phase::kPrefill, D = traces::Phase::kDecode;
  add(0, P, 0);
  add(0, P, 1);
  for (uint32_t s = 0; s < 3; ++s) add(0, D, s);
  add(1, D, 0);
  add(2, P, 0);
  return std::move(b).finish();
}

std::vector<std::pair<uint32_t, uint32_t>> spans(const WorkloadView& w) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  EXPECT_EQ(w.seq_first_step.size(), w.seq_last_step.size());
  for (size_t i = 0; i < w.seq_first_step.size(); ++i)
    out.emplace_back(w.seq_first_step[i], w.seq_last_step[i]);
  return out;
}

TEST(SequenceSteps, BatchOneRunsSequencesOneAfterAnother) {
  const traces::LookupStream s = traces::build_lookup_stream(mixed_trace(), 1);
  // Steps: 0 prefill of 0; 1-3 its decode; 4 the decode token of 1; 5 the prefill of 2.
  ASSERT_EQ(s.steps(), 6u);
  const std::vector<std::pair<uint32_t, uint32_t>> want{{0, 3}, {4, 4}, {5, 5}};
  EXPECT_EQ(spans(serving::workload_view(s)), want);
}

TEST(SequenceSteps, BatchTwoEndsEachSequenceAtItsOwnLastDecodeStep) {
  const traces::LookupStream s = traces::build_lookup_stream(mixed_trace(), 2);
  // Group {0, 1}: 0 prefill of 0; 1 decode step 0 of both; 2, 3 decode of 0 alone. Group {2}: 4 its prefill.
  ASSERT_EQ(s.steps(), 5u);
  EXPECT_EQ(s.step_tokens[1], 2u);
  const std::vector<std::pair<uint32_t, uint32_t>> want{{0, 3}, {1, 1}, {4, 4}};
  EXPECT_EQ(spans(serving::workload_view(s)), want);
}

}  // namespace
}  // namespace moesim
