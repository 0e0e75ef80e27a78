// Which checkpoint tensors are routed-expert weights, and where they go in a store (docs/store-format.md
// §Expert naming). Recognised layouts (regular expressions over the full tensor name):
//   hf-mlp-experts  model.layers.{L}.mlp.experts.{E}.{gate,up,down}_proj.weight   Qwen-MoE, DeepSeek, OLMoE
//   mixtral         model.layers.{L}.block_sparse_moe.experts.{E}.w{1,2,3}.weight Mixtral, Phi-3.5-MoE
//   switch          {encoder,decoder}.block.{B}.layer.{N}.mlp.experts.expert_{E}.{wi,wo}.weight   Switch
// Shared experts (mlp.shared_expert(s).*), routers and dense layers match none of them and are not packed.
// Store layer numbering: MoE-layer index 0, 1, ... over the checkpoint's distinct layers sorted by
// (stack, layer number) — encoder before decoder for Switch, numerically otherwise (so Switch's MoE blocks
// 1, 3, 5, ... become 0, 1, 2, ...). Expert ids are the checkpoint's. Tensors of one expert are ordered
// gate, up, down (w1, w3, w2; wi, wo), the order the FFN uses them.
//
// --all-tensors treats every float tensor (BF16/F16/F32) as a one-tensor expert of layer 0 with
// expert id = its position in WeightSource order; tensors of other dtypes are skipped (and counted).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/weight_source.h"

namespace moesim::exec {

struct ExpertName {
  std::string layout;  // "hf-mlp-experts", "mixtral", "switch"
  std::string stack;   // "" or "encoder"/"decoder"
  uint64_t layer = 0;  // the checkpoint's layer (block) number
  uint64_t expert = 0;
  std::string role;   // "gate_proj", "w1", "wi", ...
  int role_rank = 0;  // position of the role within an expert (gate/w1/wi = 0, ...)
};

// Parses one tensor name; nullopt when it is not a routed-expert tensor of a known layout.
std::optional<ExpertName> parse_expert_name(const std::string& name);

struct SelectedTensor {
  uint32_t layer = 0;   // store (MoE-layer) index
  uint32_t expert = 0;  // checkpoint expert id (or tensor index with --all-tensors)
  std::string role;     // tensor role within the expert; the full name with --all-tensors
  const TensorView* source = nullptr;
};

struct ExpertSelection {
  std::string layout;                   // the layout(s) found, "all-tensors" with --all-tensors
  std::vector<SelectedTensor> tensors;  // in store order: layer, expert, role
  uint32_t layers = 0;
  uint64_t skipped = 0;  // --all-tensors: tensors whose dtype moesim cannot cast
};

// Throws moesim::Error when nothing matches (listing the patterns and suggesting --all-tensors).
ExpertSelection select_experts(const WeightSource& w, bool all_tensors);

}  // namespace moesim::exec
