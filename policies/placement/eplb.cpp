// eplb: DeepSeek's Expert Parallelism Load Balancer (github.com/deepseek-ai/EPLB, eplb.py), with the
// heterogeneous capacities of the Prism paper's re-implementation (Prism, §IV-A: "the open-source
// implementation only supports homogeneous systems, we re-implement the algorithm ... to accommodate
// heterogeneous system configurations"). Per layer, on the load summed over servers (w):
//
//   rebalance_experts(w, groups, nodes, gpus):
//     if groups % nodes == 0: hierarchical          (the node count divides the expert-group count)
//       1. pack the groups onto nodes: balanced_packing(group loads, nodes)
//       2. per node: replicate_experts(its experts' loads, the node's slots)
//       3. per node: balanced_packing(its replicas' loads, the node's GPUs)
//     else: global = hierarchical with one group and one node
//   replicate_experts(w, slots):  count(e) = 1 each; for the remaining slots:
//       e* = argmax_e w(e) / count(e); count(e*) += 1          (the highest load per replica gets one more)
//   balanced_packing(items, packs):  items by weight descending, each to the pack with the least weight
//       among the packs that still have room
//
// Heterogeneous: DeepSeek gives every GPU the same number of replicas per layer. Here GPU g holds as many
// experts of each layer as its memory allows (split_slots kProportional: all memory used, layers within one
// slot of each other), a pack has room while it has free slots of the layer, a pack's weight is its load
// divided by its speed, and a node's group quota is proportional to its slots (largest remainder; DeepSeek:
// groups / nodes each). Two replicas of an expert never share a GPU (DeepSeek does not forbid it; here the
// second would serve nothing), so an expert has at most as many replicas as its node has GPUs, and a replica
// that finds no GPU without its expert is dropped: a slot left free.
#include <algorithm>
#include <numeric>

#include "core/placement.h"
#include "policies/placement/placement_util.h"

namespace moesim::policies {
namespace {

class Eplb final : public PlacementPolicy {
 public:
  explicit Eplb(uint32_t groups) : groups_(groups) {}

 protected:
  Placement do_place(const PlacementInput& in) override {
    placement::GpuTable gpus(in);
    placement::split_slots(gpus, in, placement::SlotSplit::kProportional);
    const std::vector<double> w = placement::total_load(in);
    Placement p = placement::empty_placement(in);
    const auto nodes = static_cast<uint32_t>(in.servers.size());
    const bool hierarchical = groups_ > 0 && groups_ % nodes == 0 && in.experts % groups_ == 0;
    std::vector<uint32_t> all_experts(in.experts), all_gpus(gpus.size());
    std::iota(all_experts.begin(), all_experts.end(), 0u);
    std::iota(all_gpus.begin(), all_gpus.end(), 0u);
    for (uint32_t l = 0; l < in.layers; ++l)
      if (!hierarchical || !place_hierarchical(in, gpus, w, l, p))
        replicate_and_pack(in, gpus, w, l, all_experts, all_gpus, p);
    return p;
  }

 private:
  // Steps 2-3 on one node (or, global, on all GPUs): the experts `ex` of layer l onto the GPUs `gs`.
  static void replicate_and_pack(const PlacementInput& in, const placement::GpuTable& gpus,
                                 const std::vector<double>& w, uint32_t l, const std::vector<uint32_t>& ex,
                                 const std::vector<uint32_t>& gs, Placement& p) {
    const uint32_t base = l * in.experts;
    size_t slots = 0;
    for (uint32_t g : gs) slots += gpus.count(g, l);
    std::vector<uint32_t> cnt(ex.size(), 1);
    for (size_t r = ex.size(); r < slots; ++r) {
      size_t best = ex.size();
      for (size_t i = 0; i < ex.size(); ++i)
        if (cnt[i] < gs.size() &&
            (best == ex.size() || w[base + ex[i]] / cnt[i] > w[base + ex[best]] / cnt[best]))
          best = i;
      if (best == ex.size()) break;
      ++cnt[best];
    }
    std::vector<size_t> items;  // index into ex, once per replica
    for (size_t i = 0; i < ex.size(); ++i) items.insert(items.end(), cnt[i], i);
    std::stable_sort(items.begin(), items.end(),
                     [&](size_t a, size_t b) { return w[base + ex[a]] / cnt[a] > w[base + ex[b]] / cnt[b]; });
    std::vector<double> load(gs.size(), 0);
    std::vector<bool> holds(gs.size() * ex.size(), false);  // [gpu j * |ex| + i]
    std::vector<uint32_t> left(gs.size());
    for (size_t j = 0; j < gs.size(); ++j) left[j] = gpus.count(gs[j], l);
    for (size_t i : items) {
      const uint32_t key = base + ex[i];
      size_t best = gs.size();
      for (size_t j = 0; j < gs.size(); ++j) {
        if (left[j] == 0 || holds[j * ex.size() + i]) continue;
        if (best == gs.size() || load[j] / gpus.speed(gs[j]) < load[best] / gpus.speed(gs[best])) best = j;
      }
      if (best == gs.size()) continue;  // only an extra replica can find every free GPU holding its expert
      --left[best];
      holds[best * ex.size() + i] = true;
      load[best] += w[key] / cnt[i];
      placement::add_replica(p, key, gpus.replica(gs[best]));
    }
  }

  // Step 1, then steps 2-3 per node. false (nothing placed) when the nodes' slots cannot take whole groups.
  bool place_hierarchical(const PlacementInput& in, const placement::GpuTable& gpus,
                          const std::vector<double>& w, uint32_t l, Placement& p) const {
    const auto nodes = static_cast<uint32_t>(in.servers.size());
    const uint32_t size = in.experts / groups_;
    std::vector<uint64_t> node_slots(nodes, 0);
    std::vector<double> node_speed(nodes, 0);
    uint64_t all = 0;
    for (uint32_t n = 0; n < nodes; ++n) {
      for (uint32_t g : gpus.of_server(n)) {
        node_slots[n] += gpus.count(g, l);
        node_speed[n] += gpus.speed(g);
      }
      all += node_slots[n];
    }
    // Quotas: groups * slots_n / all, rounded down and capped by what fits, then the rest by room left.
    std::vector<uint32_t> quota(nodes);
    uint32_t given = 0;
    for (uint32_t n = 0; n < nodes; ++n) {
      quota[n] =
          static_cast<uint32_t>(std::min<uint64_t>(groups_ * node_slots[n] / all, node_slots[n] / size));
      given += quota[n];
    }
    for (; given < groups_; ++given) {
      uint32_t best = nodes;
      for (uint32_t n = 0; n < nodes; ++n)
        if ((quota[n] + 1) * uint64_t{size} <= node_slots[n] &&
            (best == nodes ||
             node_slots[n] - quota[n] * uint64_t{size} > node_slots[best] - quota[best] * uint64_t{size}))
          best = n;
      if (best == nodes) return false;
      ++quota[best];
    }
    const uint32_t base = l * in.experts;
    std::vector<double> gload(groups_, 0);
    for (uint32_t e = 0; e < in.experts; ++e) gload[e / size] += w[base + e];
    std::vector<uint32_t> order(groups_);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return gload[a] > gload[b]; });
    std::vector<double> nload(nodes, 0);
    std::vector<std::vector<uint32_t>> node_experts(nodes);
    for (uint32_t grp : order) {
      uint32_t best = nodes;
      for (uint32_t n = 0; n < nodes; ++n)
        if (quota[n] > 0 && (best == nodes || nload[n] / node_speed[n] < nload[best] / node_speed[best]))
          best = n;
      --quota[best];
      nload[best] += gload[grp];
      for (uint32_t e = grp * size; e < (grp + 1) * size; ++e) node_experts[best].push_back(e);
    }
    for (uint32_t n = 0; n < nodes; ++n)
      if (!node_experts[n].empty()) replicate_and_pack(in, gpus, w, l, node_experts[n], gpus.of_server(n), p);
    return true;
  }

  uint32_t groups_;
};

}  // namespace

MOESIM_REGISTER(
    PlacementRegistry, "eplb",
    "DeepSeek's Expert Parallelism Load Balancer, heterogeneous as Prism §IV-A re-implements it: "
    "replicate the experts with the highest load per replica into every GPU's memory, balanced "
    "packing; hierarchical (groups to servers first) when the server count divides the group count",
    {{"groups", "1", "expert groups of the model's group-limited routing (DeepSeek-V3: 8)", ParamType::kWhole,
      ParamRange::closed(1, 1048576)}},
    [](const Params& p) -> std::unique_ptr<PlacementPolicy> {
      const uint64_t g = p.get_uint("groups");
      return std::make_unique<Eplb>(static_cast<uint32_t>(g));
    });

}  // namespace moesim::policies
