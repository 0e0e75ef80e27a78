// An exact execution model for scheduling-policy tests: builds one sparse-layer invocation in the graph
// shape of core/scheduling.h (the pipeline's: per tensor E-chunk read/decompression pairs, SM read,
// transfer, recovery; one expert compute joining the tensors) from ZipMoE's task parameters (state, u,
// rho*u/K, c, p; §3.3), and runs a graph as a non-preemptive work-conserving list schedule: whenever a unit
// of a resource is free it starts the ready op of lowest (priority, index) -- the Platform contract. Every
// op's duration travels in Op::flops so that a test OpEstimator can return it; durations are small
// integers, so all times are exact.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/compression_state.h"
#include "core/op_graph.h"
#include "core/platform.h"
#include "core/scheduling.h"

namespace moesim::test {

struct ExpertSpec {
  ExpertState state = ExpertState::kMissed;
  double p = 1;  // expert compute time p_n
};

struct LayerSpec {
  std::vector<ExpertSpec> experts;
  uint32_t tensors = 1;
  uint32_t shards = 1;     // K
  uint32_t workers = 1;    // L
  double u = 1;            // SM-chunk read
  double e = 1;            // one E-chunk read, rho*u/K
  double c = 1;            // one decompression
  double r = 0;            // recovery (GPU)
  double transfer = 0;     // host -> device (link)
  bool full_tensor = false;  // the offloading baseline: one read of u per tensor, no decompression
};

struct Layer {
  OpGraph graph;
  std::vector<ExpertRequest> requests;
  uint32_t dense = 0;
};

inline Layer build_layer(const LayerSpec& s) {
  Layer l;
  auto op = [](OpKind k, double d) {
    Op o;
    o.kind = k;
    o.resource = default_resource(k);
    o.flops = d;
    return o;
  };
  l.dense = l.graph.add(op(OpKind::kDenseCompute, 0));
  for (size_t x = 0; x < s.experts.size(); ++x) {
    const ExpertSpec& ex = s.experts[x];
    ExpertRequest req;
    req.expert = static_cast<uint16_t>(x);
    req.tokens = 1;
    req.state = ex.state;
    req.first_op = static_cast<uint32_t>(l.graph.size());
    std::vector<uint32_t> tails;
    if (ex.state != ExpertState::kFull) {
      for (uint32_t t = 0; t < s.tensors; ++t) {
        auto label = [&](Op o) {
          o.expert = req.expert;
          o.tensor = static_cast<uint16_t>(t);
          return o;
        };
        if (s.full_tensor) {
          const uint32_t rd = l.graph.add(label(op(OpKind::kSsdRead, s.u)), {l.dense});
          tails.push_back(l.graph.add(label(op(OpKind::kTransfer, s.transfer)), {rd}));
          continue;
        }
        const bool read_e = ex.state == ExpertState::kMissed || ex.state == ExpertState::kSM;
        const bool read_sm = ex.state == ExpertState::kMissed || ex.state == ExpertState::kE;
        std::vector<uint32_t> into;
        for (uint32_t k = 0; k < s.shards; ++k) {
          uint32_t dep = l.dense;
          if (read_e) {
            Op rd = label(op(OpKind::kSsdRead, s.e));
            rd.part = TensorPart::kE;
            rd.shard = static_cast<uint16_t>(k);
            dep = l.graph.add(rd, {l.dense});
          }
          Op dc = label(op(OpKind::kDecompress, s.c));
          dc.part = TensorPart::kE;
          dc.shard = static_cast<uint16_t>(k);
          into.push_back(l.graph.add(dc, {dep}));
        }
        if (read_sm) {
          Op rd = label(op(OpKind::kSsdRead, s.u));
          rd.part = TensorPart::kSm;
          into.push_back(l.graph.add(rd, {l.dense}));
        }
        const uint32_t xfer = l.graph.add(label(op(OpKind::kTransfer, s.transfer)), into);
        tails.push_back(l.graph.add(label(op(OpKind::kRecover, s.r)), {xfer}));
      }
    }
    if (tails.empty()) tails.push_back(l.dense);
    Op comp = op(OpKind::kExpertCompute, ex.p);
    comp.expert = req.expert;
    req.compute_op = l.graph.add(comp, tails);
    l.requests.push_back(req);
  }
  l.graph.finalize();
  return l;
}

// Op durations read back from Op::flops (see above).
class FlopsEstimator final : public OpEstimator {
 public:
  double estimate(const Op& op) const override { return op.flops; }
};

struct Schedule {
  std::vector<double> start, end;
  std::vector<uint32_t> unit;
  double makespan = 0;
};

// units: per ResourceClass (kSsd, kCpu, kGpu, kLink).
inline Schedule list_schedule(const OpGraph& g, std::array<uint32_t, kResourceClasses> units) {
  const size_t n = g.size();
  Schedule s;
  s.start.assign(n, -1);
  s.end.assign(n, -1);
  s.unit.assign(n, 0);
  std::array<std::vector<double>, kResourceClasses> free_at;
  for (size_t r = 0; r < kResourceClasses; ++r) free_at[r].assign(std::max(units[r], 1u), 0.0);
  size_t started = 0;
  double now = 0;
  while (started < n) {
    // Start, at `now`, every op that is ready and finds a free unit, lowest (priority, index) first.
    for (bool progress = true; progress;) {
      progress = false;
      size_t best = n;
      for (size_t i = 0; i < n; ++i) {
        if (s.start[i] >= 0) continue;
        bool ready = true;
        for (uint32_t d : g.deps(static_cast<uint32_t>(i)))
          if (s.end[d] < 0 || s.end[d] > now) ready = false;
        if (!ready) continue;
        const auto& fr = free_at[static_cast<size_t>(g.op(static_cast<uint32_t>(i)).resource)];
        if (*std::min_element(fr.begin(), fr.end()) > now) continue;
        if (best == n || g.op(static_cast<uint32_t>(i)).priority < g.op(static_cast<uint32_t>(best)).priority)
          best = i;
      }
      if (best == n) break;
      const Op& o = g.op(static_cast<uint32_t>(best));
      auto& fr = free_at[static_cast<size_t>(o.resource)];
      const auto u = static_cast<size_t>(std::min_element(fr.begin(), fr.end()) - fr.begin());
      s.start[best] = now;
      s.end[best] = now + o.flops;
      s.unit[best] = static_cast<uint32_t>(u);
      fr[u] = s.end[best];
      ++started;
      progress = true;
    }
    // Next event: the earliest end after now.
    double next = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i)
      if (s.end[i] > now) next = std::min(next, s.end[i]);
    if (next == std::numeric_limits<double>::infinity()) break;
    now = next;
  }
  for (double e : s.end) s.makespan = std::max(s.makespan, e);
  return s;
}

inline std::array<uint32_t, kResourceClasses> layer_units(const LayerSpec& s) {
  std::array<uint32_t, kResourceClasses> u{};
  u[static_cast<size_t>(ResourceClass::kSsd)] = 1;
  u[static_cast<size_t>(ResourceClass::kCpu)] = s.workers;
  u[static_cast<size_t>(ResourceClass::kGpu)] = 1;
  u[static_cast<size_t>(ResourceClass::kLink)] = 1;
  return u;
}

}  // namespace moesim::test
