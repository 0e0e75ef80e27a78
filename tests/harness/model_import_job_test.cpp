// moesim model import: the published config.json of each family (tests/data/hf-configs, SOURCE.md there)
// gives the model cards' total and active parameters, KV bytes per token by the formula, sourced fields, and
// the bundled presets' numbers; unknown families and bad options are refused naming what is wrong.
#include "harness/model_import_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "base/error.h"
#include "core/model_spec.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kDir = test::test_data("hf-configs/");

Json import(const std::string& file, const std::string& quant = "", const std::string& dtype = "") {
  ModelImportOptions o;
  o.config_path = kDir + file;
  o.quant = quant;
  o.dtype = dtype;
  return import_hf_config_file(o);
}

ModelSpec spec(const Json& m) {
  return model_from_json(m, "imported.json");
}

// A model card's figure is given to some precision: equal at it means within `units` of its last digit, and
// never looser than 0.5% where the card gives more digits. Totals hold to half a digit; the cards' active
// counts are rounded more loosely (Qwen3-30B-A3B counts 3.35B with its embedding table, the card says 3.3B;
// DeepSeek-V2-Lite 2.45B, the card 2.4B), so they are held to one.
void expect_card(uint64_t got, double card, double last_digit, const char* what, double units = 0.5) {
  const double tolerance = std::max(0.005 * card, units * last_digit);
  EXPECT_NEAR(static_cast<double>(got), card, tolerance)
      << what << ": " << static_cast<double>(got) / 1e9 << "B";
}

struct Card {
  const char* file;
  double total, total_digit;    // the card's total and its last digit's unit
  double active, active_digit;  // likewise; active counts the embedding table when embed_counted
  bool embed_counted;
  uint64_t kv_bytes_per_token;  // the formula, by hand (BF16 cache)
};

// Cards: gpt-oss (OpenAI's model card table: 20.91B / 3.61B, 116.83B / 5.13B, embedding not active),
// DeepSeek-V3 (671B main model, 37B activated), Qwen3 (30.5B / 3.3B, 235B / 22B; Qwen counts the embedding
// table active), Qwen3-Next-80B-A3B (80B, 3B), DeepSeek-V2-Lite (15.7B / 2.4B), Mixtral-8x7B (46.7B / 12.9B,
// embedding counted), Qwen1.5-MoE-A2.7B (14.3B / 2.7B, embedding counted).
const Card kCards[] = {
    {"gpt-oss-20b.json", 20.91e9, 0.01e9, 3.61e9, 0.01e9, false, 24ull * 2 * 8 * 64 * 2},
    {"deepseek-v3.json", 671e9, 1e9, 37e9, 1e9, false, 61ull * (512 + 64) * 2},
    {"qwen3-30b-a3b.json", 30.5e9, 0.1e9, 3.3e9, 0.1e9, true, 48ull * 2 * 4 * 128 * 2},
    {"qwen3-235b-a22b.json", 235e9, 1e9, 22e9, 1e9, true, 94ull * 2 * 4 * 128 * 2},
    // Qwen3-Next's "3B activated" is the loosest: 3.56B without the embedding table, 3.87B with it.
    {"qwen3-next-80b-a3b.json", 80e9, 1e9, 3e9, 1e9, false, 12ull * 2 * 2 * 256 * 2},
    {"deepseek-v2-lite.json", 15.7e9, 0.1e9, 2.4e9, 0.1e9, false, 27ull * (512 + 64) * 2},
    {"mixtral-8x7b-v0.1.json", 46.7e9, 0.1e9, 12.9e9, 0.1e9, true, 32ull * 2 * 8 * 128 * 2},
    {"qwen1.5-moe-a2.7b.json", 14.3e9, 0.1e9, 2.7e9, 0.1e9, true, 24ull * 2 * 16 * 128 * 2},
    // OLMoE-1B-7B (arXiv 2409.02060, and the model card: 6.9B total, 1.3B active; AllenAI counts the
    // embedding table); the 0125 release's config, the same shape as 0924's. MHA: 16 KV heads of 128.
    {"olmoe-1b-7b-0125-instruct.json", 6.9e9, 0.1e9, 1.3e9, 0.1e9, true, 16ull * 2 * 16 * 128 * 2},
    // Phi-3.5-MoE-instruct's card: 41.9B total ("16x3.8B"), 6.6B active with 2 experts (embedding counted:
    // 6.64B, within half a unit of the card's last digit, 0.6% above it). GQA: 8 KV heads of 128.
    {"phi-3.5-moe-instruct.json", 41.9e9, 0.1e9, 6.6e9, 0.1e9, true, 32ull * 2 * 8 * 128 * 2},
    // gpt-oss-120b: OpenAI's model card table, 116.83B total, 5.13B active (embedding not counted).
    {"gpt-oss-120b.json", 116.83e9, 0.01e9, 5.13e9, 0.01e9, false, 36ull * 2 * 8 * 64 * 2},
};

TEST(ModelImport, PublishedConfigsGiveTheModelCardsFigures) {
  for (const auto& c : kCards) {
    SCOPED_TRACE(c.file);
    const Json m = import(c.file);
    const ModelSpec s = spec(m);
    expect_card(s.total_params(), c.total, c.total_digit, "total");
    expect_card(s.active_params() + (c.embed_counted ? s.embedding_params() : 0), c.active, c.active_digit,
                "active", 1.0);
    EXPECT_EQ(s.kv_bytes_per_token(), c.kv_bytes_per_token);
    EXPECT_EQ(m["totals"]["kv_bytes_per_token"].get<uint64_t>(), c.kv_bytes_per_token);
    EXPECT_EQ(m["totals"]["total_params"].get<uint64_t>(), s.total_params());
  }
}

// DeepSeek-V3's README_WEIGHTS parameter table sums to 671,026,419,200 for the main model: the import is
// within the norms it leaves out (q_a/kv_a layer norms, the routers' correction biases).
TEST(ModelImport, DeepSeekV3MatchesItsParameterTable) {
  const ModelSpec s = spec(import("deepseek-v3.json"));
  EXPECT_NEAR(static_cast<double>(s.total_params()), 671026419200.0, 671026419200.0 * 1e-4);
  EXPECT_EQ(s.moe_layers, 58u);
  EXPECT_EQ(s.first_dense_layers, 3u);
  EXPECT_EQ(s.dense_intermediate_size, 18432u);
  EXPECT_EQ(s.attention_params_per_layer, 187105280u);  // the table's q_a + q_b + kv_a + kv_b + o
  // Shipped in FP8 with 128 x 128 block scales (its quantization_config): an expert is 3 x 2048 x 7168 bytes
  // plus one f32 per block.
  EXPECT_EQ(s.bytes_per_expert(), 3 * (2048ull * 7168 + 16 * 56 * 4));
}

TEST(ModelImport, GptOssShipsMxfp4ExpertsAndTheTracesSizes) {
  const Json m = import("gpt-oss-20b.json", "mxfp4");
  const ModelSpec s = spec(m);
  EXPECT_EQ(s.sliding_window_layers, 12u);
  EXPECT_EQ(s.sliding_window, 128u);
  // Weights 17 bytes per 32 (the bundled gpt-oss-120b trace's engine: 13,219,200 bytes an expert of the same
  // shape); the biases stay BF16.
  EXPECT_EQ(s.bytes_per_expert(), 13219200u + (5760 + 2880) * 2);
  EXPECT_EQ(m["weight_types"]["experts"]["value"], "mxfp4");
  EXPECT_THAT(m["weight_types"]["experts"]["source"].get<std::string>(), HasSubstr("--quant mxfp4"));
}

TEST(ModelImport, HybridInterleavedAndWrappedFamilies) {
  const ModelSpec next = spec(import("qwen3-next-80b-a3b.json"));
  EXPECT_EQ(next.linear_attention_layers, 36u);
  EXPECT_EQ(next.linear_attention_state_elements, 32ull * 128 * 128 + (2 * 2048 + 4096) * 4);
  EXPECT_EQ(next.shared_experts, 1u);
  EXPECT_EQ(next.kv_cache_bytes(1000),
            12ull * 1000 * 2 * 2 * 256 * 2 + 36 * next.linear_attention_state_elements * 2);
  const ModelSpec scout = spec(import("llama-4-scout-17b-16e.json"));  // text_config under a multimodal root
  EXPECT_EQ(scout.moe_layers, 48u);
  EXPECT_EQ(scout.routed_experts, 16u);
  EXPECT_EQ(scout.top_k, 1u);
  EXPECT_EQ(scout.shared_experts, 1u);
  EXPECT_EQ(scout.kv_bytes_per_token(), 48ull * 2 * 8 * 128 * 2);
  // Meta's card: 17B active (the embedding table counted), 109B total with the vision encoder this leaves
  // out.
  expect_card(scout.active_params() + scout.embedding_params(), 17e9, 1e9, "active");
  EXPECT_GT(scout.total_params(), 107e9);
  EXPECT_LT(scout.total_params(), 109e9);
  const ModelSpec glm = spec(import("glm-4.5-air.json"));
  EXPECT_EQ(glm.moe_layers, 45u);
  EXPECT_EQ(glm.first_dense_layers, 1u);
  EXPECT_EQ(glm.kv_bytes_per_token(), 46ull * 2 * 8 * 128 * 2);
  // Z.ai's card: 106B total (the import counts 106.9B: within 1%, not 0.5%).
  EXPECT_NEAR(static_cast<double>(glm.total_params()), 106e9, 0.01 * 106e9);
}

TEST(ModelImport, EveryNumberNamesItsSource) {
  const Json m = import("qwen3-30b-a3b.json");
  for (const auto& [k, v] : m.items()) {
    if (!v.is_object() || !v.contains("value")) continue;
    SCOPED_TRACE(k);
    ASSERT_TRUE(v.contains("source"));
    const std::string s = v["source"].get<std::string>();
    EXPECT_TRUE(s.find("qwen3-30b-a3b.json") != std::string::npos) << s;
  }
  EXPECT_THAT(m["routed_experts"]["source"].get<std::string>(), HasSubstr(": num_experts"));
  EXPECT_THAT(m["attention_params_per_layer"]["source"].get<std::string>(), HasSubstr("computed from"));
}

// The bundled presets were written from the same configs: the import reproduces their numbers.
TEST(ModelImport, ReproducesTheBundledPresets) {
  const std::pair<const char*, const char*> pairs[] = {{"qwen3-30b-a3b.json", "qwen3-30b-a3b"},
                                                       {"mixtral-8x7b-v0.1.json", "mixtral-8x7b"},
                                                       {"deepseek-v2-lite.json", "deepseek-v2-lite"},
                                                       {"qwen1.5-moe-a2.7b.json", "qwen1.5-moe-a2.7b"}};
  for (const auto& [file, preset] : pairs) {
    SCOPED_TRACE(preset);
    const ModelSpec a = spec(import(file)), b = load_model(preset);
    EXPECT_EQ(a.bytes_per_expert(), b.bytes_per_expert());
    EXPECT_EQ(a.dense_bytes_per_layer(), b.dense_bytes_per_layer());
    EXPECT_EQ(a.total_params(), b.total_params());
    EXPECT_EQ(a.kv_bytes_per_token(), b.kv_bytes_per_token());
  }
}

// The preamble of a bundled route trace: each layer's expert and dense bytes, as the engine read them from
// its GGUF file.
std::vector<std::pair<uint64_t, uint64_t>> trace_sizes(const std::string& name) {
  std::ifstream f(test::bundled_data("traces/") + name);
  std::vector<std::pair<uint64_t, uint64_t>> sizes;
  std::string line;
  while (std::getline(f, line)) {
    unsigned long long layer = 0, e = 0, d = 0;
    if (std::sscanf(line.c_str(), "# layer=%llu expert_bytes=%llu dense_bytes=%llu", &layer, &e, &d) == 3)
      sizes.emplace_back(e, d);
  }
  return sizes;
}

// llama.cpp's Q4_K_M raises ffn_down_exps and attn_v to Q6_K in the layers use_more_bits picks
// (llama-quant.cpp): the import writes them per layer, and every layer's expert and dense bytes equal the
// bundled Qwen3-30B-A3B-Q4_K_M trace's preamble, router and norms in f32 included.
TEST(ModelImport, Q4KMReproducesTheQwen3TracePerLayer) {
  const Json m = import("qwen3-30b-a3b.json", "q4_k_m");
  const ModelSpec s = spec(m);
  const auto sizes = trace_sizes("qwen3-30b-a3b.route.csv");
  ASSERT_EQ(sizes.size(), 48u);
  ASSERT_EQ(s.moe_layers, 48u);
  int raised = 0;
  for (uint32_t l = 0; l < 48; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(s.bytes_per_expert(l), sizes[l].first);
    EXPECT_EQ(s.dense_bytes_per_layer(l), sizes[l].second);
    // use_more_bits(l, 48): l < 6, l >= 42, (l - 6) % 3 == 2.
    const bool more = l < 6 || l >= 42 || (l - 6) % 3 == 2;
    raised += more;
    // Hand-computed: gate and up Q4_K (144 B / 256), down Q6_K (210 B / 256) in the raised layers.
    EXPECT_EQ(s.bytes_per_expert(l),
              2ull * 768 * 2048 / 256 * 144 + 2048ull * 768 / 256 * (more ? 210 : 144));
  }
  EXPECT_EQ(raised, 24);
  // The raised layers' entry names its source.
  ASSERT_TRUE(m.contains("layer_overrides"));
  EXPECT_THAT(m["layer_overrides"][0]["source"].get<std::string>(), HasSubstr("llama_tensor_get_type_impl"));
  EXPECT_EQ(m["layer_overrides"][0]["experts"]["down_proj"], "q6_k");
  EXPECT_EQ(m["layer_overrides"][0]["attention"]["v"], "q6_k");
  // Q5_K_M raises the same layers from Q5_K (176 B / 256).
  const ModelSpec q5 = spec(import("qwen3-30b-a3b.json", "q5_k_m"));
  EXPECT_EQ(q5.bytes_per_expert(0), 2ull * 768 * 2048 / 256 * 176 + 2048ull * 768 / 256 * 210);
  EXPECT_EQ(q5.bytes_per_expert(6), 3ull * 768 * 2048 / 256 * 176);
}

// gpt-oss-120b's bundled trace (a Q4_K_M GGUF that keeps the shipped MXFP4 experts, which llama.cpp's
// Q4_K_M rules would not choose): its expert bytes are the MXFP4 import's weight tensors (the GGUF counts the
// experts' f32 biases with the dense weights), and the layers where its dense bytes are larger are
// llama.cpp's attn_v raises: Q6_K, which rows of 2880 cannot hold, falls back to Q8_0 over the base Q4_K's
// Q5_0, 1,474,560 elements x (34 - 22) / 32 = 552,960 bytes more, in every layer use_more_bits(i, 36) picks.
TEST(ModelImport, GptOss120bTraceExpertBytesAndItsAttnVRaises) {
  const auto sizes = trace_sizes("gpt-oss-120b.route.csv");
  ASSERT_EQ(sizes.size(), 36u);
  const ModelSpec mx = spec(import("gpt-oss-120b.json", "mxfp4"));
  uint64_t weights = 0;
  for (const auto& t : mx.expert_tensors)
    if (t.shape.size() == 2) weights += mx.tensor_type(t).bytes(t.shape);
  const ModelSpec q = spec(import("gpt-oss-120b.json", "q4_k_m"));
  const uint64_t base_trace = std::min_element(sizes.begin(), sizes.end(), [](auto a, auto b) {
                                return a.second < b.second;
                              })->second;
  for (uint32_t l = 0; l < 36; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(weights, sizes[l].first);
    EXPECT_EQ(q.dense_bytes_per_layer(l) - q.dense_bytes_per_layer(7),
              sizes[l].second - base_trace);  // layer 7 is not raised
  }
  EXPECT_EQ(q.dense_bytes_per_layer(0) - q.dense_bytes_per_layer(7), 552960u);
}

// Gemma-4-26B-A4B's bundled trace: the two expert sizes are the import's (gate_up Q4_K; down, rows of 704,
// Q5_0 for Q4_K and Q8_0 for a raised Q6_K), but the file raises ffn_down in layers 0-6 and every third from
// 9, use_more_bits(i, 60), where llama.cpp's rule over its 30 layers picks 0-2, every third from 5, and 26-29
// (llama-quant.cpp sets n_layer to the model's layer count in every version found): 12 of the 30 layers
// agree (5 raised in both, 7 in neither), and the test pins that, not the file's rule.
TEST(ModelImport, Gemma4TraceExpertSizesAndWhereTheyDiffer) {
  const auto sizes = trace_sizes("gemma-4-26b-a4b.route.csv");
  ASSERT_EQ(sizes.size(), 30u);
  const ModelSpec g = spec(import("gemma-4-26b-a4b.json", "q4_k_m"));
  int agree = 0;
  for (uint32_t l = 0; l < 30; ++l) {
    SCOPED_TRACE(l);
    const bool ours = l < 3 || l >= 26 || (l - 3) % 3 == 2, file = l < 7 || (l - 7) % 3 == 2;
    EXPECT_EQ(g.bytes_per_expert(l), ours ? 4336640u : 3593216u);
    EXPECT_EQ(sizes[l].first, file ? 4336640u : 3593216u);
    agree += g.bytes_per_expert(l) == sizes[l].first;
  }
  EXPECT_EQ(agree, 12);
}

TEST(ModelImport, QuantMixesWriteTheirTypesOut) {
  const Json m = import("qwen3-30b-a3b.json", "q4_k_m");
  const ModelSpec s = spec(m);
  EXPECT_EQ(s.bytes_per_expert(6), 2654208u);  // the bundled trace's Q4_K layers
  EXPECT_EQ(s.lm_head_bytes(), 151936ull * 2048 / 256 * 210);
  EXPECT_EQ(m["quantization"], "q4_k_m");
  // --dtype puts every weight in one type.
  EXPECT_EQ(spec(import("qwen3-30b-a3b.json", "", "q8_0")).bytes_per_expert(), 3ull * 768 * 2048 / 32 * 34);
  EXPECT_EQ(spec(import("qwen3-30b-a3b.json", "", "f16")).dtype, DType::F16);
}

TEST(ModelImport, RefusalsNameWhatIsWrong) {
  Json c = load_json_file(kDir + "qwen3-30b-a3b.json");
  c["model_type"] = "jamba";
  ModelImportOptions o;
  o.config_path = "c.json";
  EXPECT_THAT(error_of([&] { (void)import_hf_config(c, o); }),
              HasSubstr("c.json: model_type: moesim model import does not know the family 'jamba'"));
  EXPECT_THAT(error_of([&] { (void)import_hf_config(c, o); }), HasSubstr("num_experts_per_tok"));
  c = load_json_file(kDir + "qwen3-30b-a3b.json");
  c.erase("moe_intermediate_size");
  EXPECT_THAT(error_of([&] { (void)import_hf_config(c, o); }), HasSubstr("c.json: moe_intermediate_size"));
  o.quant = "q4_k_x";
  EXPECT_THAT(error_of([&] { (void)import(("qwen3-30b-a3b.json"), "q4_k_x"); }),
              HasSubstr("--quant: unknown mix 'q4_k_x' (use one of: mxfp4, fp8"));
  EXPECT_THAT(error_of([&] { (void)import("qwen3-30b-a3b.json", "q4_k_m", "bf16"); }),
              HasSubstr("give --dtype or --quant, not both"));
  EXPECT_THAT(error_of([&] { (void)import("qwen3-30b-a3b.json", "", "int3"); }),
              HasSubstr("--dtype: unknown storage type 'int3'"));
}

}  // namespace
}  // namespace moesim::harness
