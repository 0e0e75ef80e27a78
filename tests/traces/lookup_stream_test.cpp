// Lookup stream semantics (traces/lookup_stream.h) on a hand-written trace: prefill = one invocation per
// layer over the prompt (union, first-appearance order, token counts), decode = one per token per layer,
// batch B=2 = union over the group's sequences, a missing cell = no invocation; next_use vs brute force;
// refreshes of duplicate touches (by hand, and against the last-touch order on the bundled traces);
// build_lookup_view equals the view of build_lookup_stream, also with its pages faulted in by another thread.
#include "traces/lookup_stream.h"

#include <gtest/gtest.h>

#include <span>
#include <thread>
#include <vector>

#include "base/error.h"
#include "tests/fixtures.h"
#include "traces/trace_io.h"

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
  EXPECT_EQ(std::vector<uint32_t>(s.tokens.begin(), s.tokens.begin() + 6),
            (std::vector<uint32_t>{1, 2, 1, 1, 2, 1}));
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
      {0, 1, 2},    {7, 4, 6},  // seq 0 prefill (a step of its own)
      {3, 2},       {5, 4},     // seq 1 prefill
      {2, 3, 0},    {4, 5, 6},  // decode step 0: seq 0 then seq 1, union
      {2, 0, 3, 1}, {6, 7}};    // decode step 1: L1 only from seq 1 (seq 0's cell is missing)
  EXPECT_EQ(invocation_keys(s), want);
  EXPECT_EQ(s.step_tokens, (std::vector<uint32_t>{2, 1, 2, 2}));
  EXPECT_EQ(std::vector<uint32_t>(s.tokens.begin() + 10, s.tokens.begin() + 16),
            (std::vector<uint32_t>{1, 2, 1, 1, 2, 1}));  // expert 3 at L0 and expert 1 at L1 serve both
  EXPECT_EQ(s.next_use, brute_next_use(s));
  EXPECT_EQ(s.decode_lookups(), 12u);
}

// Refreshes of invocation i as keys.
std::vector<std::vector<uint32_t>> refresh_keys(const LookupStream& s) {
  std::vector<std::vector<uint32_t>> out;
  for (size_t i = 0; i < s.invocations(); ++i) {
    out.emplace_back();
    for (uint32_t r = s.refresh_begin[i]; r < s.refresh_begin[i + 1]; ++r) {
      EXPECT_GE(s.refresh[r], s.inv_begin[i]);
      EXPECT_LT(s.refresh[r], s.inv_begin[i + 1]);
      out.back().push_back(s.key[s.refresh[r]]);
    }
  }
  return out;
}

TEST(LookupStream, RefreshesOfTheHandTrace) {
  // Batch 1: every prefill pass touches its duplicates in an order that needs no refresh (seq 0 L0 touches
  // 0, 1, 1, 2: the last touches stand in lookup order; L1 touches 3, 0, 0, 2, the same), and decode at
  // batch 1 never repeats an expert.
  const LookupStream s1 = build_lookup_stream(hand_trace(), 1);
  EXPECT_EQ(s1.refresh_begin, std::vector<uint32_t>(s1.invocations() + 1, 0));
  // Batch 2, decode step 0 at L0 (invocation 4): seq 0 touches 2, 3, seq 1 touches 0, 3. Lookups 2, 3, 0;
  // last-touch order 2, 0, 3, so 3 is refreshed. At L1 (invocation 5): 0, 1 then 1, 2 -- the last touches
  // ascend, no refresh.
  const LookupStream s2 = build_lookup_stream(hand_trace(), 2);
  const auto r = refresh_keys(s2);
  ASSERT_EQ(r.size(), 8u);
  for (size_t i = 0; i < r.size(); ++i)
    EXPECT_EQ(r[i], i == 4 ? std::vector<uint32_t>{3} : std::vector<uint32_t>{}) << "invocation " << i;
}

// One layer, 5 experts, top-2, a prefill of the given tokens: the refreshes of its one invocation.
std::vector<uint32_t> prefill_refreshes(const std::vector<std::vector<uint32_t>>& tokens,
                                        std::vector<uint32_t>* lookups = nullptr) {
  TraceInfo info;
  info.layers = 1;
  info.experts = 5;
  TraceBuilder b(info, false, false, "refresh");
  for (uint32_t t = 0; t < tokens.size(); ++t) b.add(0, Phase::kPrefill, t, 0, tokens[t], {}, {}, t + 1);
  const LookupStream s = build_lookup_stream(std::move(b).finish());
  EXPECT_EQ(s.invocations(), 1u);
  if (lookups) *lookups = s.key;
  return refresh_keys(s)[0];
}

TEST(LookupStream, RefreshesGiveTheLastTouchOrder) {
  std::vector<uint32_t> lookups;
  // A, B, then A: touches 0 1 | 2 0, lookups 0, 1, 2; 0 refreshed (now more recent than 1 and 2).
  EXPECT_EQ(prefill_refreshes({{0, 1}, {2, 0}}, &lookups), (std::vector<uint32_t>{0}));
  EXPECT_EQ(lookups, (std::vector<uint32_t>{0, 1, 2}));
  // Touches 0 1 | 0 2: last-touch order 1, 0, 2. Refreshes only move a key to most recent, so both 0 and
  // then 2 must move.
  EXPECT_EQ(prefill_refreshes({{0, 1}, {0, 2}}), (std::vector<uint32_t>{0, 2}));
  // Touches 0 1 | 2 0 | 1 3: last-touch order 2, 0, 1, 3. Lookups 0, 1, 2, 3. The longest prefix of the
  // last-touch order that stands in lookup order is "2" alone (0 comes before 2 among the lookups), so
  // 0, 1, 3 are refreshed -- and 3 only because it must end up after 1.
  EXPECT_EQ(prefill_refreshes({{0, 1}, {2, 0}, {1, 3}}), (std::vector<uint32_t>{0, 1, 3}));
  // Touches 0 1 | 1 0: last-touch order 1, 0: refresh 0.
  EXPECT_EQ(prefill_refreshes({{0, 1}, {1, 0}}), (std::vector<uint32_t>{0}));
  // Touches 0 1 | 0 1 | 2 4: last-touch order 0, 1, 2, 4 = lookup order: nothing to refresh.
  EXPECT_EQ(prefill_refreshes({{0, 1}, {0, 1}, {2, 4}}), (std::vector<uint32_t>{}));
}

template <typename T>
std::vector<T> vec(std::span<const T> s) {
  return {s.begin(), s.end()};
}

// Every array of a built view equal to the stream's (a value the builder failed to write would be whatever
// the fresh pages hold, zero).
void expect_view_equals_stream(const LookupView& v, const LookupStream& s) {
  EXPECT_EQ(vec(v.inv_begin), s.inv_begin);
  EXPECT_EQ(vec(v.inv_layer), s.inv_layer);
  EXPECT_EQ(vec(v.inv_phase), s.inv_phase);
  EXPECT_EQ(vec(v.key), s.key);
  EXPECT_EQ(vec(v.next_use), s.next_use);
  EXPECT_EQ(vec(v.refresh_begin), s.refresh_begin);
  EXPECT_EQ(vec(v.refresh), s.refresh);
}

// The view built into storage of its own, not zero-filled: every array equal to the stream's (a value the
// builder failed to write would be whatever the fresh pages hold, zero), and alive as long as its storage.
TEST(LookupStream, BuiltViewEqualsTheStreamsView) {
  size_t refreshes = 0;
  for (const Trace& t : {hand_trace(), load_trace(test::bundled_data("traces/qwen3-30b-a3b.route.csv"))})
    for (bool next_use : {false, true}) {
      const LookupStream s =
          build_lookup_stream(t, 1, LookupStreamParts{.tokens = false, .next_use = next_use});
      BuiltLookupView b = build_lookup_view(t, next_use);
      const LookupView v = b.view;
      const std::shared_ptr<const void> storage = std::move(b.storage);
      b = BuiltLookupView{};
      expect_view_equals_stream(v, s);
      EXPECT_EQ(b.decode_lookups, 0u);
      EXPECT_EQ(build_lookup_view(t, next_use).decode_lookups, s.decode_lookups());
      refreshes += s.refreshes();
    }
  EXPECT_GT(refreshes, 0u);  // the Qwen3 prompt touches experts twice: refreshes are compared too
}

// The bundled Qwen3 trace imported `copies` times, each copy a sequence of its own.
Trace tiled_qwen3(uint32_t copies) {
  const Trace q = load_trace(test::bundled_data("traces/qwen3-30b-a3b.route.csv"));
  TraceInfo info;
  info.layers = q.info().layers;
  info.experts = q.info().experts;
  TraceBuilder b(info, false, false, "tiled");
  std::vector<uint32_t> ex;
  uint64_t line = 0;
  for (uint32_t c = 0; c < copies; ++c)
    for (size_t r = 0; r < q.records(); ++r) {
      ex.assign(q.experts(r).begin(), q.experts(r).end());
      b.add(c * 1000 + q.seq(r), q.phase(r), q.step(r), q.layer(r), ex, {}, {}, ++line);
    }
  return std::move(b).finish();
}

// LookupViewBuilder: the view is the same when another thread faults its pages in while it is built (on a
// trace of 0.3 M lookups, more than the prefaulter's lead, so that it runs behind the builder and ahead of
// it), whichever starts first, and prefault() returns when the build has already ended.
TEST(LookupStream, BuiltViewWithPrefaultEqualsTheStreamsView) {
  const Trace t = tiled_qwen3(8);
  for (bool next_use : {false, true}) {
    const LookupStream s =
        build_lookup_stream(t, 1, LookupStreamParts{.tokens = false, .next_use = next_use});
    ASSERT_GT(s.lookups(), size_t{300000});
    for (int prefault_first : {0, 1}) {
      LookupViewBuilder builder(t, next_use);
      std::thread prefaulter;
      if (prefault_first) prefaulter = std::thread([&builder] { builder.prefault(); });
      BuiltLookupView b;
      std::thread build([&] { b = builder.build(); });
      if (!prefault_first) builder.prefault();
      build.join();
      if (prefaulter.joinable()) prefaulter.join();
      const LookupView& v = b.view;
      expect_view_equals_stream(v, s);
      EXPECT_EQ(b.decode_lookups, s.decode_lookups());
      builder.prefault();  // after the build: returns at once
    }
  }
}

TEST(LookupStream, RejectsBatchZero) {
  EXPECT_THROW((void)build_lookup_stream(hand_trace(), 0), Error);
}

}  // namespace
}  // namespace moesim::traces
