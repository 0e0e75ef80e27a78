// Prism's migration rule (Accelerating Edge Inference for Distributed MoE Models with Latency-Optimized Expert
// Placement, §III-C.3): every interval the scheduler plans again on the accumulated load, giving P', and
//
//   T_mig(P, P') = sum_{n,g,e} I[z_{n,g}^e != z'_{n,g}^e] * m_e / speed_{n,g}          (Eq. 3)
//   migrate iff  C(P') + T_mig(P, P') < C(P)                                          (Eq. 4)
//
// with C the expected remote invocation cost of Eq. 2. Eq. 2 counts invocations and Eq. 3 seconds; Prism
// §IV-A prices an invocation by the historical time of remote executions, so C here is Eq. 2 times
// MigrationCosts::remote_invocation_s. Contract in core/placement.h.
#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "core/placement.h"

namespace moesim {

uint64_t MigrationDecision::bytes_loaded() const {
  uint64_t b = 0;
  for (const auto& m : loads) b += m.bytes;
  return b;
}

MigrationDecision decide_migration(const Placement& cur, const Placement& plan,
                                   const std::vector<std::vector<double>>& load,
                                   const std::vector<uint64_t>& expert_bytes, const MigrationCosts& costs) {
  if (cur.layers != plan.layers || cur.experts != plan.experts || cur.replicas.size() != plan.replicas.size() ||
      cur.replicas.size() != static_cast<size_t>(cur.layers) * cur.experts)
    throw Error("migration: the current placement and the new plan have different shapes");
  if (expert_bytes.size() != cur.layers)
    throw Error("migration: expert_bytes has " + std::to_string(expert_bytes.size()) + " entries, expected " +
                std::to_string(cur.layers));
  if (!(costs.remote_invocation_s >= 0) || !std::isfinite(costs.remote_invocation_s))
    throw Error("migration: the remote invocation cost must be a finite number of seconds >= 0");
  const auto speed = [&](Replica r) {
    if (r.server >= costs.gpu_io_bytes_per_s.size() || r.gpu >= costs.gpu_io_bytes_per_s[r.server].size())
      throw Error("migration: no I/O speed for server " + std::to_string(r.server) + " GPU " + std::to_string(r.gpu));
    const double s = costs.gpu_io_bytes_per_s[r.server][r.gpu];
    if (!(s > 0) || !std::isfinite(s))
      throw Error("migration: server " + std::to_string(r.server) + " GPU " + std::to_string(r.gpu) +
                  ": the I/O speed must be positive");
    return s;
  };
  MigrationDecision d;
  d.cost_current_s = proxy_cost(cur, load) * costs.remote_invocation_s;
  d.cost_new_s = proxy_cost(plan, load) * costs.remote_invocation_s;
  for (uint32_t key = 0; key < cur.replicas.size(); ++key) {
    const auto& a = cur.replicas[key];
    const auto& b = plan.replicas[key];
    ExpertMove m;
    m.layer = key / cur.experts;
    m.expert = key % cur.experts;
    m.bytes = expert_bytes[m.layer];
    for (const Replica& r : b)
      if (!std::binary_search(a.begin(), a.end(), r)) {
        m.to = r;
        m.seconds = static_cast<double>(m.bytes) / speed(r);
        m.has_source = !a.empty();
        if (m.has_source) {
          const auto same = std::find_if(a.begin(), a.end(), [&](Replica x) { return x.server == r.server; });
          m.from = same != a.end() ? *same : a.front();
        }
        d.migration_s += m.seconds;
        d.loads.push_back(m);
      }
    for (const Replica& r : a)
      if (!std::binary_search(b.begin(), b.end(), r)) {
        ExpertMove drop = m;
        drop.to = r;
        drop.has_source = false;
        drop.from = {};
        drop.seconds = static_cast<double>(m.bytes) / speed(r);
        if (costs.count_removals) d.migration_s += drop.seconds;
        d.drops.push_back(drop);
      }
  }
  d.migrate = d.cost_new_s + d.migration_s < d.cost_current_s;
  return d;
}

}  // namespace moesim
