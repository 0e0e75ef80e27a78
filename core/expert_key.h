// ExpertKey: one routed expert of one MoE layer. Layers are numbered among the MoE layers only
// (0 .. ModelSpec::moe_layers-1; dense layers are not counted), experts 0 .. routed_experts-1.
// dense_id() = layer * experts + expert indexes the flat arrays used on hot paths (no hashing).
#pragma once

#include <compare>
#include <cstdint>

namespace moesim {

struct ExpertKey {
  uint16_t layer = 0;
  uint16_t expert = 0;
  uint32_t dense_id(uint32_t experts_per_layer) const { return uint32_t{layer} * experts_per_layer + expert; }
  static ExpertKey from_dense(uint32_t id, uint32_t experts_per_layer) {
    return {static_cast<uint16_t>(id / experts_per_layer), static_cast<uint16_t>(id % experts_per_layer)};
  }
  auto operator<=>(const ExpertKey&) const = default;
};

}  // namespace moesim
