// prism: the placement of Prism (Accelerating Edge Inference for Distributed MoE Models with
// Latency-Optimized Expert Placement, §III-C), Alg. 1 then Alg. 2, as printed:
//
// Algorithm 1: Layer-wise Expert Count Allocation
//   // Step 1: Initialization based on activation diversity.
//   for n = 1..N: for l = 1..L:
//     N_{n,l} <- floor( M_n / m_e * v_{n,l} / sum_l v_{n,l} )     v_{n,l} = -sum_e p_e log2 p_e, M_n = sum_g mem_{n,g}
//   // Step 2: Adjust to match expert-coverage constraint.
//   for l: N_{l,total} = sum_n N_{n,l}
//   for l = 1..L:
//     while N_{l,total} < E:
//       for n = 1..N (sorted by M_n descending):
//         l' = argmax_{l'} N_{l',total}
//         if N_{n,l'} > 0: N_{n,l'} -= 1; N_{n,l} += 1; N_{l',total} -= 1; N_{l,total} += 1
//           if N_{l,total} == E: break
//
// Algorithm 2: Expert-to-Server Assignment
//   for n = 1..N: for l = 1..L: A_n^l <- Top-N_{n,l} experts from P_n^l (by f_n^l)
//   for l = 1..L:
//     U_l <- experts of layer l on no server
//     while U_l != {}:
//       sort servers n by number of duplicates in A_n^l (ascending)
//       for n = 1..N:
//         e <- most frequent unassigned expert in U_l (by f_n^l(e))
//         if e not in A_n^l: e_rep <- least-used duplicate in A_n^l; replace e_rep with e in A_n^l
//         update U_l
//
// What differs (docs/placement.md says why): the per-layer size m_l in Step 1's floor; the floor's leftovers
// and the cap N_{n,l} <= E (Step 1b: largest remainders); Step 2 borrows only from a layer above E and only
// what fits the GPU's memory; Alg. 2 skips a server without a duplicate and breaks the order's ties by the
// smaller loss; each server's experts then fill its GPUs' slots of Step 1, most frequent first.
#include "policies/placement/prism.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "base/error.h"
#include "core/placement.h"

namespace moesim::placement {

double activation_entropy(const std::vector<double>& f, uint32_t layer, uint32_t experts) {
  const size_t base = static_cast<size_t>(layer) * experts;
  double sum = 0;
  for (uint32_t e = 0; e < experts; ++e) sum += f[base + e];
  if (!(sum > 0)) return 0;
  double h = 0;
  for (uint32_t e = 0; e < experts; ++e)
    if (f[base + e] > 0) {
      const double p = f[base + e] / sum;
      h -= p * std::log2(p);
    }
  return h;
}

namespace {

// The GPU of server n with the most free memory that has a slot of layer l, or gpus.size().
uint32_t roomiest(const GpuTable& gpus, uint32_t n, uint32_t l) {
  uint32_t best = gpus.size();
  for (uint32_t g : gpus.of_server(n))
    if (gpus.fits(g, l) && (best == gpus.size() || gpus.free(g) > gpus.free(best))) best = g;
  return best;
}

}  // namespace

std::vector<std::vector<uint32_t>> prism_counts(const PlacementInput& in, GpuTable& gpus) {
  const auto N = static_cast<uint32_t>(in.servers.size());
  const uint32_t L = in.layers, E = in.experts;
  std::vector<std::vector<uint32_t>> cnt(N, std::vector<uint32_t>(L, 0));
  std::vector<uint64_t> mem(N, 0);
  for (uint32_t n = 0; n < N; ++n) {
    for (const auto& g : in.servers[n].gpus) mem[n] += g.memory_bytes;
    std::vector<double> v(L);
    double vsum = 0;
    for (uint32_t l = 0; l < L; ++l) vsum += v[l] = activation_entropy(in.load[n], l, E);
    // No diversity anywhere (no load, or one expert per layer): no layer is preferred.
    std::vector<double> share(L);
    for (uint32_t l = 0; l < L; ++l)
      share[l] = static_cast<double>(mem[n]) * (vsum > 0 ? v[l] / vsum : 1.0 / L) / static_cast<double>(in.expert_bytes[l]);
    // Step 1.
    for (uint32_t l = 0; l < L; ++l) {
      const auto want = static_cast<uint32_t>(std::min<double>(E, std::floor(share[l])));
      for (; cnt[n][l] < want; ++cnt[n][l]) {
        const uint32_t g = roomiest(gpus, n, l);
        if (g == gpus.size()) break;
        gpus.take(g, l);
      }
    }
    // Step 1b: the floors' leftovers, to the layers furthest below their share.
    for (;;) {
      uint32_t best = L, at = gpus.size();
      for (uint32_t l = 0; l < L; ++l) {
        const uint32_t g = cnt[n][l] < E ? roomiest(gpus, n, l) : gpus.size();
        if (g == gpus.size()) continue;
        if (best == L || share[l] - cnt[n][l] > share[best] - cnt[n][best]) best = l, at = g;
      }
      if (best == L) break;
      gpus.take(at, best);
      ++cnt[n][best];
    }
  }
  // Step 2.
  std::vector<uint32_t> order(N);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return mem[a] > mem[b]; });
  std::vector<uint32_t> total(L, 0);
  for (uint32_t n = 0; n < N; ++n)
    for (uint32_t l = 0; l < L; ++l) total[l] += cnt[n][l];
  for (uint32_t l = 0; l < L; ++l) {
    while (total[l] < E) {
      bool moved = false;
      for (uint32_t n : order) {
        uint32_t from = L;
        for (uint32_t k = 0; k < L; ++k)
          if (k != l && (from == L || total[k] > total[from])) from = k;
        if (from == L || total[from] <= E) break;  // borrowing would uncover `from`
        if (cnt[n][from] == 0 || cnt[n][l] >= E) continue;
        uint32_t at = gpus.size();
        for (uint32_t g : gpus.of_server(n))
          if (gpus.count(g, from) > 0 && gpus.count(g, l) < E &&
              gpus.free(g) + in.expert_bytes[from] >= in.expert_bytes[l]) {
            at = g;
            break;
          }
        if (at == gpus.size()) continue;
        gpus.give(at, from);
        gpus.take(at, l);
        --cnt[n][from], --total[from];
        ++cnt[n][l], ++total[l];
        moved = true;
        if (total[l] == E) break;
      }
      if (!moved)
        throw Error("placement prism: layer " + std::to_string(l) + ": " + std::to_string(E - total[l]) +
                    " experts find no slot after Alg. 1's rebalancing (experts of different sizes leave the GPUs' "
                    "memory in pieces that fit no expert of this layer)");
    }
  }
  return cnt;
}

std::vector<std::vector<bool>> prism_assign(const PlacementInput& in, const std::vector<std::vector<uint32_t>>& counts,
                                            bool cover) {
  const auto N = static_cast<uint32_t>(in.servers.size());
  const uint32_t E = in.experts;
  std::vector<std::vector<bool>> held(N, std::vector<bool>(in.keys(), false));
  std::vector<uint32_t> pref(E), copies(E);
  for (uint32_t l = 0; l < in.layers; ++l) {
    const uint32_t base = l * E;
    std::fill(copies.begin(), copies.end(), 0u);
    for (uint32_t n = 0; n < N; ++n) {
      std::iota(pref.begin(), pref.end(), 0u);
      const auto& f = in.load[n];
      std::stable_sort(pref.begin(), pref.end(), [&](uint32_t a, uint32_t b) { return f[base + a] > f[base + b]; });
      for (uint32_t i = 0; i < counts[n][l]; ++i) {
        held[n][base + pref[i]] = true;
        ++copies[pref[i]];
      }
    }
    if (!cover) continue;
    uint32_t unassigned = 0;
    for (uint32_t e = 0; e < E; ++e) unassigned += copies[e] == 0;
    // Server n's least-used duplicate of layer l (E when none) and its duplicate count.
    const auto least_dup = [&](uint32_t n, uint32_t* dups) {
      uint32_t d = E;
      *dups = 0;
      for (uint32_t e = 0; e < E; ++e)
        if (held[n][base + e] && copies[e] >= 2) {
          ++*dups;
          if (d == E || in.load[n][base + e] < in.load[n][base + d]) d = e;
        }
      return d;
    };
    std::vector<uint32_t> order(N);
    while (unassigned > 0) {
      std::vector<uint32_t> dups(N);
      std::vector<double> loss(N);
      for (uint32_t n = 0; n < N; ++n) {
        const uint32_t d = least_dup(n, &dups[n]);
        loss[n] = d == E ? 0 : in.load[n][base + d];
      }
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return dups[a] != dups[b] ? dups[a] < dups[b] : loss[a] < loss[b];
      });
      for (uint32_t n : order) {
        if (unassigned == 0) break;
        uint32_t nd = 0;
        const uint32_t rep = least_dup(n, &nd);
        if (rep == E) continue;  // nothing this server may give up without uncovering it
        uint32_t e = E;
        for (uint32_t x = 0; x < E; ++x)
          if (copies[x] == 0 && (e == E || in.load[n][base + x] > in.load[n][base + e])) e = x;
        held[n][base + rep] = false;
        --copies[rep];
        held[n][base + e] = true;
        ++copies[e];
        --unassigned;
      }
    }
  }
  return held;
}

}  // namespace moesim::placement

namespace moesim::policies {
namespace {

class Prism final : public PlacementPolicy {
 protected:
  Placement do_place(const PlacementInput& in) override {
    placement::GpuTable gpus(in);
    const auto counts = placement::prism_counts(in, gpus);
    const auto held = placement::prism_assign(in, counts);
    Placement p = placement::empty_placement(in);
    std::vector<uint32_t> mine;
    for (uint32_t n = 0; n < in.servers.size(); ++n)
      for (uint32_t l = 0; l < in.layers; ++l) {
        const uint32_t base = l * in.experts;
        mine.clear();
        for (uint32_t e = 0; e < in.experts; ++e)
          if (held[n][base + e]) mine.push_back(e);
        const auto& f = in.load[n];
        std::stable_sort(mine.begin(), mine.end(), [&](uint32_t a, uint32_t b) { return f[base + a] > f[base + b]; });
        size_t next = 0;
        for (uint32_t g : gpus.of_server(n))
          for (uint32_t k = 0; k < gpus.count(g, l); ++k)
            placement::add_replica(p, base + mine[next++], gpus.replica(g));
      }
    return p;
  }
};

}  // namespace

MOESIM_REGISTER(PlacementRegistry, "prism",
                "Prism §III-C: per-server layer counts proportional to the activation entropy with the coverage "
                "repair (Alg. 1), then each server's most frequent experts with unplaced experts swapped in for "
                "duplicates (Alg. 2); minimizes the remote load of Eq. 2",
                {}, [](const Params&) -> std::unique_ptr<PlacementPolicy> { return std::make_unique<Prism>(); });

}  // namespace moesim::policies
