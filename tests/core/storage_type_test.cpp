// Storage types: bytes per tensor against the formats' definitions, block by hand (ggml's block structs, the
// OCP MX block, DeepSeek's 128 x 128 FP8 scales), the fallbacks llama.cpp takes, and the parser's errors.
#include "core/storage_type.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "core/model_spec.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using test::error_of;
using ::testing::HasSubstr;

uint64_t bytes(const char* type, std::vector<uint64_t> shape) {
  return parse_storage_type(type).bytes(shape);
}

// One block, written out field by field as ggml-common.h declares it.
TEST(StorageType, GgufBlocksHaveTheirStructSizes) {
  const uint64_t f16 = 2;
  EXPECT_EQ(bytes("q8_0", {32}), f16 + 32);                  // d + qs[32]
  EXPECT_EQ(bytes("q4_0", {32}), f16 + 16);                  // d + qs[16]
  EXPECT_EQ(bytes("q4_1", {32}), 2 * f16 + 16);              // d, m + qs[16]
  EXPECT_EQ(bytes("q5_0", {32}), f16 + 4 + 16);              // d + qh[4] + qs[16]
  EXPECT_EQ(bytes("q5_1", {32}), 2 * f16 + 4 + 16);          // d, m + qh[4] + qs[16]
  EXPECT_EQ(bytes("q2_k", {256}), 16 + 64 + 2 * f16);        // scales[16] + qs[64] + d, dmin
  EXPECT_EQ(bytes("q3_k", {256}), 32 + 64 + 12 + f16);       // hmask[32] + qs[64] + scales[12] + d
  EXPECT_EQ(bytes("q4_k", {256}), 2 * f16 + 12 + 128);       // d, dmin + scales[12] + qs[128]
  EXPECT_EQ(bytes("q5_k", {256}), 2 * f16 + 12 + 32 + 128);  // ... + qh[32] + qs[128]
  EXPECT_EQ(bytes("q6_k", {256}), 128 + 64 + 16 + f16);      // ql[128] + qh[64] + scales[16] + d
  EXPECT_EQ(bytes("iq4_xs", {256}), f16 + 2 + 4 + 128);      // d + scales_h + scales_l[4] + qs[128]
  EXPECT_EQ(bytes("iq4_nl", {32}), f16 + 16);
  EXPECT_EQ(bytes("q4_k", {256}), 144u);
  EXPECT_EQ(bytes("q8_0", {32}), 34u);
}

TEST(StorageType, MxfpFourIsSeventeenBytesPerThirtyTwo) {
  EXPECT_EQ(bytes("mxfp4", {32}), 16u + 1u);  // 32 E2M1 nibbles + one E8M0 scale
  // gpt-oss-120b's expert as the bundled trace's engine stored it: 13,219,200 bytes.
  EXPECT_EQ(bytes("mxfp4", {2880, 5760}) + bytes("mxfp4", {2880, 2880}), 13219200u);
}

TEST(StorageType, WholeTensorsAreRowsOfBlocks) {
  // Qwen3-30B-A3B's expert in Q4_K: 3 x 768 x 2048 elements, rows of 2048 = 8 blocks of 144 bytes.
  EXPECT_EQ(bytes("q4_k", {768, 2048}), 768u * 8 * 144);
  // The bundled Qwen3 trace records 2,654,208 bytes an expert in its Q4_K layers ...
  EXPECT_EQ(2 * bytes("q4_k", {768, 2048}) + bytes("q4_k", {2048, 768}), 2654208u);
  // ... and 3,059,712 where llama.cpp stored down_proj as Q6_K.
  EXPECT_EQ(2 * bytes("q4_k", {768, 2048}) + bytes("q6_k", {2048, 768}), 3059712u);
  EXPECT_THAT(
      error_of([] {
        (void)bytes("q4_k", {8, 704});
      }),
      HasSubstr("q4_k stores rows in blocks of 256 elements; a row of 704 is not a whole number of blocks"));
}

TEST(StorageType, FallbacksAreLlamaCppsAndReproduceTheGemmaTrace) {
  EXPECT_EQ(gguf_fallback(parse_storage_type("q4_k")).name(), "q5_0");
  EXPECT_EQ(gguf_fallback(parse_storage_type("q5_k")).name(), "q5_1");
  EXPECT_EQ(gguf_fallback(parse_storage_type("q6_k")).name(), "q8_0");
  EXPECT_EQ(gguf_fallback(parse_storage_type("q3_k")).name(), "iq4_nl");
  EXPECT_EQ(gguf_fallback(parse_storage_type("q8_0")).name(), "q8_0");
  // Gemma-4-26B-A4B's expert: gate_up [1408, 2816] in Q4_K; down [2816, 704] cannot be a k-quant (704 = 2.75
  // blocks) and falls back to Q8_0 (from Q6_K) or Q5_0 (from Q4_K): the trace's two sizes, 4,336,640 and
  // 3,593,216 bytes.
  EXPECT_EQ(bytes("q4_k", {1408, 2816}) + bytes("q8_0", {2816, 704}), 4336640u);
  EXPECT_EQ(bytes("q4_k", {1408, 2816}) + bytes("q5_0", {2816, 704}), 3593216u);
}

TEST(StorageType, ScaledIntegerAndFp8Formats) {
  // int4, group 128: half a byte an element + one f16 scale per 128 elements of a row.
  EXPECT_EQ(bytes("int4_g128", {4, 256}), 4u * 128 + 4 * 2 * 2);
  EXPECT_EQ(bytes("int8_g64", {2, 128}), 2u * 128 + 2 * 2 * 2);
  // FP8 with DeepSeek-V3's 128 x 128 block scales: one f32 per block; a partial block has its own scale.
  EXPECT_EQ(bytes("fp8_e4m3_b128", {2048, 7168}), 2048ull * 7168 + 16 * 56 * 4);
  EXPECT_EQ(bytes("fp8_e4m3_b128", {129, 128}), 129u * 128 + 2 * 1 * 4);
  EXPECT_EQ(bytes("fp8_e5m2", {10, 10}), 100u + 4);  // one per-tensor scale
  EXPECT_EQ(bytes("bf16", {3, 5}), 30u);
  EXPECT_EQ(bytes("f32", {3, 5}), 60u);
}

TEST(StorageType, NamesRoundTripAndBadNamesListTheTypes) {
  for (const char* n : {"bf16", "f16", "f32", "fp8_e4m3", "fp8_e5m2_b128", "int4_g128", "int8_g32", "mxfp4",
                        "q8_0", "q6_k", "q5_k", "q4_k", "q3_k", "q2_k", "iq4_xs", "iq2_xxs"})
    EXPECT_EQ(parse_storage_type(n).name(), n);
  EXPECT_EQ(parse_storage_type("Q4_K").name(), "q4_k");
  EXPECT_EQ(parse_storage_type("bfloat16").name(), "bf16");
  EXPECT_THAT(error_of([] { (void)parse_storage_type("q4_k_m"); }),
              HasSubstr("unknown storage type 'q4_k_m' (use one of: bf16, f16"));
  EXPECT_THROW((void)parse_storage_type("int4_g0"), Error);
  EXPECT_THROW((void)parse_storage_type("int4"), Error);
  EXPECT_NEAR(parse_storage_type("q4_k").bits_per_element(), 4.5, 1e-12);
  EXPECT_NEAR(parse_storage_type("mxfp4").bits_per_element(), 4.25, 1e-12);
}

// A model's bytes follow its types, its FLOPs its elements: the same routing on Q4_K weights moves 4.5/16 of
// the bytes and computes the same FLOPs.
TEST(StorageType, AModelsBytesFollowTheTypesAndFlopsTheElements) {
  Json j = load_model("qwen3-30b-a3b").raw;
  const ModelSpec bf16 = model_from_json(j, "m.json");
  j["weight_types"] = {{"experts", "q4_k"}, {"dense", "q8_0"}, {"embedding", "q4_k"}, {"lm_head", "q6_k"}};
  j["expert_tensors"][2]["type"] = {{"value", "q6_k"}, {"source", "llama.cpp's use_more_bits"}};
  const ModelSpec q = model_from_json(j, "m.json");
  EXPECT_EQ(q.bytes_per_expert(), 3059712u);
  EXPECT_EQ(q.expert_flops_per_token(), bf16.expert_flops_per_token());
  EXPECT_EQ(q.dense_elements_per_layer(), bf16.dense_elements_per_layer());
  EXPECT_EQ(q.dense_bytes_per_layer(), (18874368ull + 2048 * 128) / 32 * 34);
  EXPECT_EQ(q.embedding_bytes(), 151936ull * 2048 / 256 * 144);
  EXPECT_EQ(q.lm_head_bytes(), 151936ull * 2048 / 256 * 210);
  EXPECT_FALSE(q.all_16bit_weights());
  EXPECT_TRUE(bf16.all_16bit_weights());
  j["expert_tensors"][2]["type"] = "q4_k";
  j["expert_tensors"][2]["shape"] = Json::array({2048, 700});
  EXPECT_THAT(error_of([&] { (void)model_from_json(j, "m.json"); }),
              HasSubstr("m.json: expert_tensors[2].type: q4_k stores rows in blocks of 256 elements"));
  j["expert_tensors"][2]["type"] = "q4_k_m";
  EXPECT_THAT(error_of([&] { (void)model_from_json(j, "m.json"); }),
              HasSubstr("m.json: expert_tensors[2].type: unknown storage type 'q4_k_m'"));
}

}  // namespace
}  // namespace moesim
