// `moesim weights stats` called directly (harness/weights_stats_job.h) on synthetic weights
// (tests/harness/synth_store.h: 6 BF16 tensors of 256 x 128): the exponent histogram counts every element,
// the entropy is the histogram's (at most log2 of its distinct exponents), the split-format bound is
// (8 + H) / 16, and the whole file's figures are its tensors' together; no checkpoint is a usage error.
#include "harness/weights_stats_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/cli/cli_test_util.h"
#include "tests/error_of.h"
#include "tests/harness/synth_store.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

class WeightsStatsJob : public test::TestDir {
 protected:
  Json stats() {
    test::make_synth_store(path("w.safetensors"), "");
    WeightsStatsArgs a;
    a.path = path("w.safetensors");
    a.json = true;
    a.threads = 1;
    a.out = path("stats.json");
    write_file_atomic(a.out, weights_stats_output(a));
    return Json::parse(test::read_text(a.out));
  }
};

// The entropy in bits of a histogram of counts.
double entropy_of(const Json& histogram) {
  double total = 0, h = 0;
  for (const Json& c : histogram) total += c.get<double>();
  for (const Json& c : histogram)
    if (c.get<double>() > 0) h -= c.get<double>() / total * std::log2(c.get<double>() / total);
  return h;
}

TEST_F(WeightsStatsJob, TheEntropyAndBoundAreTheExponentHistograms) {
  const Json j = stats();
  EXPECT_EQ(j["header"]["command"], "weights stats");
  EXPECT_EQ(j["tensors"], test::kSynthStoreTensors);
  EXPECT_EQ(j["elements"], test::kSynthStoreTensors * test::kSynthStoreElements);
  std::vector<double> all(j["exponent_histogram"].size(), 0);
  for (const Json& t : j["per_tensor"]) {
    SCOPED_TRACE(t["name"].get<std::string>());
    EXPECT_EQ(t["elements"], test::kSynthStoreElements);
    uint64_t counted = 0, distinct = 0;
    for (size_t e = 0; e < t["exponent_histogram"].size(); ++e) {
      const uint64_t c = t["exponent_histogram"][e].get<uint64_t>();
      counted += c;
      distinct += c > 0;
      all[e] += static_cast<double>(c);
    }
    EXPECT_EQ(counted, test::kSynthStoreElements);
    EXPECT_EQ(t["distinct_exponents"], distinct);
    const double h = t["entropy_bits"].get<double>();
    EXPECT_NEAR(h, entropy_of(t["exponent_histogram"]), 1e-9);
    EXPECT_LE(h, std::log2(static_cast<double>(distinct)) + 1e-12);
    EXPECT_NEAR(t["bound_ratio"].get<double>(), (8 + h) / 16, 1e-12);
  }
  EXPECT_EQ(j["exponent_histogram"], Json(all));
  EXPECT_NEAR(j["entropy_bits"].get<double>(), entropy_of(j["exponent_histogram"]), 1e-9);
  EXPECT_NEAR(j["bound_ratio"].get<double>(), (8 + j["entropy_bits"].get<double>()) / 16, 1e-12);
  // Gaussian weights of std 0.02 use a few exponents: well under 8 bits of entropy, a ratio well under 1.
  EXPECT_LT(j["entropy_bits"].get<double>(), 4);
  for (const auto& [codec, ratio] : j["codec_ratios"].items()) {
    SCOPED_TRACE(codec);
    EXPECT_GT(ratio.get<double>(), 0.5);  // the SM half is stored raw
    EXPECT_LT(ratio.get<double>(), 1.0);
  }
}

TEST_F(WeightsStatsJob, NoCheckpointIsAUsageError) {
  WeightsStatsArgs a;
  a.out = path("stats.json");
  EXPECT_THAT(error_of([&] { (void)weights_stats_output(a); }), HasSubstr("a checkpoint is required"));
  a.path = path("missing.safetensors");
  EXPECT_THAT(error_of([&] { (void)weights_stats_output(a); }), HasSubstr("missing.safetensors"));
}

}  // namespace
}  // namespace moesim::harness
