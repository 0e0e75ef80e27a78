#include "serving/cluster_work.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::serving {

ClusterWork build_cluster_work(const ClusterInput& in) {
  const auto N = static_cast<uint32_t>(in.servers.size());
  ClusterWork w;
  std::vector<uint32_t> count(in.model.routed_experts, 0);
  std::vector<uint16_t> touched;
  w.server_plans.assign(N, {});
  for (uint32_t n = 0; n < N; ++n) {
    for (size_t t = 0; t < in.servers[n].traces.size(); ++t) {
      const traces::Trace& tr = in.servers[n].traces[t];
      const size_t R = tr.records();
      for (size_t r = 0; r < R;) {
        const uint32_t seq = tr.seq(r);
        SequencePlan plan;
        plan.pass_begin = static_cast<uint32_t>(w.passes.size());
        uint32_t prefill_tokens = 0, prefill_passes = 0, decode_steps = 0, last_decode_step = 0,
                 first_decode_step = 0;
        bool any_decode = false;
        int64_t first_decode_end = -1;  // pass index after the first decode step's last layer
        while (r < R && tr.seq(r) == seq) {
          ClusterPass p;
          p.layer = tr.layer(r);
          p.begin = static_cast<uint32_t>(w.pass_expert.size());
          if (tr.phase(r) == traces::Phase::kPrefill) {
            // A prefill pass runs one layer over all prompt tokens: records of one layer are contiguous.
            touched.clear();
            for (; r < R && tr.seq(r) == seq && tr.phase(r) == traces::Phase::kPrefill && tr.layer(r) == p.layer;
                 ++r) {
              ++p.tokens;
              prefill_tokens = std::max(prefill_tokens, tr.step(r) + 1);
              for (uint16_t e : tr.experts(r))
                if (count[e]++ == 0) touched.push_back(e);
            }
            ++prefill_passes;
            std::sort(touched.begin(), touched.end());
            for (uint16_t e : touched) {
              w.pass_expert.push_back(e);
              w.pass_tokens.push_back(count[e]);
              count[e] = 0;
            }
          } else {
            const uint32_t step = tr.step(r);
            if (!any_decode) first_decode_step = step;
            if (!any_decode || step != last_decode_step) ++decode_steps;
            any_decode = true;
            last_decode_step = step;
            p.tokens = 1;
            for (uint16_t e : tr.experts(r)) {
              w.pass_expert.push_back(e);
              w.pass_tokens.push_back(1);
            }
            ++r;
            if (step == first_decode_step) first_decode_end = static_cast<int64_t>(w.passes.size()) + 1;
          }
          p.end = static_cast<uint32_t>(w.pass_expert.size());
          w.passes.push_back(p);
        }
        plan.pass_end = static_cast<uint32_t>(w.passes.size());
        // The first token comes out of the prompt's last pass; without a prompt, out of the first decode step.
        if (prefill_passes > 0) {
          plan.first_token_pass = prefill_passes - 1;
          plan.tokens_after_first = decode_steps;
        } else {
          plan.first_token_pass = static_cast<uint32_t>(first_decode_end) - 1 - plan.pass_begin;
          plan.tokens_after_first = decode_steps - 1;
        }
        plan.tokens = prefill_tokens + decode_steps;
        w.server_plans[n].push_back(static_cast<uint32_t>(w.plans.size()));
        w.plans.push_back(plan);
      }
    }
    if (w.server_plans[n].empty())
      throw Error("cluster: server \"" + in.servers[n].name + "\": its traces hold no sequence");
  }
  return w;
}

}  // namespace moesim::serving
