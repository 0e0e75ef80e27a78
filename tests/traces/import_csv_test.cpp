// CSV importer: header-named columns, ';'-separated lists, quoting, --fields, and bad inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/fixtures.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;

std::string csv_error(const std::string& text, const std::string& fields = "") {
  try {
    (void)import_csv(text, "r.csv", parse_field_map(fields));
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a moesim::Error for:\n" << text;
  return "";
}

TEST(ImportCsv, ReadsTheFixture) {
  const std::string path = test::test_data("traces/tiny.csv");
  const Trace t = import_csv(read_file(path), path);
  EXPECT_EQ(t.records(), 7u);
  EXPECT_EQ(t.info().layers, 2u);
  EXPECT_EQ(t.info().experts, 4u);
  EXPECT_EQ(t.info().missing_cells, 1u);
  EXPECT_EQ(t.experts(5)[0], 3u);  // the quoted "3;2" list, decode step 1 layer 0
  EXPECT_FLOAT_EQ(t.weights(5)[1], 0.45f);
  // Same records as the route_trace fixture (which numbers decode steps from the prompt length).
  const Trace r = import_bigmoe(read_file(test::test_data("traces/tiny.route.csv")), "r");
  ASSERT_EQ(r.records(), t.records());
  for (size_t i = 0; i < r.records(); ++i) {
    EXPECT_EQ(r.step(i), t.step(i));
    EXPECT_TRUE(std::equal(r.experts(i).begin(), r.experts(i).end(), t.experts(i).begin()));
    EXPECT_TRUE(std::equal(r.weights(i).begin(), r.weights(i).end(), t.weights(i).begin()));
  }
}

TEST(ImportCsv, MappedColumnsAndOptionalOnes) {
  const Trace t =
      import_csv("pos,L,ids\n0,0,1;2\n1,0,2;0\n", "r.csv", parse_field_map("token=pos,layer=L,experts=ids"));
  EXPECT_EQ(t.records(), 2u);
  EXPECT_EQ(t.phase(0), Phase::kDecode);
  EXPECT_EQ(t.seq(0), 0u);
  EXPECT_FALSE(t.has_weights());
  EXPECT_THAT(
      csv_error("pos,L,ids\n0,0,1;2\n"),
      HasSubstr("r.csv:1: fields 'token', 'layer', 'experts': missing (no column named 'token', 'layer', "
                "'experts' in the header row, which has: pos, L, ids); map them with --fields "
                "token=NAME,layer=NAME,experts=NAME, or number tokens by row order with --token-from order"));
  EXPECT_THAT(
      csv_error("token,L,ids\n0,0,1;2\n"),
      HasSubstr("r.csv:1: fields 'layer', 'experts': missing (no column named 'layer', 'experts' in the "
                "header row, which has: token, L, ids); map them with --fields layer=NAME,experts=NAME"));
  EXPECT_THAT(
      csv_error("token,layer,ids\n0,0,1;2\n"),
      HasSubstr("r.csv:1: field 'experts': missing (no column named 'experts' in the header row, which "
                "has: token, layer, ids); map it with --fields experts=NAME"));
}

TEST(ImportCsv, BadInputs) {
  const std::string hdr = "seq,phase,token,layer,experts,weights,logits\n";
  const std::string ok = "0,decode,0,0,1;2,0.5;0.5,0;1;2;3\n";
  EXPECT_THAT(csv_error(""), HasSubstr("r.csv: empty file"));
  EXPECT_THAT(csv_error("\n\n"), HasSubstr("empty file"));
  EXPECT_THAT(csv_error(hdr), HasSubstr("r.csv:1: no routing records"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;2,0.5;0"),
              HasSubstr("r.csv:3: 6 columns, the header has 7"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;2,0.5;0.5,0;1;2;3,extra\n"),
              HasSubstr("r.csv:3: 8 columns"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,one,0,1;2,0.5;0.5,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'token'"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;x,0.5;0.5,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'experts'"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;2,0.5;half,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'weights'"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;2,0.5;nan,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'weights': NaN"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;2,0.5;0.5,0;1;inf;3\n"),
              HasSubstr("r.csv:3: field 'logits': NaN or inf"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;4,0.5;0.5,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'experts': expert id 4 outside [0, 4)"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;2;3,0.5;0.5;0,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'experts': top-k"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,2;2,0.5;0.5,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'experts': expert id 2 appears twice"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,0,0,2;1,0.5;0.5,0;1;2;3\n"),
              HasSubstr("r.csv:3: duplicate record"));
  EXPECT_THAT(csv_error(hdr + ok + "0,gen,1,0,1;2,0.5;0.5,0;1;2;3\n"), HasSubstr("r.csv:3: field 'phase'"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,1;2,,0;1;2;3\n"),
              HasSubstr("r.csv:3: field 'weights': 0 weights"));
  EXPECT_THAT(csv_error(hdr + ok + "0,decode,1,0,\"1;2,0.5;0.5,0;1;2;3\n"),
              HasSubstr("r.csv:3: unterminated"));
  EXPECT_THAT(csv_error("token,layer,experts,layer\n0,0,1,0\n"),
              HasSubstr("r.csv:1: field 'layer': column 'layer' appears twice"));
  EXPECT_THAT(csv_error(hdr + ok, "phase=stage,bogus=x"), HasSubstr("--fields: unknown field 'bogus'"));
}

}  // namespace
}  // namespace moesim::traces
