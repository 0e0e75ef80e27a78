// JSONL importer: default and mapped key names (--fields), optional seq/phase/weights/logits, and every
// kind of bad input, each a moesim::Error naming the file, the line and the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/fixtures.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;

std::string jsonl_error(const std::string& text, const std::string& fields = "", ImportShape shape = {}) {
  try {
    (void)import_jsonl(text, "r.jsonl", parse_field_map(fields), shape);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a moesim::Error for:\n" << text;
  return "";
}

const std::string kGood = R"({"token":0,"layer":0,"experts":[1,2]})"
                          "\n"
                          R"({"token":0,"layer":1,"experts":[0,3],"note":"extra keys are ignored"})"
                          "\n\n"
                          R"({"seq":1,"phase":"prefill","token":0,"layer":0,"experts":[2,0]})"
                          "\n";

TEST(ImportJsonl, DefaultsAndInference) {
  const Trace t = import_jsonl(kGood, "r.jsonl");
  EXPECT_EQ(t.records(), 3u);
  EXPECT_EQ(t.info().layers, 2u);   // largest layer + 1
  EXPECT_EQ(t.info().experts, 4u);  // largest id + 1
  EXPECT_EQ(t.info().top_k, 2u);
  EXPECT_EQ(t.seq(0), 0u);                // missing seq => 0
  EXPECT_EQ(t.phase(0), Phase::kDecode);  // missing phase => decode
  EXPECT_EQ(t.seq(2), 1u);
  EXPECT_EQ(t.phase(2), Phase::kPrefill);
  EXPECT_FALSE(t.has_weights());
  EXPECT_EQ(t.info().missing_cells, 1u);  // seq 1 prefill has layer 0 only
}

TEST(ImportJsonl, ShapeFromAModel) {
  const Trace t = import_jsonl(kGood, "r.jsonl", {}, ImportShape{4, 16});
  EXPECT_EQ(t.info().layers, 4u);
  EXPECT_EQ(t.info().experts, 16u);
  EXPECT_THAT(jsonl_error(kGood, "", ImportShape{1, 16}), HasSubstr("r.jsonl:2: field 'layer'"));
  EXPECT_THAT(jsonl_error(kGood, "", ImportShape{2, 3}),
              HasSubstr("r.jsonl:2: field 'experts': expert id 3"));
}

TEST(ImportJsonl, MappedKeyNames) {
  const std::string path = test::test_data("traces/custom_keys.jsonl");
  const auto fm = parse_field_map("seq=req,phase=stage,token=pos,layer=moe_layer,experts=topk,weights=probs");
  const Trace t = import_jsonl(read_file(path), path, fm);
  EXPECT_EQ(t.records(), 8u);
  EXPECT_EQ(t.sequence_ids(), (std::vector<uint32_t>{0, 7}));
  EXPECT_EQ(t.tokens(Phase::kPrefill), 2u);
  EXPECT_EQ(t.tokens(Phase::kDecode), 3u);
  EXPECT_TRUE(t.has_weights());
  // Without the mapping the required keys are missing.
  // All of them in one error, with the keys the record has instead.
  const std::string e = jsonl_error(read_file(path));
  EXPECT_THAT(
      e, HasSubstr("r.jsonl:1: fields 'token', 'layer', 'experts': missing (no key named 'token', 'layer', "
                   "'experts' in the record, which has: "));
  EXPECT_THAT(e, HasSubstr("moe_layer, "));
  EXPECT_THAT(e, HasSubstr("; map them with --fields token=NAME,layer=NAME,experts=NAME"));
}

TEST(ImportJsonl, PhaseValues) {
  EXPECT_EQ(import_jsonl(R"({"phase":0,"token":0,"layer":0,"experts":[1]})", "x").phase(0), Phase::kPrefill);
  EXPECT_EQ(import_jsonl(R"({"phase":1,"token":0,"layer":0,"experts":[1]})", "x").phase(0), Phase::kDecode);
  EXPECT_EQ(import_jsonl(R"({"phase":"decode","token":0,"layer":0,"experts":[1]})", "x").phase(0),
            Phase::kDecode);
  EXPECT_THAT(jsonl_error(R"({"phase":"warmup","token":0,"layer":0,"experts":[1]})"),
              HasSubstr("r.jsonl:1: field 'phase'"));
  EXPECT_THAT(jsonl_error(R"({"phase":2,"token":0,"layer":0,"experts":[1]})"),
              HasSubstr("r.jsonl:1: field 'phase'"));
  EXPECT_THAT(jsonl_error(R"({"phase":"Prefill","token":0,"layer":0,"experts":[1]})"),
              HasSubstr("field 'phase'"));
}

TEST(ImportJsonl, BadInputs) {
  const std::string ok = R"({"token":0,"layer":0,"experts":[1,2],"weights":[0.5,0.5]})"
                         "\n";
  EXPECT_THAT(jsonl_error(""), HasSubstr("r.jsonl: empty file"));
  EXPECT_THAT(jsonl_error("\n  \n"), HasSubstr("no routing records"));
  // Truncated mid-record.
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"exp)"), HasSubstr("r.jsonl:2: invalid JSON"));
  EXPECT_THAT(jsonl_error(ok + "[1,2]\n"), HasSubstr("r.jsonl:2: a record must be a JSON object"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":"1","layer":0,"experts":[1,2],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'token': not an unsigned"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1.5,"layer":0,"experts":[1,2],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'token'"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":-1,"experts":[1,2],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'layer'"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,-2],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': expert id -2"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,70000],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': expert id 70000 outside"));
  // Too large for 32 bits, for 64 bits, or as a list string: out of range, not "not a non-negative integer".
  EXPECT_THAT(
      jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,4294967296],"weights":[0.5,0.5]})"),
      HasSubstr("r.jsonl:2: field 'experts': expert id 4294967296 outside [0, 65536): out of range (a trace "
                "holds expert ids up to 65535)"));
  EXPECT_THAT(
      jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,184467440737095516160],"weights":[0.5,0.5]})"),
      HasSubstr("r.jsonl:2: field 'experts': expert id 1.844674407370955e+20 outside [0, 65536): out of "
                "range"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":"1;4294967296","weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': expert id 4294967296 outside [0, 65536): out of range"));
  EXPECT_THAT(
      jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,4294967296],"weights":[0.5,0.5]})", "",
                  ImportShape{0, 16}),
      HasSubstr("r.jsonl:2: field 'experts': expert id 4294967296 outside [0, 16): out of range (the model "
                "has 16 experts)"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2.5],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': expert id 2.5 is not a non-negative integer"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":{"a":1},"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': not an array"));
  // A list written as a string must be a well-formed list of ids.
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":"1,,2","weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': empty item"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":"[1, x]","weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': expert id 'x'"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2,3],"weights":[0.5,0.5,0]})"),
              HasSubstr("r.jsonl:2: field 'experts': top-k mismatch"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[2,2],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: field 'experts': expert id 2 appears twice"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":0,"layer":0,"experts":[3,2],"weights":[0.5,0.5]})"),
              HasSubstr("r.jsonl:2: duplicate record"));
  // A key twice would keep only the last value: one routing silently lost.
  EXPECT_THAT(
      jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"experts":[0,3]})"),
      HasSubstr("r.jsonl:2: field 'experts': the key appears twice in the record, at columns 22 and 38"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"weights":[0.5,NaN]})"),
              HasSubstr("r.jsonl:2: invalid JSON"));  // JSON has no NaN literal
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"weights":[0.5,1e999]})"),
              HasSubstr("r.jsonl:2: invalid JSON: [json.exception.out_of_range.406] number overflow"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"weights":[0.5,3.5e38]})"),
              HasSubstr("r.jsonl:2: field 'weights': value 3.5e+38 outside the float32 range"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"weights":[0.5,1e300]})"),
              HasSubstr("r.jsonl:2: field 'weights': value 1e+300 outside the float32 range"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"weights":[0.5,null]})"),
              HasSubstr("r.jsonl:2: field 'weights': not a number"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2]})"),
              HasSubstr("r.jsonl:2: field 'weights': missing"));
  EXPECT_THAT(jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"weights":[0.5]})"),
              HasSubstr("r.jsonl:2: field 'weights': 1 weights, expected 2"));
  EXPECT_THAT(
      jsonl_error(ok + R"({"token":1,"layer":0,"experts":[1,2],"weights":[0.5,0.5],"logits":[1,2,3]})"),
      HasSubstr("r.jsonl:2: field 'logits': present"));
  EXPECT_THAT(jsonl_error(R"({"token":1,"layer":0,"experts":[1,2],"logits":[1,2,"inf"]})"),
              HasSubstr("r.jsonl:1: field 'logits': not a number"));
  EXPECT_THAT(jsonl_error(R"({"token":1,"layer":0,"experts":[1,2],"logits":[1,2]})"),
              HasSubstr("r.jsonl:1: field 'experts': expert id 2 outside [0, 2)"));
}

TEST(ImportJsonl, UnknownFieldsKeyListsKnownOnes) {
  const std::string m = jsonl_error(kGood, "tokens=pos");
  EXPECT_THAT(m, HasSubstr("--fields: unknown field 'tokens'"));
  EXPECT_THAT(m, HasSubstr("seq, token, layer, experts, weights, phase, logits"));
  EXPECT_THAT(jsonl_error(kGood, "token"), HasSubstr("--fields: 'token' is not FIELD=KEY"));
  EXPECT_THAT(jsonl_error(kGood, "token=a,layer=a"), HasSubstr("mapped to two fields"));
  EXPECT_THAT(jsonl_error(kGood, "token=a,token=b"), HasSubstr("given twice"));
}

}  // namespace
}  // namespace moesim::traces
