// JSONL export: JSONL (non-default keys) -> .mtr -> JSONL is byte-identical; the bundled real trace and a
// trace with logits survive export -> import unchanged, including every float32 bit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/fixtures.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

void expect_same_trace(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.records(), b.records());
  EXPECT_EQ(a.info().top_k, b.info().top_k);
  EXPECT_EQ(a.info().missing_cells, b.info().missing_cells);
  const auto& x = a.columns();
  const auto& y = b.columns();
  auto same = [](auto s, auto t) {
    // Empty columns may have null data pointers, which memcmp must not see.
    return s.size() == t.size() && (s.empty() || std::memcmp(s.data(), t.data(), s.size_bytes()) == 0);
  };
  EXPECT_TRUE(same(x.seq, y.seq));
  EXPECT_TRUE(same(x.phase, y.phase));
  EXPECT_TRUE(same(x.step, y.step));
  EXPECT_TRUE(same(x.layer, y.layer));
  EXPECT_TRUE(same(x.experts, y.experts));
  EXPECT_TRUE(same(x.weights, y.weights));  // bitwise: floats round-trip exactly
  EXPECT_TRUE(same(x.logits, y.logits));
  EXPECT_TRUE(same(x.next_use, y.next_use));
}

TEST(ExportJsonl, CustomKeysRoundTripThroughMtrByteIdentical) {
  const std::string path = test::test_data("traces/custom_keys.jsonl");
  const std::string original = read_file(path);
  const std::string fields = "seq=req,phase=stage,token=pos,layer=moe_layer,experts=topk,weights=probs";
  LoadOptions lo;
  lo.fields = fields;
  const Trace t = load_trace(path, lo);
  const std::string mtr =
      (std::filesystem::temp_directory_path() / ("moesim_export_rt." + std::to_string(::getpid()) + ".mtr"))
          .string();
  save_mtr(t, mtr);
  const Trace back = load_trace(mtr);
  expect_same_trace(t, back);
  EXPECT_EQ(export_jsonl(back, parse_field_map(fields)), original);
  std::filesystem::remove(mtr);
}

TEST(ExportJsonl, LogitsRoundTripByteIdentical) {
  const std::string path = test::test_data("traces/tiny_logits.jsonl");
  const Trace t = load_trace(path);
  ASSERT_TRUE(t.has_logits());
  EXPECT_EQ(export_jsonl(decode_mtr(encode_mtr(t), "mem")), read_file(path));
}

TEST(ExportJsonl, BundledTraceSurvivesExportImport) {
  const Trace t = load_trace(test::bundled_data("traces/qwen3-30b-a3b.route.csv"));
  const std::string text = export_jsonl(t);
  const Trace back = import_jsonl(text, "export");
  expect_same_trace(t, back);
  EXPECT_EQ(export_jsonl(back), text);
}

TEST(ExportJsonl, AwkwardFloatsRoundTripBitExactly) {
  // Subnormals, extremes and values whose shortest decimal sits close to a rounding boundary.
  TraceInfo info;
  TraceBuilder b(info, true, false, "floats");
  const float vals[] = {1e-45f,      1.17549435e-38f, 3.4028235e38f, -0.0f,          0.1f,
                        1.0f / 3.0f, 16777217.0f,     8.589973e9f,   2.3509887e-38f, 0.0f};
  uint32_t step = 0;
  for (float v : vals) {
    const std::vector<uint32_t> ex = {0, 1};
    const std::vector<float> w = {v, -v};
    b.add(0, Phase::kDecode, step, 0, ex, w, {}, step + 1);
    ++step;
  }
  const Trace t = std::move(b).finish();
  const Trace back = import_jsonl(export_jsonl(t), "x");
  expect_same_trace(t, back);
}

}  // namespace
}  // namespace moesim::traces
