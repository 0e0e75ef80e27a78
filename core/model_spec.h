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

namespace moesim {

enum class DType : uint8_t { BF16, F16, F32 };
uint32_t dtype_size(DType d);
const char* dtype_name(DType d);
DType parse_dtype(const std::string& s);  // "bf16", "f16", "f32" (case-insensitive); throws

struct ExpertTensor {
  std::string name;             // e.g. "gate_proj"
  std::vector<uint64_t> shape;  // e.g. {1408, 2048}
  uint64_t elements() const;
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
  uint64_t attention_params_per_layer = 0;      // weights read per layer besides experts (attention, router)
  DType dtype = DType::BF16;
  std::vector<ExpertTensor> expert_tensors;
  Json raw;  // the preset as loaded, sources included (for self-describing outputs)

  uint64_t expert_elements() const;
  uint64_t bytes_per_expert() const { return expert_elements() * dtype_size(dtype); }
  // Elements of one shared expert: same tensor layout as a routed one, with its own intermediate size.
  uint64_t shared_expert_bytes() const;
  // Bytes of non-routed weights one MoE layer reads per step: attention + router + shared experts.
  uint64_t dense_bytes_per_layer() const;
  // Multiply-accumulate work of one routed expert for one token, in FLOPs (2 per weight element).
  double expert_flops_per_token() const { return 2.0 * static_cast<double>(expert_elements()); }
};

ModelSpec load_model(const std::string& name_or_path);
// The preset whose name a model name (as a trace records it) starts with, case-insensitively, longest match
// ("Qwen3-30B-A3B-Q4_K_M" -> qwen3-30b-a3b); nullopt when none does.
std::optional<ModelSpec> preset_for_model_name(const std::string& model_name);
ModelSpec model_from_json(const Json& j, const std::string& origin);

// Reads a number that may be written bare or as {"value": V, "source": S}. Throws naming origin/key.
double preset_number(const Json& j, const char* key, const std::string& origin);
bool preset_has(const Json& j, const char* key);

}  // namespace moesim
