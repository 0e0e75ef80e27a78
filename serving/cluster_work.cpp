#include "serving/cluster_work.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/units.h"

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
            for (; r < R && tr.seq(r) == seq && tr.phase(r) == traces::Phase::kPrefill &&
                   tr.layer(r) == p.layer;
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
        // The first token comes out of the prompt's last pass; without a prompt, out of the first decode
        // step.
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

void check_cluster_run(const ClusterInput& in, const ClusterOptions& opt, const ClusterPlatform& platform) {
  constexpr double kMaxRequests = 20e6;  // about 1 GB of request state, and within a token's id bits
  const auto N = static_cast<uint32_t>(in.servers.size());
  if (N == 0) throw Error("cluster: no servers");
  if (platform.servers() != N)
    throw Error("cluster: the platform has " + std::to_string(platform.servers()) + " servers, the spec " +
                std::to_string(N));
  if (!(opt.duration_s > 0)) throw UsageError("--duration must be positive");
  if (!(opt.bucket_s > 0)) throw UsageError("the time bucket must be positive");
  // Every request is kept until the end (its latency), so an arrival rate far beyond what a cluster can
  // serve would exhaust memory instead of finishing: refuse it up front.
  double expected = 0;
  for (const ClusterServer& s : in.servers)
    expected += s.arrival.kind == ArrivalSpec::Kind::kPoisson
                    ? opt.duration_s / s.arrival.mean_interval_s
                    : static_cast<double>(std::lower_bound(s.arrival.times_s.begin(), s.arrival.times_s.end(),
                                                           opt.duration_s) -
                                          s.arrival.times_s.begin());
  if (expected > kMaxRequests)
    throw Error("cluster: the arrivals would bring about " + std::to_string(std::llround(expected)) +
                " requests in " + format_seconds(opt.duration_s) + ", more than " +
                std::to_string(static_cast<uint64_t>(kMaxRequests)) +
                " the simulation keeps: shorten --duration or lengthen the arrival intervals");
  for (const ClusterServer& s : in.servers)
    if (s.gpus == 0) throw Error("cluster: server \"" + s.name + "\" has no GPU");
}

ClusterArrivals::ClusterArrivals(const ClusterInput& in, const ClusterOptions& opt) : in_(in), opt_(opt) {
  const Rng base(opt.seed);
  const auto N = static_cast<uint32_t>(in.servers.size());
  for (uint32_t n = 0; n < N; ++n) {
    arrival_rng_.push_back(base.split(2 * n));
    draw_rng_.push_back(base.split(2 * n + 1));
  }
  arrivals_.assign(N, 0);
  next_timestamp_.assign(N, 0);
  last_arrival_.assign(N, 0.0);
}

double ClusterArrivals::next(uint32_t n) {
  const ArrivalSpec& a = in_.servers[n].arrival;
  double t = 0;
  if (a.kind == ArrivalSpec::Kind::kPoisson) {
    t = last_arrival_[n] - a.mean_interval_s * std::log(1 - arrival_rng_[n].uniform());
    last_arrival_[n] = t;
  } else {
    if (next_timestamp_[n] >= a.times_s.size()) return -1;
    t = a.times_s[next_timestamp_[n]++];
  }
  return t < opt_.duration_s ? t : -1;
}

uint32_t ClusterArrivals::draw(uint32_t n, const ClusterWork& w) {
  const std::vector<uint32_t>& pool = w.server_plans[n];
  const uint64_t k = opt_.random_draw ? draw_rng_[n].below(pool.size()) : arrivals_[n] % pool.size();
  ++arrivals_[n];
  return pool[k];
}

}  // namespace moesim::serving
