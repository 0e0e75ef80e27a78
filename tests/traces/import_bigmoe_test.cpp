// route_trace v1 importer: a hand-made fixture (tests/data/traces/tiny.route.csv) checked field by field,
// and every kind of bad input, each a moesim::Error naming the file, the line and the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/fixtures.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;

const std::string kFixture = test::test_data("traces/tiny.route.csv");

std::string fixture_text() {
  return read_file(kFixture);
}

std::string bigmoe_error(const std::string& text) {
  try {
    (void)import_bigmoe(text, "t.csv");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a moesim::Error for:\n" << text;
  return "";
}

// The fixture with line `n` (1-based) replaced by `with` ("" deletes it).
std::string with_line(int n, const std::string& with) {
  std::string text = fixture_text(), out;
  size_t pos = 0;
  for (int ln = 1; pos < text.size(); ++ln) {
    size_t e = text.find('\n', pos);
    std::string line = text.substr(pos, e - pos);
    pos = e + 1;
    if (ln == n) {
      if (!with.empty()) out += with + "\n";
    } else {
      out += line + "\n";
    }
  }
  return out;
}

TEST(ImportBigmoe, ReadsTheFixture) {
  const Trace t = import_bigmoe(fixture_text(), kFixture);
  const TraceInfo& i = t.info();
  EXPECT_EQ(i.model, "Tiny-MoE-Q4_K_M");
  EXPECT_EQ(i.layers, 2u);
  EXPECT_EQ(i.experts, 4u);
  EXPECT_EQ(i.top_k, 2u);
  EXPECT_EQ(i.expert_bytes, (std::vector<uint64_t>{1000, 2000}));
  EXPECT_EQ(i.missing_cells, 1u);  // prompt step 0 has no layer-1 record (llama.cpp's last-layer shortcut)
  EXPECT_EQ(t.records(), 7u);
  EXPECT_EQ(t.tokens(Phase::kPrefill), 2u);
  EXPECT_EQ(t.tokens(Phase::kDecode), 2u);
  ASSERT_TRUE(t.has_weights());
  EXPECT_FALSE(t.has_logits());
  // Decode steps 2, 3 (absolute positions) become 0, 1.
  EXPECT_EQ(t.phase(3), Phase::kDecode);
  EXPECT_EQ(t.step(3), 0u);
  EXPECT_EQ(t.step(6), 1u);
  EXPECT_EQ(i.provenance["decode_step_shift"]["0"], 2);
  // Slot order is rank order; weights follow.
  EXPECT_EQ(t.experts(1)[0], 2u);
  EXPECT_EQ(t.experts(1)[1], 1u);
  EXPECT_FLOAT_EQ(t.weights(1)[0], 0.7f);
  EXPECT_EQ(t.layer(2), 1u);  // prefill is ordered (layer, step)
}

TEST(ImportBigmoe, EmptyAndTruncatedFiles) {
  EXPECT_THAT(bigmoe_error(""), HasSubstr("t.csv: empty file"));
  EXPECT_THAT(bigmoe_error("# route_trace v1\n"), HasSubstr("field 'n_layer'"));
  const std::string text = fixture_text();
  // Cut inside the last row: a column count error on line 19.
  EXPECT_THAT(bigmoe_error(text.substr(0, text.size() - 8)), HasSubstr("t.csv:19:"));
  // Cut at a row boundary inside a cell: the last cell has 1 of 2 slots.
  EXPECT_THAT(bigmoe_error(with_line(19, "")), HasSubstr("t.csv:18: field 'slot': top-k mismatch"));
  // Cut before the header row.
  EXPECT_THAT(bigmoe_error(text.substr(0, text.find("turn,"))), HasSubstr("field 'header'"));
}

TEST(ImportBigmoe, BadPreamble) {
  EXPECT_THAT(bigmoe_error(with_line(1, "# route_trace v2")), HasSubstr("t.csv:1: field 'preamble'"));
  EXPECT_THAT(bigmoe_error(with_line(2, "# model=x arch=y n_layer=two n_expert=4 n_expert_used=2")),
              HasSubstr("t.csv:2: field 'n_layer'"));
  EXPECT_THAT(bigmoe_error(with_line(2, "# model=x arch=y n_layer=2 n_expert=4 n_expert_used=5")),
              HasSubstr("t.csv:2: field 'n_expert_used'"));
  EXPECT_THAT(bigmoe_error(with_line(4, "")), HasSubstr("field 'expert_bytes'"));  // one layer lacks its size
  EXPECT_THAT(bigmoe_error(with_line(4, "# layer=0 expert_bytes=5 dense_bytes=1")),
              HasSubstr("t.csv:4: field 'layer'"));
  EXPECT_THAT(
      bigmoe_error(with_line(5, "turn,phase,step,layer,slot,expert,weight,residency")),
      HasSubstr("t.csv:5: field 'expert_bytes': missing (no column named 'expert_bytes' in the header row, "
                "which has: turn, phase, step, layer, slot, expert, weight, residency)"));
  // Several at once, without --fields advice (the columns of route_trace are fixed).
  const std::string two = bigmoe_error(with_line(5, "turn,phase,step,layer,expert,weight,residency"));
  EXPECT_THAT(two, HasSubstr("t.csv:5: fields 'slot', 'expert_bytes': missing (no column named 'slot', "
                             "'expert_bytes' in the header row, which has: turn, phase"));
  EXPECT_THAT(two, ::testing::Not(HasSubstr("--fields")));
}

TEST(ImportBigmoe, BadRows) {
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,0.4,0")),
              HasSubstr("t.csv:7: 8 columns, the header has 9"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,0.4,0,1000,9")), HasSubstr("t.csv:7: 10 columns"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,x3,0.4,0,1000")),
              HasSubstr("t.csv:7: field 'expert': expert id 'x3' is not a non-negative integer"));
  EXPECT_THAT(
      bigmoe_error(with_line(7, "0,0,0,0,1,4294967296,0.4,0,1000")),
      HasSubstr("t.csv:7: field 'expert': expert id 4294967296 outside [0, 4): out of range (the model has 4 "
                "experts)"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,heavy,0,1000")), HasSubstr("t.csv:7: field 'weight'"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,0.4,yes,1000")),
              HasSubstr("t.csv:7: field 'residency'"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,-1,0,1,3,0.4,0,1000")), HasSubstr("t.csv:7: field 'step'"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,4,0.4,0,1000")),
              HasSubstr("t.csv:7: field 'expert': expert id 4 outside [0, 4)"));
  EXPECT_THAT(bigmoe_error(with_line(8, "0,0,1,2,0,2,0.7,0,1000")), HasSubstr("t.csv:8: field 'layer'"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,2,0,0,1,3,0.4,0,1000")), HasSubstr("t.csv:7: field 'phase'"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,nan,0,1000")),
              HasSubstr("t.csv:6: field 'weights': NaN"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,inf,0,1000")), HasSubstr("t.csv:6: field 'weights'"));
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,1e99,0,1000")), HasSubstr("t.csv:7: field 'weight'"));
  // Duplicate id inside one top-k.
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,1,0.4,0,1000")),
              HasSubstr("t.csv:6: field 'experts': expert id 1 appears twice"));
}

TEST(ImportBigmoe, TopKMismatchAndSlotOrder) {
  // A third slot in a top-2 cell.
  EXPECT_THAT(bigmoe_error(with_line(7, "0,0,0,0,1,3,0.4,0,1000\n0,0,0,0,2,2,0.1,0,1000")),
              HasSubstr("t.csv:8: field 'slot': top-k mismatch: slot 2"));
  // Slots out of order.
  EXPECT_THAT(bigmoe_error(with_line(6, "0,0,0,0,1,1,0.6,0,1000")),
              HasSubstr("t.csv:6: field 'slot': slot 1, expected 0"));
}

TEST(ImportBigmoe, DuplicateRecordsAndDecodeInsidePrompt) {
  // The cell (decode step 2, layer 0) again at the end.
  const std::string dup = fixture_text() + "0,1,2,0,0,1,0.9,1,0\n0,1,2,0,1,0,0.1,0,1000\n";
  EXPECT_THAT(bigmoe_error(dup), HasSubstr("t.csv:20: duplicate record"));
  EXPECT_THAT(bigmoe_error(dup), HasSubstr("first seen at line 12"));
  // A decode step inside the prompt.
  EXPECT_THAT(bigmoe_error(fixture_text() + "0,1,1,0,0,1,0.9,1,0\n0,1,1,0,1,0,0.1,0,1000\n"),
              HasSubstr("t.csv:20: field 'step': decode step 1 is inside the prompt"));
}

TEST(ImportBigmoe, InvalidUtf8InThePreambleIsSanitized) {
  // Found by fuzzing: a stray byte in the model path made the .mtr header's JSON dump throw.
  std::string text = fixture_text();
  text.replace(text.find("Tiny"), 1, "\x9b");
  const Trace t = import_bigmoe(text, "t.csv");
  EXPECT_EQ(t.info().model, "?iny-MoE-Q4_K_M");
  EXPECT_EQ(decode_mtr(encode_mtr(t), "m").info().model, "?iny-MoE-Q4_K_M");
  EXPECT_EQ(sanitize_utf8("a\xc3\xa9"
                          "b\xe2\x82"),
            "a\xc3\xa9"
            "b??");                                           // valid 2-byte kept; cut 3-byte replaced
  EXPECT_EQ(sanitize_utf8("\xc0\xaf\xed\xa0\x80"), "?????");  // overlong and surrogate rejected
}

TEST(ImportBigmoe, ShapeFromAModelMustAgree) {
  EXPECT_NO_THROW((void)import_bigmoe(fixture_text(), "t.csv", ImportShape{2, 4}));
  try {
    (void)import_bigmoe(fixture_text(), "t.csv", ImportShape{3, 4});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("t.csv:2: field 'n_layer'"));
  }
}

}  // namespace
}  // namespace moesim::traces
