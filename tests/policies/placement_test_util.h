// Random and hand-built placement instances for the placement tests (core/placement.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/placement.h"
#include "base/rng.h"

namespace moesim::test {

// N servers with the given GPU memories (bytes), L layers of E experts of `bytes` each, no load.
inline PlacementInput instance(const std::vector<std::vector<uint64_t>>& gpu_memory, uint32_t layers,
                               uint32_t experts, uint64_t bytes) {
  PlacementInput in;
  in.layers = layers;
  in.experts = experts;
  in.expert_bytes.assign(layers, bytes);
  for (size_t n = 0; n < gpu_memory.size(); ++n) {
    PlacementServer s;
    s.name = std::string(1, static_cast<char>('a' + n));
    for (uint64_t m : gpu_memory[n]) s.gpus.push_back({m, 1});
    in.servers.push_back(s);
  }
  in.load.assign(gpu_memory.size(), std::vector<double>(in.keys(), 0));
  return in;
}

// A random coverable instance: 1-4 servers of 1-3 GPUs, 1-4 layers of 2-8 experts, one expert size (or, with
// mixed, one per layer and 50% more memory than one replica of everything needs), each GPU holding
// between one and E * L / 2 + 1 experts (mixed: E * L + 1 of the largest) and the cluster at least one replica of everything; task-skewed load:
// per server a Zipf-like law over its own random permutation of each layer's experts, some keys 0.
inline PlacementInput random_instance(Rng& rng, bool mixed = false) {
  const auto N = static_cast<uint32_t>(1 + rng.below(4));
  PlacementInput in;
  in.layers = static_cast<uint32_t>(1 + rng.below(4));
  in.experts = static_cast<uint32_t>(2 + rng.below(7));
  in.seed = rng.next();
  uint64_t need = 0;
  for (uint32_t l = 0; l < in.layers; ++l) {
    in.expert_bytes.push_back(mixed ? 100 + 100 * rng.below(4) : 100);
    need += in.expert_bytes.back() * in.experts;
  }
  // Mixed: GPUs measured in the largest expert, up to twice as many, so that 1.5x the need is within reach.
  const uint64_t m = mixed ? *std::max_element(in.expert_bytes.begin(), in.expert_bytes.end()) : in.expert_bytes[0];
  const uint64_t most = mixed ? in.experts * in.layers + 1 : in.experts * in.layers / 2 + 1;
  for (;;) {
    in.servers.clear();
    uint64_t slots = 0, total = 0;
    for (uint32_t n = 0; n < N; ++n) {
      PlacementServer s;
      s.name = "s" + std::to_string(n);
      const uint64_t G = 1 + rng.below(3);
      for (uint64_t g = 0; g < G; ++g) {
        const uint64_t k = 1 + rng.below(most);
        const uint64_t bytes = k * m + rng.below(m);  // a fragment smaller than one expert
        s.gpus.push_back({bytes, 1.0 + static_cast<double>(rng.below(3))});
        slots += k;
        total += bytes;
      }
      in.servers.push_back(s);
    }
    if (mixed ? total * 2 >= need * 3 : slots >= in.keys()) break;
  }
  in.load.assign(N, std::vector<double>(in.keys(), 0));
  for (uint32_t n = 0; n < N; ++n) {
    const double s = 0.5 + rng.uniform() * 1.5;
    for (uint32_t l = 0; l < in.layers; ++l) {
      std::vector<uint32_t> perm(in.experts);
      for (uint32_t e = 0; e < in.experts; ++e) perm[e] = e;
      for (uint32_t i = in.experts; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
      for (uint32_t r = 0; r < in.experts; ++r)
        in.load[n][l * in.experts + perm[r]] = rng.below(5) == 0 ? 0 : std::round(1000 / std::pow(r + 1, s));
    }
  }
  return in;
}

}  // namespace moesim::test
