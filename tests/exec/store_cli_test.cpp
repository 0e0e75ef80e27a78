// End-to-end tests of `moesim pack`, `store info`, `store verify`, `weights stats`, `weights synth` through
// the built binary (MOESIM_CLI_PATH).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "base/json_io.h"
#include "exec/safetensors.h"
#include "tests/exec/exec_test_util.h"
#include "tests/fixtures.h"

namespace moesim::exec {
namespace {

using ::testing::HasSubstr;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

const std::string kFixture = test::test_data("weights/faceres-subset.safetensors");

struct Result {
  int status;
  std::string out;
};

Result moesim(const std::string& args) {
  const std::string cmd = std::string(MOESIM_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  Result r{-1, ""};
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(StoreCli, PackInfoVerifyAndDetectAModifiedSource) {
  TempDir dir("cli_store");
  const std::string store = dir.file("f.store");
  auto r = moesim("pack --weights " + kFixture + " --all-tensors --codec zstd:3 --shards 3 --threads 2 -o " +
                  store);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("packed 8 tensors"));

  r = moesim("store info " + store + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const Json j = Json::parse(r.out);
  for (const char* k :
       {"header", "bf16_bytes", "stored_bytes", "ratio", "per_codec", "per_tensor", "file_size"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["bf16_bytes"], 391876u * 2);
  EXPECT_DOUBLE_EQ(j["ratio"].get<double>(), j["stored_bytes"].get<double>() / j["bf16_bytes"].get<double>());
  EXPECT_EQ(j["per_tensor"].size(), 8u);
  bool has_zstd = false;  // tiny tensors may fall back to raw, the rest are zstd:3
  for (const auto& c : j["per_codec"]) has_zstd |= c["codec"] == "zstd:3";
  EXPECT_TRUE(has_zstd);
  EXPECT_EQ(moesim("store info " + store).status, 0);

  r = moesim("store verify " + store + " --weights " + kFixture);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("verified 8 tensors"));
  r = moesim("store verify " + store + " --weights " + kFixture + " --direct-io --threads 3");
  EXPECT_EQ(r.status, 0) << r.out;

  // Change one value of one tensor in a copy of the source: verify must fail naming that tensor.
  auto bytes = read_bytes(kFixture);
  const SafetensorsImage img = parse_safetensors(bytes.data(), bytes.size(), kFixture);
  const TensorView& t = img.tensors[3];
  bytes[t.file_offset + 4 * 10 + 3] ^= 0x01;  // sign/exponent byte of element 10: survives the BF16 cast
  const std::string modified = dir.file("modified.safetensors");
  write_bytes(modified, bytes);
  r = moesim("store verify " + store + " --weights " + modified);
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("'" + t.name + "'"));
  EXPECT_THAT(r.out, HasSubstr("element 10"));
}

TEST(StoreCli, PackBytesDoNotDependOnThreadsAndErrorsLeaveNoFile) {
  TempDir dir("cli_threads");
  ASSERT_EQ(moesim("pack --weights " + kFixture +
                   " --all-tensors --codec lz4hc:12 --shards 4 --threads 1 -o " + dir.file("a.store"))
                .status,
            0);
  ASSERT_EQ(moesim("pack --weights " + kFixture +
                   " --all-tensors --codec lz4hc:12 --shards 4 --threads 4 -o " + dir.file("b.store"))
                .status,
            0);
  EXPECT_EQ(read_bytes(dir.file("a.store")), read_bytes(dir.file("b.store")));
  auto r = moesim("pack --weights " + kFixture + " --all-tensors --codec brotli -o " + dir.file("c.store"));
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.store")));
  r = moesim("pack --weights " + kFixture + " --codec lz4 -o " + dir.file("c.store"));  // no experts in it
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("--all-tensors"));
  r = moesim("store info " + kFixture);  // not a store
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("magic"));
}

TEST(StoreCli, RawBf16FilePacksOnShardThreadsAndVerifiesWithTheStoredShape) {
  TempDir dir("cli_raw");
  // The BF16 values of a real tensor: the F32 data of feats/kernel, upper halves (truncation is fine here).
  const auto src = read_bytes(kFixture);
  const SafetensorsImage img = parse_safetensors(src.data(), src.size(), kFixture);
  const TensorView& t = img.tensors[0];
  std::vector<uint8_t> raw(t.elements * 2);
  for (uint64_t i = 0; i < t.elements; ++i) {
    raw[2 * i] = t.data[4 * i + 2];
    raw[2 * i + 1] = t.data[4 * i + 3];
  }
  const std::string w = dir.file("w.bf16");
  write_bytes(w, raw);
  const std::string shape = std::to_string(t.shape[0]) + "x" + std::to_string(t.shape[1]);
  for (const char* threads : {"1", "4"}) {
    auto r =
        moesim("pack --weights " + w + " --raw-shape " + shape + " --codec zstd:3 --shards 4 --threads " +
               threads + " -o " + dir.file(std::string("r") + threads + ".store"));
    ASSERT_EQ(r.status, 0) << r.out;
  }
  EXPECT_EQ(read_bytes(dir.file("r1.store")), read_bytes(dir.file("r4.store")));
  auto r = moesim("store verify " + dir.file("r4.store") + " --weights " + w);  // shape read from the store
  EXPECT_EQ(r.status, 0) << r.out;
  r = moesim("pack --weights " + w + " --raw-shape 3x3 -o " + dir.file("bad.store"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("a BF16 tensor of that shape is 18"));
}

TEST(StoreCli, SynthPackVerifyAndStats) {
  TempDir dir("cli_synth");
  const std::string w = dir.file("s.safetensors");
  const std::string args =
      "weights synth --model olmoe-1b-7b --layers 1 --experts 1 --std 0.02 "
      "--std-per-tensor down_proj=0.01 --seed 7 -o ";
  auto r = moesim(args + w);
  ASSERT_EQ(r.status, 0) << r.out;
  ASSERT_EQ(moesim(args + dir.file("t.safetensors")).status, 0);
  EXPECT_EQ(read_bytes(w), read_bytes(dir.file("t.safetensors")));  // same seed, same bytes
  r = moesim("pack --weights " + w + " --codec lz4 --shards 4 -o " + dir.file("s.store"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("packed 3 tensors (hf-mlp-experts, 1 layers)"));
  EXPECT_EQ(moesim("store verify " + dir.file("s.store") + " --weights " + w).status, 0);

  const std::string small = dir.file("small.safetensors");
  ASSERT_EQ(moesim("weights synth --size 1536KiB --std 0.02 --seed 3 -o " + small).status, 0);
  r = moesim("weights stats " + small + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const Json j = Json::parse(r.out);
  for (const char* k :
       {"header", "elements", "entropy_bits", "bound_ratio", "distinct_exponents", "codec_ratios"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["elements"], 768u * 1024);
  // Gaussian weights: exponent entropy near 2.6 bits like real LLM experts (ZipMoE Fig. 2).
  EXPECT_GT(j["entropy_bits"].get<double>(), 2.3);
  EXPECT_LT(j["entropy_bits"].get<double>(), 2.8);
  for (const char* c : {"zstd:3", "zstd:19", "lz4", "lz4hc:12"})
    EXPECT_TRUE(j["codec_ratios"].contains(c)) << c;
  EXPECT_NE(moesim("weights synth --size 1000 --std 0.02 --seed 1 -o " + dir.file("x.safetensors")).status,
            0);
  EXPECT_NE(moesim("weights synth --model gpt-oss-120b --layers 1 --experts 1 --seed 1 -o " +
                   dir.file("x.safetensors"))
                .status,
            0);
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.safetensors")));
}

// The per-tensor exponent histograms (the rows of a Fig. 2-style heat map) of the real fixture: 256 bins
// each, each summing to its tensor's elements, and together to the whole-file histogram.
TEST(StoreCli, WeightsStatsPerTensorHistograms) {
  const auto r = moesim("weights stats " + kFixture + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const Json j = Json::parse(r.out);
  const auto whole = j["exponent_histogram"].get<std::vector<uint64_t>>();
  ASSERT_EQ(whole.size(), 256u);
  std::vector<uint64_t> sum(256, 0);
  ASSERT_EQ(j["per_tensor"].size(), 8u);
  for (const auto& t : j["per_tensor"]) {
    const auto h = t["exponent_histogram"].get<std::vector<uint64_t>>();
    ASSERT_EQ(h.size(), 256u) << t["name"];
    uint64_t n = 0, distinct = 0;
    for (size_t e = 0; e < 256; ++e) {
      n += h[e];
      distinct += h[e] > 0;
      sum[e] += h[e];
    }
    EXPECT_EQ(n, t["elements"].get<uint64_t>()) << t["name"];
    EXPECT_EQ(distinct, t["distinct_exponents"].get<uint64_t>()) << t["name"];
  }
  EXPECT_EQ(sum, whole);
}

}  // namespace
}  // namespace moesim::exec
