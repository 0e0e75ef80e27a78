// `moesim store verify` called directly (harness/store_verify_job.h) on a store packed from synthetic weights
// (tests/harness/synth_store.h): the store recovers its source bit for bit; other weights, a source tensor
// the store lacks, and a damaged chunk are each an Error naming the store and the tensor (and the chunk).
#include "harness/store_verify_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "exec/store_reader.h"
#include "tests/cli/cli_test_util.h"
#include "tests/error_of.h"
#include "tests/harness/synth_store.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using ::testing::HasSubstr;

class StoreVerifyJob : public test::SynthStoreTest {
 protected:
  StoreVerifyArgs args(const std::string& weights) const {
    StoreVerifyArgs a;
    a.store = path("s.store");
    a.weights = path(weights);
    a.threads = 1;
    a.json = true;
    a.out = path("verify.json");
    return a;
  }
};

TEST_F(StoreVerifyJob, TheStoreRecoversItsSourceBitForBit) {
  const StoreVerifyArgs a = args("w.safetensors");
  write_file_atomic(a.out, store_verify_output(a));
  const Json j = Json::parse(test::read_text(a.out));
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["tensors"], test::kSynthStoreTensors);
  EXPECT_EQ(j["bf16_bytes"], test::kSynthStoreTensors * test::kSynthStoreElements * 2);
  EXPECT_EQ(j["header"]["command"], "store verify");
}

TEST_F(StoreVerifyJob, OtherWeightsDifferNamingTheTensorAndTheElement) {
  test::make_synth_store(path("other.safetensors"), "", 2);  // same shape, another seed
  const std::string e = error_of([&] { (void)store_verify_output(args("other.safetensors")); });
  EXPECT_THAT(e, HasSubstr(path("s.store") + ": layer 0 expert 0 tensor "));
  EXPECT_THAT(e, HasSubstr("differs from " + path("other.safetensors") + " at element "));
  EXPECT_FALSE(fs::exists(path("verify.json")));
}

TEST_F(StoreVerifyJob, ASourceTensorTheStoreLacksIsNamed) {
  WeightsSynthArgs w;
  w.model = test::test_data("models/tiny-moe.json");
  w.layers = 1;
  w.experts = 3;
  w.out = path("more.safetensors");
  weights_synth(w);
  EXPECT_THAT(error_of([&] { (void)store_verify_output(args("more.safetensors")); }),
              HasSubstr("is missing from the store"));
}

TEST_F(StoreVerifyJob, ADamagedChunkIsNamed) {
  uint64_t at = 0;
  {
    const exec::StoreReader r(path("s.store"));
    ASSERT_FALSE(r.entries().empty());
    at = r.entries()[0].sm.offset + 17;
  }
  {
    std::fstream f(path("s.store"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x40));
  }
  const std::string e = error_of([&] { (void)store_verify_output(args("w.safetensors")); });
  EXPECT_THAT(e, HasSubstr(path("s.store")));
  EXPECT_THAT(e, HasSubstr("layer 0 expert 0 tensor "));
  EXPECT_THAT(e, HasSubstr("SM-chunk"));
}

}  // namespace
}  // namespace moesim::harness
