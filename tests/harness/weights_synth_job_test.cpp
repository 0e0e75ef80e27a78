// `moesim weights synth` called directly (harness/weights_synth_job.h): the model's expert tensors (the
// layers and experts asked for) or tensors of a given size, BF16 Gaussian of the std asked (per tensor role
// where overridden), labelled synthetic in the metadata, the same bytes for the same arguments; wrong
// combinations and malformed --std-per-tensor items are refused naming them, with nothing written.
#include "harness/weights_synth_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "base/error.h"
#include "exec/safetensors.h"
#include "tests/cli/cli_test_util.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using ::testing::HasSubstr;

// The sample standard deviation of a BF16 tensor.
double sample_std(const exec::TensorView& t) {
  double sum = 0, sum2 = 0;
  for (uint64_t i = 0; i < t.elements; ++i) {
    uint16_t h;
    std::memcpy(&h, t.data + 2 * i, 2);
    const uint32_t bits = uint32_t{h} << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    sum += v;
    sum2 += double{v} * v;
  }
  const double n = static_cast<double>(t.elements);
  return std::sqrt(sum2 / n - (sum / n) * (sum / n));
}

class WeightsSynthJob : public test::TestDir {
 protected:
  // tiny-moe's experts (256 x 128 SwiGLU): 1 layer x 2 experts.
  WeightsSynthArgs model_args(const std::string& out, uint64_t seed = 5) const {
    WeightsSynthArgs a;
    a.model = test::test_data("models/tiny-moe.json");
    a.layers = 1;
    a.experts = 2;
    a.seed = seed;
    a.out = path(out);
    return a;
  }
};

TEST_F(WeightsSynthJob, TheModelsExpertTensorsAreGaussianOfTheStdAsked) {
  WeightsSynthArgs a = model_args("w.safetensors");
  a.std = 0.02;
  a.std_per_tensor = "down_proj=0.005";
  weights_synth(a);
  const std::string bytes = test::read_text(a.out);
  const exec::SafetensorsImage img =
      exec::parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), a.out);
  ASSERT_EQ(img.tensors.size(), 1u * 2u * 3u);  // layers x experts x (gate, up, down)
  EXPECT_EQ(img.metadata["synthetic"], "true");
  EXPECT_EQ(img.metadata["seed"], "5");
  EXPECT_EQ(img.metadata["model"], "tiny-moe");
  EXPECT_EQ(img.metadata["std_per_tensor"], "down_proj=0.005");
  for (const exec::TensorView& t : img.tensors) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.dtype_name, "BF16");
    EXPECT_EQ(t.elements, 128u * 256u);
    // 32768 samples: the sample std is within 2% of the std asked (about 5 standard errors).
    const double want = t.name.find("down_proj") != std::string::npos ? 0.005 : 0.02;
    EXPECT_NEAR(sample_std(t), want, 0.02 * want);
  }
}

TEST_F(WeightsSynthJob, TheSameArgumentsWriteTheSameBytes) {
  weights_synth(model_args("a.safetensors"));
  weights_synth(model_args("b.safetensors"));
  weights_synth(model_args("c.safetensors", 6));
  EXPECT_EQ(test::read_text(path("a.safetensors")), test::read_text(path("b.safetensors")));
  EXPECT_NE(test::read_text(path("a.safetensors")), test::read_text(path("c.safetensors")));
}

TEST_F(WeightsSynthJob, ASizeGivesThatManyBf16Bytes) {
  WeightsSynthArgs a;
  a.size = "96KiB";
  a.out = path("s.safetensors");
  weights_synth(a);
  const std::string bytes = test::read_text(a.out);
  const exec::SafetensorsImage img =
      exec::parse_safetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), a.out);
  uint64_t data = 0;
  for (const exec::TensorView& t : img.tensors) {
    data += t.size_bytes;
    ASSERT_EQ(t.shape.size(), 2u);
    EXPECT_EQ(t.shape[1], 1024u);
  }
  EXPECT_EQ(data, 96u * 1024u);
  EXPECT_FALSE(img.metadata.contains("model"));
}

TEST_F(WeightsSynthJob, RefusesWrongCombinationsAndMalformedStdsWritingNothing) {
  const auto refused = [&](const WeightsSynthArgs& a) {
    const std::string e = error_of([&] { weights_synth(a); });
    EXPECT_FALSE(fs::exists(a.out)) << e;
    return e;
  };
  WeightsSynthArgs a = model_args("x.safetensors");
  a.size = "1MiB";
  EXPECT_THAT(refused(a), HasSubstr("give exactly one of --model and --size"));
  a.model.clear();
  a.size.clear();
  EXPECT_THAT(refused(a), HasSubstr("give exactly one of --model and --size"));
  a = model_args("x.safetensors");
  a.model.clear();
  a.size = "1MiB";
  EXPECT_THAT(refused(a), HasSubstr("--layers and --experts go with --model, not --size"));
  a = model_args("x.safetensors");
  a.std_per_tensor = "down_proj";
  EXPECT_THAT(refused(a), HasSubstr("--std-per-tensor 'down_proj': expected name=std"));
  a.std_per_tensor = "o_proj=0.1";
  EXPECT_THAT(refused(a), HasSubstr("tensor name must be gate_proj, up_proj or down_proj"));
  a.std_per_tensor = "up_proj=0.01,gate_proj=-1";
  EXPECT_THAT(refused(a), HasSubstr("--std-per-tensor 'gate_proj=-1': std must be a positive number"));
  a.std_per_tensor = "up_proj=0.01x";
  EXPECT_THAT(refused(a), HasSubstr("std must be a positive number"));
}

}  // namespace
}  // namespace moesim::harness
