// The placement contract (core/placement.h): input checks, the coverability check with its error, the
// validity check of a result, Eq. 2, and the GPU table and slot split the policies share.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "base/error.h"
#include "core/placement.h"
#include "base/units.h"
#include "policies/placement/placement_util.h"

namespace moesim {

uint32_t PlacementInput::gpu_count() const {
  uint32_t g = 0;
  for (const auto& s : servers) g += static_cast<uint32_t>(s.gpus.size());
  return g;
}

bool Placement::on_server(uint32_t key, uint32_t server) const {
  for (const Replica& r : replicas[key])
    if (r.server == server) return true;
  return false;
}

void validate_placement_input(const PlacementInput& in) {
  const std::string where = "placement input: ";
  if (in.layers == 0 || in.experts == 0) throw Error(where + "the model has no layers or no experts");
  if (in.expert_bytes.size() != in.layers)
    throw Error(where + "expert_bytes has " + std::to_string(in.expert_bytes.size()) + " entries, expected " +
                std::to_string(in.layers) + " (one per layer)");
  for (uint32_t l = 0; l < in.layers; ++l)
    if (in.expert_bytes[l] == 0) throw Error(where + "expert_bytes[" + std::to_string(l) + "] is 0");
  if (in.servers.empty()) throw Error(where + "no servers");
  if (in.load.size() != in.servers.size())
    throw Error(where + "load has " + std::to_string(in.load.size()) + " servers, expected " +
                std::to_string(in.servers.size()));
  for (size_t n = 0; n < in.servers.size(); ++n) {
    const std::string s = where + "server '" + in.servers[n].name + "': ";
    if (in.servers[n].gpus.empty()) throw Error(s + "no GPUs");
    for (const auto& g : in.servers[n].gpus)
      if (!(g.speed > 0) || !std::isfinite(g.speed)) throw Error(s + "a GPU's speed is not positive");
    if (in.load[n].size() != in.keys())
      throw Error(s + "load has " + std::to_string(in.load[n].size()) + " entries, expected " +
                  std::to_string(in.keys()) + " (layers x experts)");
    for (double f : in.load[n])
      if (!(f >= 0) || !std::isfinite(f)) throw Error(s + "a load is negative or not finite");
  }
}

void check_coverable(const PlacementInput& in) {
  std::vector<uint64_t> free;
  uint64_t total = 0;
  for (const auto& s : in.servers)
    for (const auto& g : s.gpus) {
      free.push_back(g.memory_bytes);
      total += g.memory_bytes;
    }
  for (uint32_t l = 0; l < in.layers; ++l) {
    const uint64_t m = in.expert_bytes[l];
    uint32_t placed = 0;
    for (; placed < in.experts; ++placed) {
      const auto most = std::max_element(free.begin(), free.end());
      if (*most < m) break;
      *most -= m;
    }
    if (placed == in.experts) continue;
    const uint32_t left = in.experts - placed;
    uint64_t missing = static_cast<uint64_t>(left) * m;
    uint32_t later = 0;
    for (uint32_t k = l + 1; k < in.layers; ++k) {
      missing += static_cast<uint64_t>(in.experts) * in.expert_bytes[k];
      later += in.experts;
    }
    std::string what = "layer " + std::to_string(l) + ": " + std::to_string(left) + " experts of " +
                       format_bytes(m);
    if (later > 0)
      what += ", and " +
              (l + 2 == in.layers ? "layer " + std::to_string(l + 1)
                                  : "layers " + std::to_string(l + 1) + "-" + std::to_string(in.layers - 1)) +
              " (" + std::to_string(later) + " experts),";
    throw Error("placement: " + what + " need " + format_bytes(missing) + " more than the " +
                std::to_string(in.servers.size()) + " servers' free memory (" + std::to_string(free.size()) +
                " GPUs, " + format_bytes(total) +
                " for experts in all); every expert needs at least one replica");
  }
}

std::string placement_violation(const PlacementInput& in, const Placement& p) {
  if (p.layers != in.layers || p.experts != in.experts || p.replicas.size() != in.keys())
    return "the placement's shape differs from the input's";
  std::vector<std::vector<uint64_t>> used(in.servers.size());
  for (size_t n = 0; n < in.servers.size(); ++n) used[n].assign(in.servers[n].gpus.size(), 0);
  for (uint32_t key = 0; key < in.keys(); ++key) {
    const uint32_t l = key / in.experts, e = key % in.experts;
    const std::string name = "layer " + std::to_string(l) + " expert " + std::to_string(e);
    const auto& rs = p.replicas[key];
    if (rs.empty()) return name + " has no replica (coverage)";
    for (size_t i = 0; i < rs.size(); ++i) {
      if (rs[i].server >= in.servers.size() || rs[i].gpu >= in.servers[rs[i].server].gpus.size())
        return name + ": a replica on a GPU that does not exist";
      if (i > 0 && !(rs[i - 1] < rs[i])) return name + ": replicas not sorted or twice on one GPU";
      used[rs[i].server][rs[i].gpu] += in.expert_bytes[l];
    }
  }
  for (size_t n = 0; n < in.servers.size(); ++n)
    for (size_t g = 0; g < used[n].size(); ++g)
      if (used[n][g] > in.servers[n].gpus[g].memory_bytes)
        return "server '" + in.servers[n].name + "' GPU " + std::to_string(g) + ": " + format_bytes(used[n][g]) +
               " of experts in " + format_bytes(in.servers[n].gpus[g].memory_bytes) + " (memory)";
  return "";
}

double proxy_cost(const Placement& p, const std::vector<std::vector<double>>& load) {
  double cost = 0;
  for (size_t n = 0; n < load.size(); ++n) {
    if (load[n].size() != p.replicas.size())
      throw Error("proxy cost: server " + std::to_string(n) + "'s load has " + std::to_string(load[n].size()) +
                  " entries, the placement " + std::to_string(p.replicas.size()));
    for (uint32_t key = 0; key < p.replicas.size(); ++key)
      if (load[n][key] > 0 && !p.on_server(key, static_cast<uint32_t>(n))) cost += load[n][key];
  }
  return cost;
}

Placement PlacementPolicy::place(const PlacementInput& input) {
  validate_placement_input(input);
  check_coverable(input);
  Placement p = do_place(input);
  const std::string bad = placement_violation(input, p);
  if (!bad.empty()) throw std::logic_error("placement policy broke its contract: " + bad);
  return p;
}

namespace placement {

GpuTable::GpuTable(const PlacementInput& in)
    : layers_(in.layers), experts_(in.experts), bytes_(in.expert_bytes), by_server_(in.servers.size()) {
  for (uint32_t n = 0; n < in.servers.size(); ++n)
    for (uint32_t g = 0; g < in.servers[n].gpus.size(); ++g) {
      by_server_[n].push_back(static_cast<uint32_t>(server_.size()));
      server_.push_back(n);
      local_.push_back(g);
      speed_.push_back(in.servers[n].gpus[g].speed);
      free_.push_back(in.servers[n].gpus[g].memory_bytes);
    }
  count_.assign(static_cast<size_t>(server_.size()) * layers_, 0);
}

bool GpuTable::fits(uint32_t g, uint32_t l) const { return free_[g] >= bytes_[l] && count(g, l) < experts_; }

void GpuTable::take(uint32_t g, uint32_t l) {
  free_[g] -= bytes_[l];
  ++count_[static_cast<size_t>(g) * layers_ + l];
}

void GpuTable::give(uint32_t g, uint32_t l) {
  free_[g] += bytes_[l];
  --count_[static_cast<size_t>(g) * layers_ + l];
}

void split_slots(GpuTable& gpus, const PlacementInput& in, SlotSplit how) {
  std::vector<uint32_t> total(in.layers, 0);
  std::vector<bool> done(in.layers, false);
  for (bool progress = true; progress;) {
    progress = false;
    for (uint32_t l = 0; l < in.layers; ++l) {
      if (done[l]) continue;
      if (how == SlotSplit::kEqual && total[l] == in.experts) {
        done[l] = true;
        continue;
      }
      uint32_t best = gpus.size();
      for (uint32_t g = 0; g < gpus.size(); ++g) {
        if (!gpus.fits(g, l)) continue;
        if (best == gpus.size()) {
          best = g;
          continue;
        }
        const auto key = [&](uint32_t x) {
          // kEqual: fewest of this layer, then most free memory; kProportional: the other way round.
          return how == SlotSplit::kEqual ? std::pair<int64_t, int64_t>(gpus.count(x, l), -int64_t(gpus.free(x)))
                                          : std::pair<int64_t, int64_t>(-int64_t(gpus.free(x)), gpus.count(x, l));
        };
        if (key(g) < key(best)) best = g;
      }
      if (best == gpus.size()) {
        done[l] = true;
        continue;
      }
      gpus.take(best, l);
      ++total[l];
      progress = true;
    }
  }
}

Placement empty_placement(const PlacementInput& in) {
  Placement p;
  p.layers = in.layers;
  p.experts = in.experts;
  p.replicas.resize(in.keys());
  return p;
}

void add_replica(Placement& p, uint32_t key, Replica r) {
  auto& rs = p.replicas[key];
  rs.insert(std::upper_bound(rs.begin(), rs.end(), r), r);
}

std::vector<double> total_load(const PlacementInput& in) {
  std::vector<double> t(in.keys(), 0);
  for (const auto& f : in.load)
    for (uint32_t k = 0; k < in.keys(); ++k) t[k] += f[k];
  return t;
}

}  // namespace placement
}  // namespace moesim
