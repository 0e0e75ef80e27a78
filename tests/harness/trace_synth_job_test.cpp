// `moesim trace synth` called directly (harness/trace_synth_job.h): a Zipf trace has the model's shape and
// one record (its top-k selections) per token and layer, is labelled synthetic and depends only on its
// arguments; a fitted trace takes the real trace's shape; --logits-for keeps the real routing and adds
// logits; out-of-range options are refused naming the option, before anything is written.
#include "harness/trace_synth_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/error.h"
#include "tests/cli/cli_test_util.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using ::testing::HasSubstr;

const std::string kTiny = test::test_data("traces/tiny.route.csv");

class TraceSynthJob : public test::TestDir {
 protected:
  static std::string bytes(const std::string& file) { return test::read_text(file); }
  // tiny-moe (4 layers x 16 experts, top-2), Zipf 1: 2 sequences of 3 prompt + 5 generated tokens.
  TraceSynthArgs zipf_args(const std::string& out, uint64_t seed = 7) const {
    TraceSynthArgs a;
    a.model = test::test_data("models/tiny-moe.json");
    a.zipf = 1.0;
    a.seed = seed;
    a.sequences = 2;
    a.prompt_tokens = 3;
    a.tokens = 5;
    a.out = path(out);
    return a;
  }
};

TEST_F(TraceSynthJob, AZipfTraceHasTheModelsShapeAndDependsOnlyOnItsArguments) {
  synth_trace(zipf_args("a.mtr"));
  const traces::Trace t = traces::load_trace(path("a.mtr"));
  EXPECT_TRUE(t.info().synthetic);
  EXPECT_EQ(t.info().layers, 4u);
  EXPECT_EQ(t.info().experts, 16u);
  EXPECT_EQ(t.info().top_k, 2u);
  EXPECT_EQ(t.sequence_ids().size(), 2u);
  EXPECT_EQ(t.records(), size_t{2} * (3 + 5) * 4);
  EXPECT_EQ(t.tokens(traces::Phase::kPrefill), 2u * 3u);
  EXPECT_EQ(t.tokens(traces::Phase::kDecode), 2u * 5u);
  synth_trace(zipf_args("b.mtr"));
  synth_trace(zipf_args("c.mtr", 8));
  EXPECT_EQ(bytes(path("a.mtr")), bytes(path("b.mtr")));
  EXPECT_NE(bytes(path("a.mtr")), bytes(path("c.mtr")));
}

TEST_F(TraceSynthJob, AFittedTraceTakesTheRealTracesShape) {
  TraceSynthArgs a;
  a.fit = kTiny;
  a.seed = 1;
  a.tokens = 6;
  a.out = path("fit.mtr");
  synth_trace(a);
  const traces::Trace t = traces::load_trace(a.out);
  EXPECT_TRUE(t.info().synthetic);
  EXPECT_EQ(t.info().layers, 2u);
  EXPECT_EQ(t.info().experts, 4u);
  EXPECT_EQ(t.info().top_k, 2u);
  EXPECT_EQ(t.records(), size_t{6} * 2);
  // The positional trace is the same input as --fit.
  a.fit.clear();
  a.trace = kTiny;
  a.out = path("positional.mtr");
  synth_trace(a);
  EXPECT_EQ(bytes(path("fit.mtr")), bytes(path("positional.mtr")));
}

TEST_F(TraceSynthJob, LogitsForKeepsTheRealRoutingAndAddsLogits) {
  TraceSynthArgs a;
  a.logits_for = kTiny;
  a.seed = 3;
  a.out = path("logits.mtr");
  synth_trace(a);
  const traces::Trace real = traces::load_trace(kTiny), t = traces::load_trace(a.out);
  EXPECT_FALSE(real.has_logits());
  EXPECT_TRUE(t.has_logits());
  EXPECT_TRUE(t.info().synthetic);
  EXPECT_EQ(t.records(), real.records());
  EXPECT_EQ(t.tokens(traces::Phase::kDecode), real.tokens(traces::Phase::kDecode));
  a.zipf = 1.0;
  EXPECT_THAT(error_of([&] { synth_trace(a); }), HasSubstr("--logits-for keeps the real trace's routing"));
}

TEST_F(TraceSynthJob, RefusesBadOptionsNamingThemAndWritesNothing) {
  const auto refused = [&](TraceSynthArgs a) {
    const std::string e = error_of([&] { synth_trace(a); });
    EXPECT_FALSE(fs::exists(a.out)) << e;
    return e;
  };
  TraceSynthArgs a = zipf_args("x.mtr");
  a.zipf = -1.0;
  EXPECT_THAT(refused(a), HasSubstr("--zipf: alpha must be a finite number >= 0"));
  a = zipf_args("x.mtr");
  a.sequences = 0;
  EXPECT_THAT(refused(a), HasSubstr("--sequences must be at least 1"));
  a = zipf_args("x.mtr");
  a.tokens = a.prompt_tokens = 0;
  EXPECT_THAT(refused(a), HasSubstr("--tokens and --prompt-tokens are both 0"));
  a = zipf_args("x.mtr");
  a.pairs = 5000;
  EXPECT_THAT(refused(a), HasSubstr("--pairs must be at most 4096"));
  a = zipf_args("x.mtr");
  a.zipf.reset();
  a.fit = kTiny;
  a.trace = kTiny;
  EXPECT_THAT(refused(a), HasSubstr("--fit and --trace name the same input"));
  a = zipf_args("x.mtr");
  a.zipf.reset();
  EXPECT_THAT(refused(a), HasSubstr("give exactly one of --zipf ALPHA or --fit REAL_TRACE"));
  a = zipf_args("x.mtr");
  a.fit = kTiny;
  EXPECT_THAT(refused(a), HasSubstr("give exactly one of --zipf ALPHA or --fit REAL_TRACE"));
  a = zipf_args("x.mtr");
  a.model.clear();
  EXPECT_THAT(refused(a), HasSubstr("--model is required"));
}

}  // namespace
}  // namespace moesim::harness
