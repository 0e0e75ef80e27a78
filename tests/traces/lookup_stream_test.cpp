// Lookup stream semantics (traces/lookup_stream.h) on a hand-written trace: prefill = one invocation per
// layer over the prompt (union, first-appearance order, token counts), decode = one per token per layer,
// batch B=2 = union over the group's sequences, a missing cell = no invocation; next_use vs brute force.
#include "traces/lookup_stream.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace moesim::traces {
namespace {

// layers 2, experts 4, top-2. Keys are layer * 4 + expert.
Trace hand_trace() {
  TraceInfo info;
  info.layers = 2;
  info.experts = 4;
  TraceBuilder b(info, false, false, "hand");
  uint64_t line = 0;
  auto add = [&](uint32_t seq, Phase ph, uint32_t step, uint32_t layer, std::vector<uint32_t> ex) {
    b.add(seq, ph, step, layer, ex, {}, {}, ++line);
  };
  const Phase P = Phase::kPrefill, D = Phase::kDecode;
  add(0, P, 0, 0, {0, 1});
  add(0, P, 1, 0, {1, 2});
  add(0, P, 0, 1, {3, 0});
  add(0, P, 1, 1, {0, 2});
  add(0, D, 0, 0, {2, 3});
  add(0, D, 0, 1, {0, 1});
  add(0, D, 1, 0, {2, 0});  // decode step 1, layer 1 of sequence 0 is missing
  add(1, P, 0, 0, {3, 2});
  add(1, P, 0, 1, {1, 0});
  add(1, D, 0, 0, {0, 3});
  add(1, D, 0, 1, {1, 2});
  add(1, D, 1, 0, {3, 1});
  add(1, D, 1, 1, {2, 3});
  return std::move(b).finish();
}

std::vector<std::vector<uint32_t>> invocation_keys(const LookupStream& s) {
  std::vector<std::vector<uint32_t>> out;
  for (size_t i = 0; i < s.invocations(); ++i)
    out.emplace_back(s.key.begin() + s.inv_begin[i], s.key.begin() + s.inv_begin[i + 1]);
  return out;
}

std::vector<uint32_t> brute_next_use(const LookupStream& s) {
  std::vector<uint32_t> out(s.lookups(), kNoNextUse);
  for (size_t i = 0; i < s.invocations(); ++i)
    for (uint32_t l = s.inv_begin[i]; l < s.inv_begin[i + 1]; ++l)
      for (size_t j = i + 1; j < s.invocations() && out[l] == kNoNextUse; ++j)
        for (uint32_t m = s.inv_begin[j]; m < s.inv_begin[j + 1]; ++m)
          if (s.key[m] == s.key[l]) out[l] = static_cast<uint32_t>(j);
  return out;
}

TEST(LookupStream, BatchOneMatchesHandDerivation) {
  const LookupStream s = build_lookup_stream(hand_trace(), 1);
  const std::vector<std::vector<uint32_t>> want = {
      {0, 1, 2}, {7, 4, 6},  // seq 0 prefill: L0 union of [0,1],[1,2]; L1 union of [3,0],[0,2]
      {2, 3},    {4, 5},     // seq 0 decode step 0
      {2, 0},                // seq 0 decode step 1: layer 1 missing => no invocation
      {3, 2},    {5, 4},     // seq 1 prefill
      {0, 3},    {5, 6},     // seq 1 decode step 0
      {3, 1},    {6, 7}};    // seq 1 decode step 1
  EXPECT_EQ(invocation_keys(s), want);
  EXPECT_EQ(s.step_begin, (std::vector<uint32_t>{0, 2, 4, 5, 7, 9, 11}));
  EXPECT_EQ(s.step_tokens, (std::vector<uint32_t>{2, 1, 1, 1, 1, 1}));
  EXPECT_EQ(s.step_phase, (std::vector<uint8_t>{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(s.inv_layer, (std::vector<uint16_t>{0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1}));
  // Token counts: expert 1 at L0 and expert 0 at L1 serve both prompt tokens of sequence 0.
  EXPECT_EQ(std::vector<uint32_t>(s.tokens.begin(), s.tokens.begin() + 6), (std::vector<uint32_t>{1, 2, 1, 1, 2, 1}));
  EXPECT_EQ(s.lookups(), 24u);
  EXPECT_EQ(s.decode_lookups(), 14u);
  EXPECT_EQ(s.next_use, brute_next_use(s));
  // By hand: key 2 (L0 expert 2) in invocation 0 is next looked up in invocation 2.
  EXPECT_EQ(s.next_use[2], 2u);
  EXPECT_EQ(s.next_use[s.lookups() - 1], kNoNextUse);
}

TEST(LookupStream, BatchTwoUnionsTheGroupsDecodeSteps) {
  const LookupStream s = build_lookup_stream(hand_trace(), 2);
  const std::vector<std::vector<uint32_t>> want = {
      {0, 1, 2}, {7, 4, 6},    // seq 0 prefill (a step of its own)
      {3, 2},    {5, 4},       // seq 1 prefill
      {2, 3, 0}, {4, 5, 6},    // decode step 0: seq 0 then seq 1, union
      {2, 0, 3, 1}, {6, 7}};   // decode step 1: L1 only from seq 1 (seq 0's cell is missing)
  EXPECT_EQ(invocation_keys(s), want);
  EXPECT_EQ(s.step_tokens, (std::vector<uint32_t>{2, 1, 2, 2}));
  EXPECT_EQ(std::vector<uint32_t>(s.tokens.begin() + 10, s.tokens.begin() + 16),
            (std::vector<uint32_t>{1, 2, 1, 1, 2, 1}));  // expert 3 at L0 and expert 1 at L1 serve both
  EXPECT_EQ(s.next_use, brute_next_use(s));
  EXPECT_EQ(s.decode_lookups(), 12u);
}

TEST(LookupStream, RejectsBatchZero) { EXPECT_THROW((void)build_lookup_stream(hand_trace(), 0), Error); }

}  // namespace
}  // namespace moesim::traces
