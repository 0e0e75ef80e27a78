// `moesim store info` called directly (harness/store_info_job.h) on a store packed from synthetic weights
// (tests/harness/synth_store.h: 6 tensors of 256 x 128): the BF16 bytes are the tensors', the
// SM-chunks one byte per element (docs/store-format.md), the ratios the stored bytes over BF16 overall, per
// codec and per tensor; what is not a store is refused naming the file.
#include "harness/store_info_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/cli/cli_test_util.h"
#include "tests/error_of.h"
#include "tests/harness/synth_store.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using ::testing::HasSubstr;

constexpr uint64_t kElements = test::kSynthStoreElements;

using StoreInfoJob = test::SynthStoreTest;

TEST_F(StoreInfoJob, SizesAndRatiosAreTheTensorsOverallPerCodecAndPerTensor) {
  StoreInfoArgs a;
  a.store = path("s.store");
  a.json = true;
  a.out = path("info.json");
  write_file_atomic(a.out, store_info_output(a));
  const Json j = Json::parse(test::read_text(a.out));
  EXPECT_EQ(j["header"]["command"], "store info");
  EXPECT_EQ(j["tensors"], 6);
  EXPECT_EQ(j["layers"], 1);
  EXPECT_EQ(j["bf16_bytes"], 6 * kElements * 2);
  EXPECT_EQ(j["sm_bytes"], 6 * kElements);
  const uint64_t e = j["e_bytes"].get<uint64_t>();
  EXPECT_GT(e, 0u);
  EXPECT_EQ(j["stored_bytes"], 6 * kElements + e);
  EXPECT_DOUBLE_EQ(j["ratio"].get<double>(), static_cast<double>(6 * kElements + e) / (6 * kElements * 2));
  EXPECT_DOUBLE_EQ(j["exponent_ratio"].get<double>(), static_cast<double>(e) / (6 * kElements));
  // Gaussian weights of std 0.02 use few exponents: zstd stores them in well under their byte each.
  EXPECT_LT(j["exponent_ratio"].get<double>(), 0.5);
  EXPECT_LE(j["file_size"].get<uint64_t>(), fs::file_size(a.store));
  ASSERT_EQ(j["per_codec"].size(), 1u);
  EXPECT_EQ(j["per_codec"][0]["tensors"], 6);
  EXPECT_EQ(j["per_codec"][0]["stored_bytes"], j["stored_bytes"]);
  ASSERT_EQ(j["per_tensor"].size(), 6u);
  uint64_t e_sum = 0;
  for (const Json& t : j["per_tensor"]) {
    EXPECT_EQ(t["layer"], 0);
    EXPECT_EQ(t["shards"], 2);
    EXPECT_EQ(t["bf16_bytes"], kElements * 2);
    EXPECT_EQ(t["sm_bytes"], kElements);
    e_sum += t["e_bytes"].get<uint64_t>();
  }
  EXPECT_EQ(e_sum, e);
}

TEST_F(StoreInfoJob, TheTextSaysTheSameSizes) {
  StoreInfoArgs a;
  a.store = path("s.store");
  a.out = path("info.txt");
  write_file_atomic(a.out, store_info_output(a));
  const std::string text = test::read_text(a.out);
  EXPECT_THAT(text, HasSubstr("6 tensors in 1 layers"));
  EXPECT_THAT(text, HasSubstr("BF16 384.00 KiB -> stored"));
  EXPECT_THAT(text, HasSubstr("SM 192.00 KiB"));
  EXPECT_THAT(text, HasSubstr("per tensor:"));
}

TEST_F(StoreInfoJob, WhatIsNotAStoreIsRefusedNamingIt) {
  StoreInfoArgs a;
  a.store = path("w.safetensors");
  a.out = path("info.json");
  EXPECT_THAT(error_of([&] { (void)store_info_output(a); }), HasSubstr("w.safetensors"));
  a.store = path("missing.store");
  EXPECT_THAT(error_of([&] { (void)store_info_output(a); }), HasSubstr("missing.store"));
  EXPECT_FALSE(fs::exists(a.out));
}

}  // namespace
}  // namespace moesim::harness
