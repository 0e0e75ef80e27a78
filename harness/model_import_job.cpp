#include "harness/model_import_job.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "base/error.h"
#include "base/json_schema.h"
#include "core/model_spec.h"
#include "core/storage_type.h"

namespace moesim::harness {

namespace {

// A named mix: the storage type of each kind of weight, and where the choice comes from.
struct QuantMix {
  const char* name;
  const char* gate_up;  // the experts' gate and up projections (and shared experts', dense layers')
  const char* down;     // the experts' down projection
  const char* dense;    // attention, routers, shared experts, dense-layer FFNs
  const char* embedding;
  const char* lm_head;
  const char* why;
};

// The GGUF mixes are llama.cpp's per-tensor choices (github.com/ggml-org/llama.cpp src/llama-quant.cpp,
// llama_tensor_get_type_impl): the mix's base type for the FFN and attention weights and for token_embd, Q6_K
// for output.weight; the tensors it raises in some layers (ffn_down, attn_v, ...) are written per layer by
// GgufRules below.
constexpr QuantMix kMixes[] = {
    {"mxfp4", "mxfp4", "mxfp4", "bf16", "bf16", "bf16",
     "gpt-oss's shipped layout (openai/gpt-oss model card): MoE weights in MXFP4, every other weight BF16"},
    {"fp8", "fp8_e4m3_b128", "fp8_e4m3_b128", "fp8_e4m3_b128", "bf16", "bf16",
     "DeepSeek-V3's shipped layout (config.json quantization_config: fp8 e4m3, weight_block_size [128, "
     "128]): "
     "every linear weight in FP8 with a f32 scale per 128 x 128 block; embeddings and head BF16"},
    {"int4", "int4_g128", "int4_g128", "int4_g128", "bf16", "bf16",
     "AWQ/GPTQ-style 4-bit weights, group size 128, one f16 scale a group (assumption: the common setting); "
     "embeddings and head BF16"},
    {"q8_0", "q8_0", "q8_0", "q8_0", "q8_0", "q8_0", "llama.cpp Q8_0: every weight Q8_0"},
    {"q6_k", "q6_k", "q6_k", "q6_k", "q6_k", "q6_k", "llama.cpp Q6_K: every weight Q6_K"},
    {"q5_k_m", "q5_k", "q5_k", "q5_k", "q5_k", "q6_k", "llama.cpp Q5_K_M: Q5_K, output.weight Q6_K"},
    {"q5_k_s", "q5_k", "q5_k", "q5_k", "q5_k", "q6_k", "llama.cpp Q5_K_S: Q5_K, output.weight Q6_K"},
    {"q4_k_m", "q4_k", "q4_k", "q4_k", "q4_k", "q6_k", "llama.cpp Q4_K_M: Q4_K, output.weight Q6_K"},
    {"q4_k_s", "q4_k", "q4_k", "q4_k", "q4_k", "q6_k", "llama.cpp Q4_K_S: Q4_K, output.weight Q6_K"},
    {"q4_0", "q4_0", "q4_0", "q4_0", "q4_0", "q6_k", "llama.cpp Q4_0: Q4_0, output.weight Q6_K"},
    {"iq4_xs", "iq4_xs", "iq4_xs", "iq4_xs", "iq4_xs", "q6_k",
     "llama.cpp IQ4_XS: IQ4_XS, output.weight Q6_K"},
};

bool is_gguf_mix(const QuantMix& m) {
  return parse_storage_type(m.gate_up).is_gguf();
}

// llama.cpp's use_more_bits(i, n) (llama-quant.cpp): the first and last eighth of the n layers and every
// third between them.
bool use_more_bits(uint64_t i, uint64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// The per-layer raises of llama.cpp's llama_tensor_get_type_impl (src/llama-quant.cpp) for the mixes
// kMixes names, without an importance matrix, for a model that is not Falcon nor Llama-70B:
//   ffn_down (routed experts' ffn_down_exps, shared experts' ffn_down_shexp), layer i of n_layer:
//     Q4_K_M, Q5_K_M: Q6_K where use_more_bits(i, n_layer); Q4_K_S, IQ4_XS: Q5_K where i < n_layer / 8;
//   attn_v, the j-th of the model's n_v attn_v tensors: Q4_K_M, Q5_K_M: Q6_K where use_more_bits(j, n_v);
//     Q4_K_S: Q5_K where j < 4; IQ4_XS: Q5_K where heads / kv_heads >= 4; with 8 experts Q8_0 in every layer;
//   attn_k: Q8_0 with 8 experts; attn_output: Q5_K with 8 experts under Q4_K_S, Q4_K_M and IQ4_XS.
// Each choice then falls back where a row is not whole blocks (tensor_type_fallback; gguf_fallback here).
struct GgufRules {
  std::string mix;
  uint64_t n_expert = 0, n_gqa = 0;

  std::optional<std::string> down(uint64_t i, uint64_t n_layer) const {
    if ((mix == "q4_k_m" || mix == "q5_k_m") && use_more_bits(i, n_layer)) return "q6_k";
    if ((mix == "q4_k_s" || mix == "iq4_xs") && i < n_layer / 8) return "q5_k";
    return std::nullopt;
  }
  std::optional<std::string> v(uint64_t j, uint64_t n_v) const {
    if (n_expert == 8) return "q8_0";
    if ((mix == "q4_k_m" || mix == "q5_k_m") && use_more_bits(j, n_v)) return "q6_k";
    if (mix == "q4_k_s" && j < 4) return "q5_k";
    if (mix == "iq4_xs" && n_gqa >= 4) return "q5_k";
    return std::nullopt;
  }
  std::optional<std::string> k() const {
    if (n_expert == 8) return "q8_0";
    return std::nullopt;
  }
  std::optional<std::string> o() const {
    if (n_expert == 8 && (mix == "q4_k_s" || mix == "q4_k_m" || mix == "iq4_xs")) return "q5_k";
    return std::nullopt;
  }
};

// The type a row of `row` elements is stored in: llama.cpp's fallback for a block that does not divide it,
// then f16 (tensor_type_fallback).
StorageType fit(StorageType t, uint64_t row) {
  if (t.is_block_format() && row % t.block_elements() != 0 && t.is_gguf()) t = gguf_fallback(t);
  if (t.is_block_format() && row % t.block_elements() != 0) t = StorageType{StorageKind::F16, 0};
  return t;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Json sourced(const Json& value, const std::string& source) {
  return {{"value", value}, {"source", source}};
}

// The families and the keys each reads, for the refusal of an unknown one.
constexpr const char* kFamilies[] = {"mixtral",   "phimoe",     "olmoe",       "qwen2_moe",
                                     "qwen3_moe", "qwen3_next", "deepseek_v2", "deepseek_v3",
                                     "glm4_moe",  "gpt_oss",    "llama4",      "gemma4"};

// Reads one family's config. `c` is the text config (the root, or text_config for llama4 and gemma4); `pre`
// is its path prefix for the sources ("" or "text_config.").
class Importer {
 public:
  Importer(const Json& root, const ModelImportOptions& o) : root_(root), o_(o), at_(root, o.config_path) {}

  Json run() {
    family_ = at_["model_type"].string();
    if (std::find(std::begin(kFamilies), std::end(kFamilies), family_) == std::end(kFamilies))
      at_["model_type"].fail(
          "moesim model import does not know the family '" + family_ + "' (it reads " + families() +
          "); a model JSON needs num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, "
          "head_dim, "
          "vocab_size, the routed experts' count (num_local_experts, num_experts or n_routed_experts), "
          "num_experts_per_tok and the experts' width (moe_intermediate_size or intermediate_size): write "
          "one by "
          "hand (docs/model-format.md) from a preset such as data/models/qwen3-30b-a3b.json");
    if ((family_ == "llama4" || family_ == "gemma4") && at_.has("text_config")) {
      c_ = &root_["text_config"];
      pre_ = "text_config.";
    } else {
      c_ = &root_;
    }
    shape();
    experts();
    attention();
    storage();
    return out_;
  }

 private:
  static std::string families() {
    std::string s;
    for (const char* f : kFamilies) s += (s.empty() ? "" : ", ") + std::string(f);
    return s;
  }
  JsonAt key(const std::string& k) const {
    return JsonAt(root_, o_.config_path)[pre_.empty() ? k : "text_config"];
  }
  JsonAt text() const { return pre_.empty() ? at_ : at_["text_config"]; }
  bool has(const std::string& k) const { return c_->contains(k) && !(*c_)[k].is_null(); }
  uint64_t get(const std::string& k, uint64_t lo = 1, uint64_t hi = uint64_t{1} << 32) const {
    return text()[k].integer(lo, hi);
  }
  std::string cite(const std::string& k) const { return src() + ": " + pre_ + k; }
  std::string computed(const std::string& what) const { return "computed from " + src() + ": " + what; }
  std::string src() const { return o_.source.empty() ? o_.config_path : o_.source; }
  void put(const char* field, const Json& v, const std::string& source) { out_[field] = sourced(v, source); }
  // The first key of `keys` the config has, its value and its name.
  std::pair<uint64_t, std::string> first_of(std::initializer_list<const char*> keys, uint64_t lo = 1) const {
    for (const char* k : keys)
      if (has(k)) return {get(k, lo), k};
    std::string names;
    for (const char* k : keys) names += (names.empty() ? "" : " or ") + std::string(k);
    text().fail("a " + family_ + " config needs " + names);
  }

  void shape() {
    L_ = static_cast<uint32_t>(get("num_hidden_layers", 1, 65535));
    H_ = get("hidden_size");
    heads_ = get("num_attention_heads", 1, 65535);
    std::string name = o_.name;
    if (name.empty()) {
      const std::filesystem::path p(o_.config_path);
      name = p.stem() == "config" && p.has_parent_path() ? p.parent_path().filename().string()
                                                         : p.stem().string();
    }
    out_["name"] = lower(name);
    out_["display_name"] = name;
    out_["architecture"] = "decoder";
    out_["source"] = src();
    put("num_layers", L_, cite("num_hidden_layers"));
  }

  void experts() {
    auto [E, e_key] = first_of({"num_local_experts", "num_experts", "n_routed_experts"});
    auto [K, k_key] = first_of({"num_experts_per_tok", "experts_per_token", "top_k_experts"});
    const bool moe_width = family_ != "mixtral" && family_ != "phimoe" && family_ != "olmoe" &&
                           family_ != "gpt_oss" && family_ != "llama4";
    const std::string i_key = moe_width ? "moe_intermediate_size" : "intermediate_size";
    I_ = get(i_key);
    // Which layers hold routed experts.
    std::vector<bool> moe(L_, true);
    std::string moe_why = "every layer has routed experts";
    uint64_t dense_width = 0;
    std::string dense_key;
    if (family_ == "qwen2_moe" || family_ == "qwen3_moe" || family_ == "qwen3_next") {
      const uint64_t step = has("decoder_sparse_step") ? get("decoder_sparse_step") : 1;
      std::set<uint64_t> only;
      if (has("mlp_only_layers"))
        for (size_t i = 0; i < text()["mlp_only_layers"].size(); ++i)
          only.insert(text()["mlp_only_layers"][i].integer(0, L_ - 1));
      for (uint32_t i = 0; i < L_; ++i) moe[i] = !only.count(i) && (i + 1) % step == 0;
      moe_why = "layer i has experts unless in mlp_only_layers, when (i + 1) % decoder_sparse_step == 0 (" +
                std::to_string(step) + ")";
      dense_key = "intermediate_size";
    } else if (family_ == "deepseek_v2" || family_ == "deepseek_v3" || family_ == "glm4_moe") {
      first_dense_ = has("first_k_dense_replace") ? get("first_k_dense_replace", 0, L_) : 0;
      const uint64_t freq = has("moe_layer_freq") ? get("moe_layer_freq") : 1;
      for (uint32_t i = 0; i < L_; ++i) moe[i] = i >= first_dense_ && i % freq == 0;
      moe_why = "layer i has experts when i >= first_k_dense_replace (" + std::to_string(first_dense_) +
                ") and i % moe_layer_freq == 0 (" + std::to_string(freq) + ")";
      dense_key = "intermediate_size";
    } else if (family_ == "llama4") {
      if (has("moe_layers")) {
        moe.assign(L_, false);
        for (size_t i = 0; i < text()["moe_layers"].size(); ++i)
          moe[text()["moe_layers"][i].integer(0, L_ - 1)] = true;
        moe_why = "the layers listed in moe_layers";
      } else {
        const uint64_t step = has("interleave_moe_layer_step") ? get("interleave_moe_layer_step") : 1;
        for (uint32_t i = 0; i < L_; ++i) moe[i] = (i + 1) % step == 0;
        moe_why = "every interleave_moe_layer_step-th layer (" + std::to_string(step) + ")";
      }
      dense_key = "intermediate_size_mlp";
    }
    uint32_t moe_layers = 0;
    for (bool b : moe) moe_layers += b;
    moe_ = moe;
    if (moe_layers == 0) text().fail("no layer has routed experts (" + moe_why + ")");
    put("moe_layers", moe_layers, computed("num_hidden_layers=" + std::to_string(L_) + ", " + moe_why));
    E_ = E;
    put("routed_experts", E, cite(e_key));
    put("top_k", K, cite(k_key));
    put("hidden_size", H_, cite("hidden_size"));
    put("expert_intermediate_size", I_, cite(i_key));
    if (moe_layers < L_) {
      dense_width = get(dense_key);
      if (first_dense_) put("first_dense_layers", first_dense_, cite("first_k_dense_replace"));
      put("dense_intermediate_size", dense_width,
          cite(dense_key) + " (the FFN of the layers without experts)");
    }
    // Shared experts: always-active FFNs beside the routed ones, read with the dense weights.
    uint64_t shared = 0, shared_width = 0;
    std::string shared_src;
    if ((family_ == "qwen2_moe" || family_ == "qwen3_next") && has("shared_expert_intermediate_size") &&
        get("shared_expert_intermediate_size", 0) > 0) {
      shared = 1;
      shared_width = get("shared_expert_intermediate_size");
      shared_src = cite("shared_expert_intermediate_size");
    } else if (family_ == "deepseek_v2" || family_ == "deepseek_v3" || family_ == "glm4_moe") {
      shared = has("n_shared_experts") ? get("n_shared_experts", 0, 65535) : 0;
      shared_width = I_;
      shared_src = cite("moe_intermediate_size") + " (each shared expert has the routed experts' shape)";
      put("shared_experts", shared, cite("n_shared_experts"));
    } else if (family_ == "llama4") {
      shared = 1;
      shared_width = I_;
      shared_src = cite("intermediate_size") + " (Llama 4's shared expert has the routed experts' width)";
    } else if (family_ == "gemma4") {
      shared = 1;
      shared_width = get("intermediate_size");
      shared_src = cite("intermediate_size") +
                   " (Gemma 4 runs a dense FFN beside the experts in every layer: read as one shared expert)";
    }
    if (!out_.contains("shared_experts"))
      put("shared_experts", shared, shared ? shared_src : src() + ": no shared expert");
    if (shared) put("shared_expert_intermediate_size", shared_width, shared_src);
    // One routed expert's tensors, named and shaped as the family's checkpoints store them.
    Json t = Json::array();
    auto tensor = [&](const char* n, std::vector<uint64_t> s) { t.push_back({{"name", n}, {"shape", s}}); };
    if (family_ == "mixtral" || family_ == "phimoe") {
      tensor("w1", {I_, H_}), tensor("w3", {I_, H_}), tensor("w2", {H_, I_});
    } else if (family_ == "gpt_oss") {
      tensor("gate_up_proj", {H_, 2 * I_}), tensor("gate_up_proj_bias", {2 * I_});
      tensor("down_proj", {I_, H_}), tensor("down_proj_bias", {H_});
    } else if (family_ == "llama4") {
      tensor("gate_up_proj", {H_, 2 * I_}), tensor("down_proj", {I_, H_});
    } else if (family_ == "gemma4") {
      tensor("gate_up_proj", {2 * I_, H_}), tensor("down_proj", {H_, I_});
    } else {
      tensor("gate_proj", {I_, H_}), tensor("up_proj", {I_, H_}), tensor("down_proj", {H_, I_});
    }
    out_["expert_tensors"] = t;
  }

  // Hybrid attention (Qwen3-Next): the mean attention weights of a layer; writes the linear layers' fields.
  uint64_t qwen3_next_attention(uint64_t kvh, uint64_t hd, const std::string& hd_src, std::string& how) {
    uint64_t return_value = 0;
    const std::string l = std::to_string(L_);
    // Full-attention layers (every full_attention_interval-th) gate their output: q_proj yields 2 x heads x
    // hd.
    const uint64_t interval = has("full_attention_interval") ? get("full_attention_interval") : 4;
    const uint64_t full = L_ / interval, linear = L_ - full;
    const uint64_t full_p = H_ * heads_ * hd * 2 + 2 * H_ * kvh * hd + heads_ * hd * H_;
    const uint64_t nk = get("linear_num_key_heads"), nv = get("linear_num_value_heads");
    const uint64_t dk = get("linear_key_head_dim"), dv = get("linear_value_head_dim");
    const uint64_t conv = get("linear_conv_kernel_dim");
    const uint64_t key_dim = nk * dk, value_dim = nv * dv;
    // Gated DeltaNet: in_proj_qkvz, in_proj_ba, the depthwise conv over q, k and v, out_proj.
    const uint64_t linear_p =
        H_ * (2 * key_dim + 2 * value_dim) + H_ * 2 * nv + (2 * key_dim + value_dim) * conv + value_dim * H_;
    return_value = (full * full_p + linear * linear_p + L_ / 2) / L_;
    how = "the mean over " + std::to_string(full) +
          " gated full-attention layers (every full_attention_interval=" + std::to_string(interval) +
          "th: q 2 x heads x head_dim, k and v kv_heads x head_dim, o) and " + std::to_string(linear) +
          " Gated DeltaNet layers (in_proj_qkvz, in_proj_ba, conv1d, out_proj from " +
          "linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, " +
          "linear_conv_kernel_dim)";
    put("head_dim", hd, hd_src);
    put("linear_attention_layers", linear,
        computed("num_hidden_layers - num_hidden_layers / full_attention_interval = " + l + " - " +
                 std::to_string(full)));
    put("linear_attention_state_elements", nv * dk * dv + (2 * key_dim + value_dim) * conv,
        computed("the recurrent state linear_num_value_heads x linear_key_head_dim x linear_value_head_dim "
                 "+ the "
                 "convolution window (2 x key dim + value dim) x linear_conv_kernel_dim"));
    return return_value;
  }

  // Sliding and full layers of different shapes (Gemma 4): the mean attention weights of a layer.
  uint64_t gemma4_attention(uint64_t kvh, uint64_t hd, const std::string& hd_src, std::string& how) {
    uint64_t return_value = 0;
    const std::string l = std::to_string(L_);
    // Sliding layers: heads x head_dim queries, kv_heads x head_dim keys and values. Full layers:
    // global_head_dim and num_global_key_value_heads, keys doubling as values under attention_k_eq_v.
    uint64_t sliding = 0;
    for (size_t i = 0; i < text()["layer_types"].size(); ++i)
      sliding += text()["layer_types"][i].string() == "sliding_attention";
    const uint64_t full = L_ - sliding, ghd = get("global_head_dim"), gkv = get("num_global_key_value_heads");
    const bool k_eq_v = has("attention_k_eq_v") && text()["attention_k_eq_v"].boolean();
    const uint64_t sliding_p = 2 * H_ * heads_ * hd + 2 * H_ * kvh * hd;
    const uint64_t full_p = 2 * H_ * heads_ * ghd + (k_eq_v ? 1 : 2) * H_ * gkv * ghd;
    return_value = (sliding * sliding_p + full * full_p + L_ / 2) / L_;
    how = "the mean over " + std::to_string(sliding) +
          " sliding layers (q, o: heads x head_dim; k, v: kv_heads x "
          "head_dim) and " +
          std::to_string(full) + " full layers (global_head_dim, num_global_key_value_heads" +
          (k_eq_v ? ", keys doubling as values (attention_k_eq_v)" : "") + ")";
    put("head_dim", hd, hd_src + " (the sliding layers'; the full layers' KV differs, see notes)");
    put("sliding_window", get("sliding_window"), cite("sliding_window"));
    put("sliding_window_layers", sliding,
        computed("layer_types: " + std::to_string(sliding) + " of " + l + " are sliding_attention"));
    out_["notes"] =
        "Gemma 4's " + std::to_string(full) + " full-attention layers cache " +
        std::to_string((k_eq_v ? 1 : 2) * gkv * ghd) +
        " elements per token (num_global_key_value_heads x global_head_dim" +
        (k_eq_v ? ", keys doubling as values" : " x 2") +
        "), not the sliding layers' 2 x num_key_value_heads x head_dim; kv_bytes_per_token takes the "
        "sliding layers' shape for all.";
    return return_value;
  }

  // Projection weights of one attention layer (biases and norms are not counted), and the KV shape.
  void attention() {
    const uint64_t kvh = has("num_key_value_heads") ? get("num_key_value_heads", 1, 65535) : heads_;
    const std::string kv_src = has("num_key_value_heads") ? cite("num_key_value_heads")
                                                          : computed(
                                                                "num_key_value_heads absent: MHA, as many as "
                                                                "num_attention_heads");
    uint64_t hd = has("head_dim") ? get("head_dim", 1, 65535) : H_ / heads_;
    const std::string hd_src = has("head_dim")
                                   ? cite("head_dim")
                                   : computed("hidden_size / num_attention_heads = " + std::to_string(H_) +
                                              " / " + std::to_string(heads_));
    put("num_attention_heads", heads_, cite("num_attention_heads"));
    put("num_key_value_heads", kvh, kv_src);
    kvh_ = kvh;
    uint64_t per_layer = 0;
    std::string how;
    const std::string l = std::to_string(L_);
    if (family_ == "deepseek_v2" || family_ == "deepseek_v3") {
      const uint64_t q_lora = has("q_lora_rank") ? get("q_lora_rank") : 0, kv_lora = get("kv_lora_rank");
      const uint64_t nope = get("qk_nope_head_dim"), rope = get("qk_rope_head_dim"), v = get("v_head_dim");
      const uint64_t qk = nope + rope;
      const uint64_t q = q_lora ? H_ * q_lora + q_lora * heads_ * qk : H_ * heads_ * qk;
      per_layer = q + H_ * (kv_lora + rope) + kv_lora * heads_ * (nope + v) + heads_ * v * H_;
      how = "MLA: q " +
            std::string(q_lora ? "hidden x q_lora_rank + q_lora_rank x heads x (qk_nope + qk_rope)"
                               : "hidden x heads x (qk_nope + qk_rope)") +
            " + kv_a_proj_with_mqa hidden x (kv_lora_rank + qk_rope_head_dim) + kv_b_proj kv_lora_rank x "
            "heads x "
            "(qk_nope_head_dim + v_head_dim) + o_proj heads x v_head_dim x hidden";
      put("kv_lora_rank", kv_lora,
          cite("kv_lora_rank") + " (MLA: one compressed KV latent per token and layer)");
      put("qk_rope_head_dim", rope,
          cite("qk_rope_head_dim") + " (the decoupled RoPE key cached beside the latent)");
    } else if (family_ == "qwen3_next") {
      per_layer = qwen3_next_attention(kvh, hd, hd_src, how);
    } else if (family_ == "gemma4") {
      per_layer = gemma4_attention(kvh, hd, hd_src, how);
    } else {
      per_layer = H_ * heads_ * hd + 2 * H_ * kvh * hd + heads_ * hd * H_;
      how =
          "q, k, v, o projections: hidden x heads x head_dim + 2 x hidden x kv_heads x head_dim + heads x "
          "head_dim x hidden";
      put("head_dim", hd, hd_src);
      if (family_ == "gpt_oss") {
        uint64_t sliding = 0;
        for (size_t i = 0; i < text()["layer_types"].size(); ++i)
          sliding += text()["layer_types"][i].string() == "sliding_attention";
        put("sliding_window", get("sliding_window"), cite("sliding_window"));
        put("sliding_window_layers", sliding,
            computed("layer_types: " + std::to_string(sliding) + " of " + l + " are sliding_attention"));
      } else if ((family_ == "mixtral" || family_ == "phimoe") && has("sliding_window")) {
        put("sliding_window", get("sliding_window"), cite("sliding_window"));
        put("sliding_window_layers", L_, computed("sliding_window applies to every layer"));
      }
    }
    put("attention_params_per_layer", per_layer,
        computed(how + " with hidden_size=" + std::to_string(H_) + ", num_attention_heads=" +
                 std::to_string(heads_) + ", num_key_value_heads=" + std::to_string(kvh) +
                 ", head_dim=" + std::to_string(hd) + " (biases and norms not counted)"));
    put("vocab_size", get("vocab_size"), cite("vocab_size"));
    // Tied embeddings: the root's key for the multimodal wrappers, else the text config's; absent, the
    // family's transformers default (Gemma ties, the others do not).
    const bool tie_default = family_ == "gemma4";
    if (root_.contains("tie_word_embeddings") && root_["tie_word_embeddings"].is_boolean())
      put("tie_word_embeddings", at_["tie_word_embeddings"].boolean(), src() + ": tie_word_embeddings");
    else if (has("tie_word_embeddings"))
      put("tie_word_embeddings", text()["tie_word_embeddings"].boolean(), cite("tie_word_embeddings"));
    else
      put("tie_word_embeddings", tie_default,
          src() + ": tie_word_embeddings absent; the " + family_ + " default (transformers) is " +
              (tie_default ? "true" : "false"));
  }

  // The storage types: --dtype, --quant, else what the config ships.
  void storage() {
    std::string dtype = "bf16", dtype_src = "default (no torch_dtype in the config)";
    for (const char* k : {"torch_dtype", "dtype"})
      if (has(k) && (*c_)[k].is_string()) {
        dtype = lower((*c_)[k].get<std::string>()), dtype_src = cite(k);
        break;
      } else if (root_.contains(k) && root_[k].is_string()) {
        dtype = lower(root_[k].get<std::string>()), dtype_src = src() + ": " + k;
        break;
      }
    try {
      const StorageType t = parse_storage_type(dtype);
      if (!t.lossless_16bit() && t.kind != StorageKind::F32) throw Error("not a float type");
    } catch (const Error&) {
      text().fail("torch_dtype '" + dtype + "' is not bf16, f16 or f32");
    }
    const StorageType unquantized = parse_storage_type(dtype);
    out_["dtype"] = unquantized.name();
    const QuantMix* mix = nullptr;
    std::string mix_src;
    if (!o_.quant.empty()) {
      const std::string q = lower(o_.quant);
      for (const auto& m : kMixes)
        if (q == m.name) mix = &m;
      if (!mix)
        throw UsageError("--quant: unknown mix '" + o_.quant + "' (use one of: " + quant_mix_names() + ")");
      mix_src = "moesim model import --quant " + std::string(mix->name) + ": " + mix->why;
    } else if (o_.dtype.empty() && root_.contains("quantization_config") &&
               root_["quantization_config"].is_object()) {
      const Json& q = root_["quantization_config"];
      const std::string method = q.value("quant_method", "");
      if (method == "fp8") mix = &kMixes[1];
      if (method == "mxfp4") mix = &kMixes[0];
      if (!mix)
        at_["quantization_config"]["quant_method"].fail(
            "moesim model import reads fp8 and mxfp4 here; "
            "give --dtype or --quant for another");
      mix_src = src() + ": quantization_config.quant_method " + method + " (" + mix->why + ")";
    }
    if (!o_.dtype.empty()) {
      StorageType t;
      try {
        t = parse_storage_type(o_.dtype);
      } catch (const Error& e) {
        throw UsageError(std::string("--dtype: ") + e.what());
      }
      if (t.lossless_16bit() || t.kind == StorageKind::F32) {
        out_["dtype"] = t.name();
        return;
      }
      const std::string s = "moesim model import --dtype " + t.name() + ": every weight";
      out_["weight_types"] = {{"experts", sourced(t.name(), s)},
                              {"dense", sourced(t.name(), s)},
                              {"embedding", sourced(t.name(), s)},
                              {"lm_head", sourced(t.name(), s)}};
      out_["quantization"] = t.name();
      fit_rows(t, t);
      return;
    }
    if (!mix) return;
    out_["quantization"] = mix->name;
    out_["weight_types"] = {{"experts", sourced(mix->gate_up, mix_src)},
                            {"dense", sourced(mix->dense, mix_src)},
                            {"embedding", sourced(mix->embedding, mix_src)},
                            {"lm_head", sourced(mix->lm_head, mix_src)}};
    fit_rows(parse_storage_type(mix->gate_up), parse_storage_type(mix->down));
    if (is_gguf_mix(*mix)) gguf_layout(*mix);
  }

  // What a GGUF file holds besides the mix's base types: the router and the norms in f32, the output type
  // for a tied table, the norms' elements, and the tensors llama.cpp raises per layer (GgufRules).
  void gguf_layout(const QuantMix& mix) {
    const std::string conv =
        "convert_hf_to_gguf.py (github.com/ggml-org/llama.cpp) keeps 1-D tensors, norms and ffn_gate_inp in "
        "F32, and llama-quantize leaves them so (llama-quant.cpp tensor_allows_quantization)";
    out_["weight_types"]["router"] = sourced("f32", conv);
    out_["weight_types"]["norms"] = sourced("f32", conv);
    const StorageType head = fit(parse_storage_type(mix.lm_head), H_);
    out_["weight_types"]["lm_head"] = sourced(
        head.name(), "llama.cpp llama_tensor_get_type_impl: output.weight Q6_K (Q8_0 where a row of " +
                         std::to_string(H_) + " is not whole 256-element blocks)");
    if (out_["tie_word_embeddings"]["value"].get<bool>())
      out_["weight_types"]["embedding"] = sourced(
          head.name(), "llama.cpp llama_tensor_get_type_impl: a tied token_embd takes output.weight's type");
    const uint64_t hd = out_["head_dim"]["value"].get<uint64_t>();
    const uint64_t kvh = out_["num_key_value_heads"]["value"].get<uint64_t>();
    // Norm weights per layer: attn_norm and ffn_norm; Qwen3's per-head q_norm and k_norm; OLMoE's q_norm
    // and k_norm over the whole projections.
    uint64_t norms = 2 * H_;
    std::string norms_how = "attn_norm and ffn_norm, hidden_size each";
    if (family_ == "qwen3_moe") {
      norms += 2 * hd;
      norms_how += ", and q_norm and k_norm, head_dim each";
    } else if (family_ == "olmoe") {
      norms += heads_ * hd + kvh * hd;
      norms_how += ", and q_norm (heads x head_dim) and k_norm (kv_heads x head_dim)";
    }
    put("norm_elements_per_layer", norms, computed(norms_how));
    gguf_layer_overrides(mix, hd);
  }

  // The layers whose tensors llama.cpp raises above the base type, grouped by what is raised.
  void gguf_layer_overrides(const QuantMix& mix, uint64_t hd) {
    const GgufRules rules{mix.name, E_, heads_ / std::max<uint64_t>(1, kvh_)};
    // attn_v tensors: one in each layer with a value projection of the model's shape. MLA (attn_kv_b) and
    // Gemma 4's full layers without k_eq_v hold other shapes and are not written per layer.
    std::vector<bool> has_v(L_, !is_mla());
    std::string v_layers = "every layer has attn_v";
    if (family_ == "qwen3_next") {
      const uint64_t interval = has("full_attention_interval") ? get("full_attention_interval") : 4;
      for (uint32_t i = 0; i < L_; ++i) has_v[i] = (i + 1) % interval == 0;
      v_layers = "attn_v only in the full-attention layers";
    } else if (family_ == "gemma4") {
      for (uint32_t i = 0; i < L_; ++i) has_v[i] = text()["layer_types"][i].string() == "sliding_attention";
      v_layers = "attn_v of this shape in the sliding layers";
    }
    uint64_t n_v = 0;
    for (bool b : has_v) n_v += b;
    if (family_ == "gemma4" && !(has("attention_k_eq_v") && text()["attention_k_eq_v"].boolean()))
      n_v = L_;  // the full layers hold an attn_v too, of another shape
    const std::string why =
        "llama.cpp llama_tensor_get_type_impl (src/llama-quant.cpp) under " + std::string(mix.name) +
        " with " + std::to_string(E_) + " experts, " + std::to_string(heads_) + " heads / " +
        std::to_string(kvh_) + " kv_heads, " + std::to_string(L_) + " layers (" + v_layers +
        "), no importance matrix; types fitted to the rows as its tensor_type_fallback does";
    std::map<std::string, std::pair<Json, std::vector<uint32_t>>> groups;  // by the overrides' text
    uint32_t moe_index = 0;
    uint64_t j = 0;
    for (uint32_t i = 0; i < L_; ++i) {
      const uint64_t v_index = j;
      if (has_v[i]) ++j;
      if (!moe_[i]) continue;
      Json o = Json::object();
      if (auto d = rules.down(i, L_)) {
        // A shared expert's rows: the routed experts' with the intermediate width replaced by its own.
        const uint64_t shared_width = out_.contains("shared_expert_intermediate_size")
                                          ? out_["shared_expert_intermediate_size"]["value"].get<uint64_t>()
                                          : I_;
        Json experts = Json::object(), shared = Json::object();
        for (const auto& t : out_["expert_tensors"]) {
          const std::string n = t["name"].get<std::string>();
          if (t["shape"].size() < 2 || (n.find("down") == std::string::npos && n != "w2")) continue;
          const uint64_t row = t["shape"].back().get<uint64_t>();
          experts[n] = fit(parse_storage_type(*d), row).name();
          shared[n] = fit(parse_storage_type(*d), row == I_ ? shared_width : row).name();
        }
        o["experts"] = experts;
        if (out_["shared_experts"]["value"].get<uint64_t>() > 0) o["shared_experts"] = shared;
      }
      if (!is_mla()) {
        Json a = Json::object();
        if (auto v = has_v[i] ? rules.v(v_index, n_v) : std::nullopt)
          a["v"] = fit(parse_storage_type(*v), H_).name();
        if (auto k = rules.k()) a["k"] = fit(parse_storage_type(*k), H_).name();
        if (auto ot = rules.o()) a["o"] = fit(parse_storage_type(*ot), heads_ * hd).name();
        if (!a.empty()) o["attention"] = a;
      }
      if (!o.empty()) {
        auto& g = groups[o.dump()];
        g.first = o;
        g.second.push_back(moe_index);
      }
      ++moe_index;
    }
    if (groups.empty()) return;
    Json list = Json::array();
    for (auto& [key, g] : groups) {
      Json e = g.first;
      e["layers"] = g.second;
      e["source"] = why;
      list.push_back(e);
    }
    // In the order of their first layer, for a readable file.
    std::sort(list.begin(), list.end(),
              [](const Json& a, const Json& b) { return a["layers"][0] < b["layers"][0]; });
    out_["layer_overrides"] = list;
  }

  bool is_mla() const { return family_ == "deepseek_v2" || family_ == "deepseek_v3"; }

  // Each expert tensor's type; a GGUF block type whose rows are not whole blocks falls back as llama.cpp
  // does.
  void fit_rows(StorageType gate_up, StorageType down) {
    for (auto& t : out_["expert_tensors"]) {
      const std::string n = t["name"].get<std::string>();
      StorageType want = n.find("down") != std::string::npos || n == "w2" ? down : gate_up;
      // Biases stay in the unquantized type, as the shipped MXFP4/FP8 checkpoints and GGUF files keep them.
      if (t["shape"].size() == 1) {
        t["type"] = sourced(out_["dtype"], "a bias vector: kept in the unquantized type");
        continue;
      }
      const uint64_t row = t["shape"].back().get<uint64_t>();
      StorageType got = want;
      if (got.is_block_format() && row % got.block_elements() != 0 && got.is_gguf()) got = gguf_fallback(got);
      if (got.is_block_format() && row % got.block_elements() != 0) got = StorageType{StorageKind::F16, 0};
      if (got == parse_storage_type(out_["weight_types"]["experts"]["value"].get<std::string>())) continue;
      std::string why = got == want ? "the mix's choice for this tensor"
                                    : "rows of " + std::to_string(row) + " are not whole " + want.name() +
                                          " blocks of " + std::to_string(want.block_elements()) +
                                          ": llama.cpp falls back to " + got.name();
      t["type"] = sourced(got.name(), why);
    }
  }

  const Json& root_;
  const ModelImportOptions& o_;
  JsonAt at_;
  const Json* c_ = nullptr;
  std::string pre_, family_;
  uint32_t L_ = 0;
  uint64_t H_ = 0, heads_ = 0, I_ = 0, first_dense_ = 0, E_ = 0, kvh_ = 0;
  std::vector<bool> moe_;  // which layers hold routed experts
  Json out_ = Json::object();
};

}  // namespace

std::string quant_mix_names() {
  std::string s;
  for (const auto& m : kMixes) s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

Json model_totals_json(const Json& model_json, const std::string& origin) {
  const ModelSpec m = model_from_json(model_json, origin);
  return {{"total_params", m.total_params()},
          {"active_params", m.active_params()},
          {"expert_bytes", m.bytes_per_expert()},
          {"experts_bytes", m.all_experts_bytes()},
          {"dense_bytes_per_layer", m.dense_bytes_per_layer()},
          {"non_expert_bytes", m.non_expert_bytes()},
          {"kv_bytes_per_token", m.kv_bytes_per_token()}};
}

Json import_hf_config(const Json& config, const ModelImportOptions& o) {
  if (!o.dtype.empty() && !o.quant.empty()) throw UsageError("give --dtype or --quant, not both");
  // A config it cannot read is bad input (exit 2), named by file and key.
  try {
    if (!config.is_object()) JsonAt(config, o.config_path).expected("an object (a Hugging Face config.json)");
    Json m = Importer(config, o).run();
    m["totals"] = model_totals_json(m, o.config_path);
    return m;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

Json import_hf_config_file(const ModelImportOptions& o) {
  return import_hf_config(load_json_file(o.config_path), o);
}

}  // namespace moesim::harness
