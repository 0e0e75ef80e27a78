// The per-token engine log reader (traces/engine_log.h): the bundled BigMoeOnEdge log read field by field,
// a mapped log of another engine, and every kind of bad input, each a moesim::Error naming the file, the
// line and the column.
#include "traces/engine_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/error_of.h"
#include "tests/fixtures.h"

namespace moesim::traces {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kLog = test::bundled_data("traces/qwen3-30b-a3b.metrics");
const std::string kHeader =
    "step,steps,wall_ms,io_ms,compute_ms,read_bytes,cache_hit_pct,stall_ms,mgmt_ms,majflt,cpu_ms\n";
const std::string kSummary = "# summary tokens=2 s/tok=0.1 n_prompt=3 prefill_s=0.5\n";

std::string two_rows(const std::string& second = "2,2,100,50,60,2000,10,30,10,0,200") {
  return kHeader + "1,2,110,40,70,1000,5,30,10,0,210\n" + second + "\n" + kSummary;
}

TEST(EngineLog, ReadsTheBundledQwenLog) {
  const EngineLog log = read_engine_log(kLog);
  ASSERT_EQ(log.tokens.size(), 128u);
  EXPECT_EQ(log.tokens[0].step, 1u);
  EXPECT_DOUBLE_EQ(log.tokens[0].wall_ms, 265.825);
  EXPECT_DOUBLE_EQ(log.tokens[0].io_ms, 529.595);
  EXPECT_DOUBLE_EQ(log.tokens[0].compute_ms, 99.116);
  EXPECT_DOUBLE_EQ(log.tokens[0].read_bytes, 456413184);
  EXPECT_DOUBLE_EQ(log.tokens[0].stall_ms, 109.331);
  EXPECT_DOUBLE_EQ(log.tokens[0].mgmt_ms, 57.378);
  EXPECT_EQ(log.tokens[127].step, 128u);
  EXPECT_EQ(log.n_prompt, 28u);
  EXPECT_DOUBLE_EQ(log.prefill_s, 6.333);
  EXPECT_EQ(log.summary.at("cache_hit_pct"), "74.9");
  EXPECT_EQ(log.summary_line, 130u);
  // The summary's s/tok is the rows' mean wall time, rounded to the millisecond.
  EXPECT_NEAR(log.mean_wall_ms(), 177, 0.5);
}

TEST(EngineLog, MapsAnotherEnginesColumnsAndSummaryKeys) {
  const std::string text =
      "idx,latency,disk,mm,bytes\n1,10,4,5,100\n2,12,6,5,300\n# summary prompt_tokens=7 ttft=0.25\n";
  const LogFieldMap f = parse_log_fields(
      "step=idx,wall_ms=latency,io_ms=disk,compute_ms=mm,read_bytes=bytes,n_prompt=prompt_tokens,prefill_s="
      "ttft");
  const EngineLog log = parse_engine_log(text, "other.csv", f);
  ASSERT_EQ(log.tokens.size(), 2u);
  EXPECT_DOUBLE_EQ(log.tokens[1].wall_ms, 12);
  EXPECT_DOUBLE_EQ(log.tokens[1].read_bytes, 300);
  EXPECT_DOUBLE_EQ(log.tokens[1].stall_ms, 0);  // optional, absent
  EXPECT_EQ(log.n_prompt, 7u);
  EXPECT_DOUBLE_EQ(log.prefill_s, 0.25);
}

TEST(EngineLog, LogFieldsSpecErrorsAreUsageErrors) {
  EXPECT_THROW(parse_log_fields("wall=latency"), UsageError);
  EXPECT_THROW(parse_log_fields("wall_ms"), UsageError);
  EXPECT_THROW(parse_log_fields("wall_ms=a,wall_ms=b"), UsageError);
}

TEST(EngineLog, MissingSummaryLineNamesTheFile) {
  const std::string text = kHeader + "1,1,110,40,70,1000,5,30,10,0,210\n";
  EXPECT_THAT(error_of([&] { parse_engine_log(text, "m.metrics"); }),
              HasSubstr("m.metrics: no '# summary' line"));
}

TEST(EngineLog, NonNumericCellNamesLineAndColumn) {
  EXPECT_THAT(
      error_of([&] { parse_engine_log(two_rows("2,2,100,fast,60,2000,10,30,10,0,200"), "m.metrics"); }),
      HasSubstr("m.metrics:3: field 'io_ms': column 4: 'fast' is not a finite non-negative number"));
  EXPECT_THAT(error_of([&] { parse_engine_log(two_rows("2,2,nan,50,60,2000,10,30,10,0,200"), "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'wall_ms': column 3"));
}

TEST(EngineLog, WrongColumnCountNamesLineAndColumn) {
  EXPECT_THAT(error_of([&] { parse_engine_log(two_rows("2,2,100,50,60,2000,10,30,10"), "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'majflt': column 10: the row has 9 cells, the header 11"));
  EXPECT_THAT(
      error_of([&] { parse_engine_log(two_rows("2,2,100,50,60,2000,10,30,10,0,200,7"), "m.metrics"); }),
      HasSubstr("m.metrics:3: column 12: the row has 12 cells, the header 11"));
}

TEST(EngineLog, StepsNotOneToNNameLineAndColumn) {
  EXPECT_THAT(error_of([&] { parse_engine_log(two_rows("3,2,100,50,60,2000,10,30,10,0,200"), "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'step': step 3 where step 2 was expected"));
  EXPECT_THAT(error_of([&] { parse_engine_log(two_rows("2,5,100,50,60,2000,10,30,10,0,200"), "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'steps': column 2: 5 steps, but the log has 2 token rows"));
  EXPECT_THAT(error_of([&] { parse_engine_log(two_rows("0,2,100,50,60,2000,10,30,10,0,200"), "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'step': column 1: step must be a whole number >= 1"));
}

TEST(EngineLog, MissingColumnAndSummaryKeyAreNamed) {
  EXPECT_THAT(error_of([&] { parse_engine_log("step,wall_ms\n1,3\n" + kSummary, "m.metrics"); }),
              HasSubstr("m.metrics:1:"));
  const std::string no_prefill = kHeader + "1,1,110,40,70,1000,5,30,10,0,210\n# summary n_prompt=3\n";
  EXPECT_THAT(error_of([&] { parse_engine_log(no_prefill, "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'prefill_s': the summary line has no 'prefill_s'"));
  const std::string bad = kHeader + "1,1,110,40,70,1000,5,30,10,0,210\n# summary n_prompt=3 prefill_s=x\n";
  EXPECT_THAT(error_of([&] { parse_engine_log(bad, "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'prefill_s': 'x' is not a finite non-negative number"));
}

// A name twice is ambiguous: which copy the fit or the validation used would be a guess, so both are refused
// naming both positions (a column's index; a summary key's column on its line).
TEST(EngineLog, DuplicateColumnOrSummaryKeyIsAnErrorNamingBoth) {
  const std::string cols =
      "step,steps,wall_ms,io_ms,compute_ms,read_bytes,wall_ms\n1,1,110,40,70,1000,3\n" + kSummary;
  EXPECT_THAT(
      error_of([&] { parse_engine_log(cols, "m.metrics"); }),
      HasSubstr(
          "m.metrics:1: field 'wall_ms': the column appears twice in the header row (columns 3 and 7)"));
  const std::string keys =
      kHeader + "1,1,110,40,70,1000,5,30,10,0,210\n# summary n_prompt=3 prefill_s=0.5 prefill_s=9\n";
  EXPECT_THAT(error_of([&] { parse_engine_log(keys, "m.metrics"); }),
              HasSubstr("m.metrics:3: field 'prefill_s': the summary key appears twice (columns 22 and 36)"));
}

TEST(EngineLog, RowAfterTheSummaryIsAnError) {
  const std::string text = two_rows() + "3,2,100,50,60,2000,10,30,10,0,200\n";
  EXPECT_THAT(error_of([&] { parse_engine_log(text, "m.metrics"); }),
              HasSubstr("m.metrics:5: a token row after the summary line"));
}

}  // namespace
}  // namespace moesim::traces
