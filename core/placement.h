// Expert placement policies for the multi-server model (ARCHITECTURE.md §3): which servers hold a
// replica of each (layer, expert) -- Uniform, Redundance, SmartMoE-style, EPLB, Prism -- and migration
// between placements. Implementations go in policies/placement/, one file each.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/registry.h"

namespace moesim {

struct PlacementInput {
  uint32_t servers = 0;
  uint32_t layers = 0;
  uint32_t experts = 0;
  std::vector<uint64_t> server_capacity_bytes;  // [servers]
  std::vector<uint64_t> expert_bytes;           // [layers]
  std::span<const uint64_t> key_frequency;      // [layers * experts] load per key
};

struct Placement {
  // replicas[key] = the servers holding key = layer * experts + expert (at least one each).
  std::vector<std::vector<uint32_t>> replicas;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual Placement place(const PlacementInput& input) = 0;
};

using PlacementRegistry = Registry<PlacementPolicy>;

}  // namespace moesim
