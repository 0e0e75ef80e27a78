// Model presets: bytes per expert of each bundled preset against hand arithmetic (BF16 = 2 bytes per element;
// FP8 and MXFP4 by their blocks; expert tensors from each model's config.json), their shapes, and the
// loader's errors.
#include "core/model_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "base/json_io.h"
#include "core/data_dir.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using test::error_of;

struct Preset {
  const char* name;
  uint32_t moe_layers, experts, top_k;
  uint64_t bytes_per_expert;  // written out as arithmetic below
  uint64_t elements = 0;      // of an expert, where its type is not BF16 (else bytes / 2)
};

const Preset kPresets[] = {
    // gate, up: [1408, 2048]; down: [2048, 1408] => 3 * 2048 * 1408 * 2 bytes
    {"deepseek-v2-lite", 26, 64, 6, 3ull * 2048 * 1408 * 2},  // 17,301,504
    // FP8 e4m3 with one f32 scale per 128 x 128 block: 3 x (2048 x 7168 + 16 x 56 x 4)
    {"deepseek-v3", 58, 256, 8, 3 * (2048ull * 7168 + 16 * 56 * 4), 3ull * 2048 * 7168},
    // gate_up [1408, 2816] + down [2816, 704]
    {"gemma-4-26b-a4b", 30, 128, 8, (1408ull * 2816 + 2816ull * 704) * 2},
    {"glm-4.5-air", 45, 128, 8, 3ull * 4096 * 1408 * 2},
    // gate_up [2880, 5760] + bias [5760] + down [2880, 2880] + bias [2880]
    {"gpt-oss-120b", 36, 128, 4, (2880ull * 5760 + 5760 + 2880ull * 2880 + 2880) * 2},  // 49,783,680
    // MXFP4 weights, 17 bytes per 32, BF16 biases
    {"gpt-oss-20b", 24, 32, 4, (2880ull * 5760 + 2880ull * 2880) / 32 * 17 + (5760 + 2880) * 2,
     2880ull * 5760 + 5760 + 2880ull * 2880 + 2880},
    // gate_up [5120, 16384] + down [8192, 5120]
    {"llama-4-scout-17b-16e", 48, 16, 1, (5120ull * 16384 + 8192ull * 5120) * 2},
    {"mixtral-8x7b", 32, 8, 2, 3ull * 4096 * 14336 * 2},       // 352,321,536
    {"olmoe-1b-7b", 16, 64, 8, 3ull * 2048 * 1024 * 2},        // 12,582,912
    {"phi-3.5-moe", 32, 16, 2, 3ull * 4096 * 6400 * 2},        // 157,286,400
    {"qwen1.5-moe-a2.7b", 24, 60, 4, 3ull * 2048 * 1408 * 2},  // 17,301,504
    {"qwen3-235b-a22b", 94, 128, 8, 3ull * 4096 * 1536 * 2},
    {"qwen3-30b-a3b", 48, 128, 8, 3ull * 2048 * 768 * 2},  // 9,437,184
    // the exec-validation scale model: Qwen3's counts, hidden 2048/4 and intermediate 768/4
    {"qwen3-30b-a3b-w4", 48, 128, 8, 3ull * 512 * 192 * 2},  // 589,824
    {"qwen3-next-80b-a3b", 48, 512, 10, 3ull * 2048 * 512 * 2},
    {"switch-large-128", 24, 128, 1, 2ull * 1024 * 4096 * 2},  // 16,777,216
};

TEST(ModelSpec, BytesPerExpertOfEveryPreset) {
  EXPECT_EQ(kPresets[0].bytes_per_expert, 17301504u);
  for (const auto& p : kPresets) {
    SCOPED_TRACE(p.name);
    const ModelSpec m = load_model(p.name);
    EXPECT_EQ(m.name, p.name);
    EXPECT_EQ(m.bytes_per_expert(), p.bytes_per_expert);
    EXPECT_EQ(m.moe_layers, p.moe_layers);
    EXPECT_EQ(m.routed_experts, p.experts);
    EXPECT_EQ(m.top_k, p.top_k);
    EXPECT_EQ(m.dtype, DType::BF16);
    const uint64_t elements = p.elements ? p.elements : p.bytes_per_expert / 2;
    EXPECT_EQ(m.expert_flops_per_token(), 2.0 * static_cast<double>(elements));
  }
}

TEST(ModelSpec, EveryBundledPresetIsCovered) {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  EXPECT_EQ(list_presets("models"), names);
}

// KV per token against the formula, by hand: GQA 2 x kv_heads x head_dim per layer; MLA kv_lora_rank +
// qk_rope_head_dim per layer; x layers x 2 bytes (BF16 KV).
TEST(ModelSpec, KvBytesPerTokenFollowTheFormula) {
  EXPECT_EQ(load_model("qwen3-30b-a3b").kv_bytes_per_token(), 48ull * 2 * 4 * 128 * 2);  // 98,304
  EXPECT_EQ(load_model("mixtral-8x7b").kv_bytes_per_token(), 32ull * 2 * 8 * 128 * 2);   // 131,072
  EXPECT_EQ(load_model("deepseek-v2-lite").kv_bytes_per_token(), 27ull * (512 + 64) * 2);
  EXPECT_EQ(load_model("deepseek-v2-lite").kv_bytes_per_token(1), 27ull * (512 + 64));
  // Encoder-decoder: the decoder's 24 layers hold self-attention KV.
  EXPECT_EQ(load_model("switch-large-128").kv_bytes_per_token(), 24ull * 2 * 16 * 64 * 2);
}

TEST(ModelSpec, KvCacheCapsSlidingLayersAtTheWindow) {
  const ModelSpec m = load_model("gpt-oss-120b");  // 36 layers, 18 of them sliding at 128 tokens
  const uint64_t per = 2ull * 8 * 64 * 2;          // bytes per token per layer
  EXPECT_EQ(m.kv_bytes_per_token(), 36 * per);
  EXPECT_EQ(m.kv_cache_bytes(100), 36 * 100 * per);  // inside the window every layer grows
  EXPECT_EQ(m.kv_cache_bytes(4096), 18 * 4096 * per + 18 * 128 * per);
  // A linear-attention layer holds its fixed state whatever the context.
  ModelSpec h = load_model("qwen3-30b-a3b");
  h.linear_attention_layers = 36;
  h.linear_attention_state_elements = 1000;
  EXPECT_EQ(h.kv_bytes_per_token(), 12ull * 2 * 4 * 128 * 2);
  EXPECT_EQ(h.kv_cache_bytes(10), 12ull * 10 * 2 * 4 * 128 * 2 + 36ull * 1000 * 2);
  EXPECT_EQ(h.kv_cache_bytes(0), 36ull * 1000 * 2);
}

// Totals by hand from the config (Qwen3-30B-A3B: 30.5B total, 3.3B active on its model card); the embedding
// table is not active (a token reads one row of it).
TEST(ModelSpec, TotalAndActiveParamsAddUpEveryWeight) {
  const ModelSpec m = load_model("qwen3-30b-a3b");
  const uint64_t expert = 3ull * 2048 * 768, attn = 18874368, router = 2048ull * 128;
  const uint64_t norms = (2ull * 48 + 1) * 2048, embed = 151936ull * 2048;
  const uint64_t non_expert = 48 * (attn + router) + norms + 2 * embed;
  EXPECT_EQ(m.embedding_bytes(), embed * 2);
  EXPECT_EQ(m.lm_head_bytes(), embed * 2);
  EXPECT_EQ(m.non_expert_params(), non_expert);
  EXPECT_EQ(m.non_expert_bytes(), non_expert * 2);
  EXPECT_EQ(m.total_params(), non_expert + 48ull * 128 * expert);
  EXPECT_EQ(m.active_params(), non_expert - embed + 48ull * 8 * expert);
  EXPECT_NEAR(static_cast<double>(m.total_params()) / 30.5e9, 1.0, 0.005);
  // Qwen's card counts the embedding table among the active weights; it rounds to 0.1B.
  EXPECT_NEAR(static_cast<double>(m.active_params() + m.embedding_params()) / 3.3e9, 1.0, 0.02);
  // DeepSeek-V2-Lite: a dense first layer (intermediate 10944) and two shared experts per MoE layer.
  const ModelSpec d = load_model("deepseek-v2-lite");
  EXPECT_EQ(d.dense_ffn_params(), 3ull * 2048 * 10944);
  EXPECT_NEAR(static_cast<double>(d.total_params()) / 15.7e9, 1.0, 0.005);  // "15.7B total, 2.4B active"
  EXPECT_NEAR(static_cast<double>(d.active_params()) / 2.4e9, 1.0, 0.03);
  // Tied embeddings (Switch, T5-style) have no separate head.
  EXPECT_EQ(load_model("switch-large-128").lm_head_bytes(), 0u);
}

// A preset without the optional attention and embedding fields still loads; its KV and embeddings are 0.
TEST(ModelSpec, TheNewFieldsAreOptionalAndChecked) {
  Json j = load_model("qwen3-30b-a3b").raw;
  for (const char* k :
       {"num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size", "tie_word_embeddings"})
    j.erase(k);
  const ModelSpec m = model_from_json(j, "m.json");
  EXPECT_EQ(m.kv_bytes_per_token(), 0u);
  EXPECT_EQ(m.embedding_bytes(), 0u);
  j = load_model("qwen3-30b-a3b").raw;
  j["num_key_value_heads"] = 64;
  EXPECT_EQ(error_of([&] { (void)model_from_json(j, "m.json"); }),
            "m.json: num_key_value_heads: exceeds num_attention_heads (32)");
  j = load_model("qwen3-30b-a3b").raw;
  j["sliding_window_layers"] = 4;
  EXPECT_EQ(error_of([&] { (void)model_from_json(j, "m.json"); }),
            "m.json: sliding_window_layers: is given without a sliding_window");
  j = load_model("qwen3-30b-a3b").raw;
  j["first_dense_layers"] = 1;
  EXPECT_EQ(
      error_of([&] { (void)model_from_json(j, "m.json"); }),
      "m.json: first_dense_layers: exceeds the layers without routed experts (num_layers - moe_layers = 0)");
  j = load_model("qwen3-30b-a3b").raw;
  j["tie_word_embeddings"] = 1;
  EXPECT_EQ(error_of([&] { (void)model_from_json(j, "m.json"); }),
            "m.json: tie_word_embeddings: expected true or false, found the number 1");
}

TEST(ModelSpec, RejectsBadPresets) {
  EXPECT_THROW((void)load_model("no-such-model"), Error);
  Json j = load_model("olmoe-1b-7b").raw;
  j.erase("routed_experts");
  EXPECT_THROW((void)model_from_json(j, "m.json"), Error);
  EXPECT_THROW((void)parse_dtype("int3"), Error);
  EXPECT_EQ(parse_dtype("F16"), DType::F16);
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

using ::testing::HasSubstr;

TEST(ModelSpec, AnUnknownFieldIsAnErrorNamingTheClosestKnownOne) {
  Json j = load_model("olmoe-1b-7b").raw;
  j["top_kk"] = 8;
  EXPECT_EQ(error_of([&] { (void)model_from_json(j, "m.json"); }),
            "m.json: top_kk: unknown field; did you mean top_k?");
  j = load_model("olmoe-1b-7b").raw;
  j["expert_tensors"][1]["shapes"] = Json::array({1, 2});
  EXPECT_EQ(error_of([&] { (void)model_from_json(j, "m.json"); }),
            "m.json: expert_tensors[1].shapes: unknown field; did you mean expert_tensors[1].shape?");
}

TEST(ModelSpec, BadValuesNameTheirPathAndWhatWasFound) {
  const Json base = load_model("olmoe-1b-7b").raw;
  Json j = base;
  j["num_layers"]["value"] = 1e300;
  EXPECT_THAT(error_of([&] { (void)model_from_json(j, "m.json"); }),
              HasSubstr("m.json: num_layers.value: expected an integer in [1, 65535], found the number 1"));
  j = base;
  j["expert_tensors"][0]["shape"][1] = 0;
  EXPECT_EQ(error_of([&] { (void)model_from_json(j, "m.json"); }),
            "m.json: expert_tensors[0].shape[1]: expected an integer in [1, 4294967296], found the number 0");
  j = base;
  j["expert_tensors"][0]["shape"] = Json::array({4294967296ull, 4294967296ull});
  EXPECT_THAT(error_of([&] { (void)model_from_json(j, "m.json"); }), HasSubstr("more than 2^50 elements"));
  j = base;
  j["architecture"] = "encoder";
  EXPECT_EQ(
      error_of([&] { (void)model_from_json(j, "m.json"); }),
      "m.json: architecture: expected \"decoder\" or \"encoder-decoder\", found the string \"encoder\"");
  j = base;
  j["top_k"] = 65;
  EXPECT_EQ(error_of([&] { (void)model_from_json(j, "m.json"); }),
            "m.json: top_k: exceeds routed_experts (64)");
  EXPECT_EQ(error_of([&] { (void)model_from_json(Json::parse("[]"), "m.json"); }),
            "m.json: expected an object (a model: num_layers, moe_layers, routed_experts, ..., "
            "expert_tensors), found "
            "an array of 0 elements");
}

TEST(ModelSpec, ANumberBeyondADoubleInAFileIsAnErrorNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/huge-model.json";
  std::string text = load_model("olmoe-1b-7b").raw.dump(1);
  text.replace(text.find("\"hidden_size\": {"), 16, "\"hidden_size\": {\"value\": 1e400, \"x\": ");
  std::ofstream(path) << text;
  EXPECT_THAT(error_of([&] { (void)load_model(path); }), HasSubstr(path + ":"));
  EXPECT_THAT(error_of([&] { (void)load_model(path); }), HasSubstr("1e400 is out of range"));
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

using ::testing::HasSubstr;

// Per-layer types: a raised tensor changes that layer's expert or dense bytes and no other layer's; the
// mean and sum follow; the router and norms stored apart count in the layer's dense bytes.
TEST(ModelSpec, LayerOverridesChangeTheirLayersOnly) {
  Json j = load_model("qwen3-30b-a3b").raw;
  j["weight_types"] = {{"experts", "q4_k"}, {"dense", "q4_k"}};
  const ModelSpec base = model_from_json(j, "m.json");
  j["layer_overrides"] = Json::array(
      {{{"layers", {0, 47}}, {"experts", {{"down_proj", "q6_k"}}}, {"attention", {{"v", "q6_k"}}}}});
  const ModelSpec m = model_from_json(j, "m.json");
  // down [2048, 768]: Q6_K 210 B / 256 instead of Q4_K's 144; v [512, 2048]: the same per 256 elements.
  const uint64_t down_delta = 2048ull * 768 / 256 * (210 - 144), v_delta = 512ull * 2048 / 256 * (210 - 144);
  EXPECT_EQ(m.bytes_per_expert(0), base.bytes_per_expert() + down_delta);
  EXPECT_EQ(m.bytes_per_expert(47), base.bytes_per_expert() + down_delta);
  EXPECT_EQ(m.bytes_per_expert(1), base.bytes_per_expert());
  EXPECT_EQ(m.dense_bytes_per_layer(0), base.dense_bytes_per_layer() + v_delta);
  EXPECT_EQ(m.dense_bytes_per_layer(1), base.dense_bytes_per_layer());
  EXPECT_EQ(m.all_experts_bytes(), base.all_experts_bytes() + 2 * 128 * down_delta);
  EXPECT_EQ(m.dense_bytes_moe_layers(), 48 * base.dense_bytes_per_layer() + 2 * v_delta);
  EXPECT_EQ(m.bytes_per_expert(), base.bytes_per_expert() + (2 * down_delta + 24) / 48);
  EXPECT_EQ(m.non_expert_bytes(), base.non_expert_bytes() + 2 * v_delta);
  // Router in f32 apart from the Q4_K attention, and 4352 norm elements a layer in f32.
  j.erase("layer_overrides");
  j["weight_types"]["router"] = "f32";
  j["weight_types"]["norms"] = "f32";
  j["norm_elements_per_layer"] = 4352;
  const ModelSpec g = model_from_json(j, "m.json");
  // q, o [4096, 2048], k, v [512, 2048] in Q4_K + the router 2048 x 128 x 4 + the norms: 11,682,816, the
  // bundled Qwen3 Q4_K_M trace's dense bytes in its Q4_K layers.
  EXPECT_EQ(g.dense_bytes_per_layer(3),
            (2 * 8388608ull + 2 * 1048576) / 256 * 144 + 2048ull * 128 * 4 + 4352 * 4);
  EXPECT_EQ(g.dense_bytes_per_layer(3), 11682816u);
}

TEST(ModelSpec, BadLayerOverridesNameTheirPath) {
  const Json base = load_model("qwen3-30b-a3b").raw;
  auto err = [&](const Json& overrides) {
    Json j = base;
    j["layer_overrides"] = overrides;
    return error_of([&] { (void)model_from_json(j, "m.json"); });
  };
  EXPECT_EQ(err(Json::array({{{"layers", {48}}, {"experts", {{"down_proj", "q6_k"}}}}})),
            "m.json: layer_overrides[0].layers[0]: expected an integer in [0, 47], found the number 48");
  EXPECT_EQ(err(Json::array({{{"layers", {0}}, {"experts", {{"down_prj", "q6_k"}}}}})),
            "m.json: layer_overrides[0].experts.down_prj: unknown field; did you mean "
            "layer_overrides[0].experts.down_proj?");
  EXPECT_EQ(err(Json::array({{{"layers", Json::array()}}})),
            "m.json: layer_overrides[0].layers: expected a non-empty array of MoE layer indices, found an "
            "array of 0 elements");
  EXPECT_THAT(err(Json::array({{{"layers", {0}}, {"experts", {{"down_proj", "q6_j"}}}}})),
              HasSubstr("m.json: layer_overrides[0].experts.down_proj: unknown storage type 'q6_j'"));
  EXPECT_EQ(
      err(Json::array({{{"layers", {0}}, {"attention", {{"vv", "q6_k"}}}}})),
      "m.json: layer_overrides[0].attention.vv: unknown field; did you mean layer_overrides[0].attention.v?");
  EXPECT_EQ(
      err(Json::array({{{"layers", {0}}, {"shared_experts", {{"down_proj", "q6_k"}}}}})),
      "m.json: layer_overrides[0].shared_experts: the model has no shared experts (shared_experts is 0)");
  EXPECT_EQ(
      err(Json::array({{{"layers", {1}}, {"experts", {{"down_proj", "q6_k"}}}},
                       {{"layers", {1}}, {"experts", {{"down_proj", "q4_k"}}}}})),
      "m.json: layer_overrides[1].experts.down_proj: MoE layer 1's type for this tensor is given twice");
  // A routed expert's raised type must hold its rows whole: Gemma's down rows of 704 are not 256-blocks.
  Json g = load_model("gemma-4-26b-a4b").raw;
  g["layer_overrides"] = Json::array({{{"layers", {0}}, {"experts", {{"down_proj", "q6_k"}}}}});
  EXPECT_EQ(error_of([&] { (void)model_from_json(g, "g.json"); }),
            "g.json: layer_overrides[0].experts.down_proj: q6_k stores rows in blocks of 256 elements; this "
            "tensor's rows (its last dimension) hold 704");
  Json d = load_model("deepseek-v2-lite").raw;
  d["layer_overrides"] = Json::array({{{"layers", {0}}, {"attention", {{"v", "q6_k"}}}}});
  EXPECT_THAT(
      error_of([&] { (void)model_from_json(d, "d.json"); }),
      HasSubstr("d.json: layer_overrides[0].attention: per-layer attention types need the MHA/GQA shape"));
  Json n = base;
  n["weight_types"] = {{"norms", "q4_k"}};
  EXPECT_EQ(error_of([&] { (void)model_from_json(n, "n.json"); }),
            "n.json: weight_types.norms: norms are stored as f32, f16 or bf16, not q4_k");
}

}  // namespace
}  // namespace moesim
