// ModelSpec: the shape of an MoE model, loaded from a preset in data/models/*.json.
// Every number in a preset is written {"value": V, "source": "where it comes from"}; the loader also
// accepts a bare number (for user-written files). Bytes per expert follow from the expert tensors'
// shapes and the dtype (BF16 unless the preset says otherwise). The schema (every field, its unit and bounds)
// is docs/model-format.md; the loader checks it, naming the file and the JSON path of a bad value, and an
// unknown field is an error naming the closest known one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/storage_type.h"

namespace moesim {

enum class DType : uint8_t { BF16, F16, F32 };
uint32_t dtype_size(DType d);
const char* dtype_name(DType d);
DType parse_dtype(const std::string& s);  // "bf16", "f16", "f32" (case-insensitive); throws

struct ExpertTensor {
  std::string name;  // e.g. "gate_proj"
  std::vector<uint64_t>
      shape;  // e.g. {1408, 2048}; the last dimension is a row (quantization blocks run along it)
  std::optional<StorageType> type;  // this tensor's storage; absent: the model's weight_types.experts
  uint64_t elements() const;
};

// The storage type of each kind of weight (docs/model-format.md "Storage types"); each defaults to dtype.
struct WeightTypes {
  StorageType experts, dense, embedding,
      lm_head;  // dense: attention, routers, shared experts, dense-layer FFNs
  // The router, when stored apart from the other dense weights (GGUF keeps ffn_gate_inp in f32); absent:
  // with them in `dense`.
  std::optional<StorageType> router;
  StorageType norms;  // the norm weights (GGUF keeps them in f32); default dtype
};

// One MoE layer's storage choices that differ from the model-wide ones (docs/model-format.md
// "layer_overrides"): GGUF mixes raise some tensors in some layers (llama.cpp's use_more_bits). Indexed
// like expert_tensors; attention by projection.
struct LayerTypes {
  std::vector<std::optional<StorageType>> experts, shared;  // routed and shared experts' tensors
  std::optional<StorageType> q, k, v, o;                    // attention projections (MHA/GQA shapes)
  bool empty() const;
};

struct ModelSpec {
  std::string name;          // preset stem, e.g. "deepseek-v2-lite"
  std::string display_name;  // e.g. "DeepSeek-V2-Lite"
  std::string origin;        // the file it was loaded from
  std::string architecture;  // "decoder" or "encoder-decoder"
  uint32_t num_layers = 0;   // all transformer layers (dense + MoE; encoder + decoder)
  uint32_t moe_layers = 0;   // layers with routed experts; traces number these 0..moe_layers-1
  uint32_t routed_experts = 0;
  uint32_t shared_experts = 0;
  uint32_t top_k = 0;
  uint64_t hidden_size = 0;
  uint64_t expert_intermediate_size = 0;
  uint64_t shared_expert_intermediate_size = 0;  // per shared expert; 0 when none
  uint64_t attention_params_per_layer = 0;       // weights read per layer besides experts (attention, router)
  // Attention shape (optional; 0 = not given). MHA/GQA: heads, KV heads and the head width. MLA (DeepSeek)
  // caches one latent of kv_lora_rank plus a decoupled RoPE key of qk_rope_head_dim per token and layer.
  uint32_t num_attention_heads = 0, num_key_value_heads = 0, head_dim = 0;
  uint32_t kv_lora_rank = 0, qk_rope_head_dim = 0;
  // Layers whose KV is capped at sliding_window tokens (gpt-oss, Gemma); 0 when none.
  uint32_t sliding_window = 0, sliding_window_layers = 0;
  // Hybrid attention (Qwen3-Next): layers with a fixed-size recurrent state instead of a per-token KV, and
  // the elements of that state per layer (recurrent state + convolution window).
  uint32_t linear_attention_layers = 0;
  uint64_t linear_attention_state_elements = 0;
  uint64_t vocab_size = 0;  // 0: embeddings not counted
  bool tie_word_embeddings = false;
  // Layers with a dense FFN instead of routed experts: num_layers - moe_layers of them, the first
  // first_dense_layers of them leading the stack (DeepSeek/GLM first_k_dense_replace); each of width
  // dense_intermediate_size (0: expert_intermediate_size), with the routed experts' tensor layout.
  uint32_t first_dense_layers = 0;
  uint64_t dense_intermediate_size = 0;
  DType dtype = DType::BF16;  // the unquantized element type (activations, KV); the weights' default type
  WeightTypes weight_types;   // the weights' storage
  std::string quantization;   // a name for the mix ("q4_k_m", "mxfp4"); "" for dtype weights
  // Elements of the norm weights one layer holds (attention and FFN norms, Qwen3's q/k norms); 0 when not
  // given: then a layer's dense bytes leave norms out and the totals count two of hidden_size a layer.
  uint64_t norm_elements_per_layer = 0;
  std::vector<ExpertTensor> expert_tensors;
  // Per MoE layer (0 .. moe_layers-1, as traces number them): empty when no layer differs.
  std::vector<LayerTypes> layer_types;
  Json raw;  // the preset as loaded, sources included (for self-describing outputs)

  uint64_t expert_elements() const;
  StorageType tensor_type(const ExpertTensor& t) const { return t.type ? *t.type : weight_types.experts; }
  // Tensor i of a routed expert in MoE layer `layer`: the layer's override, else tensor_type.
  StorageType tensor_type(size_t i, uint32_t layer) const;
  // Bytes of one routed expert of MoE layer `layer`: each tensor's bytes in its own type (storage_type.h).
  uint64_t bytes_per_expert(uint32_t layer) const;
  // The mean over MoE layers (rounded to the nearest byte): every layer's when no layer differs.
  uint64_t bytes_per_expert() const;
  // Every routed expert of every MoE layer.
  uint64_t all_experts_bytes() const;
  // True when every weight is bf16 or f16 (what ZipMoE's lossless exponent coding needs).
  bool all_16bit_weights() const;
  // Non-routed weights (elements) one MoE layer reads per step: attention + router + shared experts. The
  // dense FLOPs of a layer follow from this, never from bytes.
  uint64_t dense_elements_per_layer() const;
  // Bytes of one shared expert: same tensor layout as a routed one, with its own intermediate size.
  uint64_t shared_expert_bytes(uint32_t layer = 0) const;
  // Bytes of non-routed weights MoE layer `layer` reads per step: attention + router + shared experts, and
  // the layer's norms when norm_elements_per_layer is given.
  uint64_t dense_bytes_per_layer(uint32_t layer) const;
  // The mean over MoE layers (rounded to the nearest byte): every layer's when no layer differs.
  uint64_t dense_bytes_per_layer() const;
  // The sum over MoE layers.
  uint64_t dense_bytes_moe_layers() const;
  // Multiply-accumulate work of one routed expert for one token, in FLOPs (2 per weight element).
  double expert_flops_per_token() const { return 2.0 * static_cast<double>(expert_elements()); }

  // Layers that keep a per-token KV cache: every layer but the linear-attention ones (for an encoder-decoder,
  // the decoder's half; cross-attention KV grows with the input, not the output, and is not counted).
  uint32_t kv_layers() const;
  // KV elements one layer caches per token: (kv_lora_rank + qk_rope_head_dim) under MLA, else
  // 2 x num_key_value_heads x head_dim; 0 when the attention shape is not given.
  uint64_t kv_elements_per_token_per_layer() const;
  // KV bytes per token of one sequence, every KV layer at full growth (sliding windows not yet reached).
  uint64_t kv_bytes_per_token(uint32_t kv_elem_bytes = 2) const;
  // KV bytes of one sequence of context_tokens: sliding-window layers capped at the window, linear-attention
  // layers their fixed state (in the same element size).
  uint64_t kv_cache_bytes(uint64_t context_tokens, uint32_t kv_elem_bytes = 2) const;
  uint64_t embedding_params() const { return vocab_size * hidden_size; }
  uint64_t lm_head_params() const { return tie_word_embeddings ? 0 : vocab_size * hidden_size; }
  uint64_t embedding_bytes() const;
  uint64_t lm_head_bytes() const;  // 0 when tied
  // Elements of one dense-FFN layer's FFN (the routed experts' layout at dense_intermediate_size).
  uint64_t dense_ffn_params() const;
  // Every weight besides the routed experts: attention (all layers), routers, norms (two of hidden_size per
  // layer and a final one), shared experts, dense-layer FFNs, embeddings and head.
  uint64_t non_expert_params() const;
  uint64_t non_expert_bytes() const;
  uint64_t total_params() const;
  // Weights a token reads: every non-expert weight but the embedding lookup (a token reads one row of the
  // table; a tied head still reads all of it) plus top_k routed experts per MoE layer. Model cards differ
  // here: OpenAI's (gpt-oss) and DeepSeek's leave the table out as this does; Mistral's and Qwen's count it
  // (compare active_params() + embedding_params()).
  uint64_t active_params() const;
};

ModelSpec load_model(const std::string& name_or_path);
// The preset whose name a model name (as a trace records it) starts with, case-insensitively, longest match
// ("Qwen3-30B-A3B-Q4_K_M" -> qwen3-30b-a3b), also after a leading publisher and underscore
// ("google_gemma-4-26B-A4B-it" -> gemma-4-26b-a4b); nullopt when none does.
std::optional<ModelSpec> preset_for_model_name(const std::string& model_name);
ModelSpec model_from_json(const Json& j, const std::string& origin);

// Reads a number that may be written bare or as {"value": V, "source": S}. Throws naming origin/key.
double preset_number(const Json& j, const char* key, const std::string& origin);
bool preset_has(const Json& j, const char* key);

}  // namespace moesim
