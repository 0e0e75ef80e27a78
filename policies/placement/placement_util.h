// Shared by the placement policies: the GPUs of all servers in one flat list with their free memory and
// per-layer slot counts, and the equal / memory-proportional split of each layer's slots over them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/placement.h"

namespace moesim::placement {

class GpuTable {
 public:
  explicit GpuTable(const PlacementInput& in);

  uint32_t size() const { return static_cast<uint32_t>(server_.size()); }
  Replica replica(uint32_t g) const { return {server_[g], local_[g]}; }
  uint32_t server(uint32_t g) const { return server_[g]; }
  double speed(uint32_t g) const { return speed_[g]; }
  uint64_t free(uint32_t g) const { return free_[g]; }
  // The flat indices of server n's GPUs.
  const std::vector<uint32_t>& of_server(uint32_t n) const { return by_server_[n]; }

  // A slot of layer l on GPU g: memory for one more expert of l, and fewer than E of l there already.
  bool fits(uint32_t g, uint32_t l) const;
  void take(uint32_t g, uint32_t l);
  void give(uint32_t g, uint32_t l);
  uint32_t count(uint32_t g, uint32_t l) const { return count_[static_cast<size_t>(g) * layers_ + l]; }

 private:
  uint32_t layers_, experts_;
  const std::vector<uint64_t>& bytes_;
  std::vector<uint32_t> server_, local_;
  std::vector<double> speed_;
  std::vector<uint64_t> free_;
  std::vector<uint32_t> count_;  // [gpu * layers + layer]
  std::vector<std::vector<uint32_t>> by_server_;
};

enum class SlotSplit {
  kEqual,         // each layer's slots as equal over the GPUs as memory allows (expert parallelism)
  kProportional,  // fill every GPU: slots of a layer roughly proportional to the GPU's memory
};

// Hands out slots round by round, one per layer per round, so the layers stay within one slot of each other
// in total: until layer l has target[l] slots (kEqual: E) or no GPU has room (kProportional). Exact for one
// expert size: every layer gets E slots whenever check_coverable passes. Records them in `gpus`.
void split_slots(GpuTable& gpus, const PlacementInput& in, SlotSplit how);

// An empty placement of the input's shape.
Placement empty_placement(const PlacementInput& in);
// Adds replica g of key (keeps replicas sorted).
void add_replica(Placement& p, uint32_t key, Replica r);

// The load of each key summed over servers.
std::vector<double> total_load(const PlacementInput& in);

}  // namespace moesim::placement
