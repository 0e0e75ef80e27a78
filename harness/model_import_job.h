// `moesim model import`: a Hugging Face config.json to a model JSON (docs/model-format.md) whose every number
// names the config key it came from, or says "computed from ..." with the keys it was computed from.
//
// Families: mixtral, phimoe, olmoe, qwen2_moe, qwen3_moe, qwen3_next (hybrid attention), deepseek_v2,
// deepseek_v3 (MLA, shared experts, first dense layers, moe_layer_freq), glm4_moe, gpt_oss, llama4
// (interleaved MoE layers, text_config), gemma4 (text_config; a dense FFN beside the experts in every layer,
// written as a shared expert). Any other model_type is refused naming it and the keys a family needs.
//
// Storage: --dtype D puts every weight in D; --quant Q applies a named mix (quant_mix_names()): per-tensor
// types written out in the model (expert_tensors[].type, weight_types). A GGUF k-quant whose rows are not
// whole blocks falls back as llama.cpp does (gguf_fallback), said in the tensor's source. Neither: the
// config's own quantization_config (fp8 block scales, mxfp4) when it has one, else its torch_dtype.
#pragma once

#include <string>

#include "base/json_io.h"

namespace moesim::harness {

struct ModelImportOptions {
  std::string config_path;  // the config.json
  std::string dtype;        // --dtype: one storage type for every weight ("" = not given)
  std::string quant;        // --quant: a named mix ("" = not given)
  std::string name;         // the model's name (default: the config file's stem, or its parent folder's name)
  std::string source;       // where the config was published, for the sources (default: the file's path)
};

// The model JSON, with "totals" (total and active parameters, expert and dense bytes, KV bytes per token) as
// a descriptive key. Throws UsageError naming the file and key on a config it cannot read.
Json import_hf_config(const Json& config, const ModelImportOptions& o);
Json import_hf_config_file(const ModelImportOptions& o);
// The totals of a loaded model, as import_hf_config writes them and `moesim presets` lists them.
Json model_totals_json(const Json& model_json, const std::string& origin);
std::string quant_mix_names();

}  // namespace moesim::harness
