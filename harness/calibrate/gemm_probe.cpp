#include "harness/calibrate/gemm_probe.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "exec/store_reader.h"
#include "exec/thread_cpu.h"
#include "harness/latency_summary.h"
#include "kernels/bf16.h"
#include "kernels/expert_ffn.h"

namespace moesim::harness {
namespace {

constexpr uint64_t kRotateBytes = uint64_t{48} << 20;

// The median CPU time of one call of `f`: one call to warm caches and scratch, then calls until
// `seconds` have passed (at least 3).
template <typename F>
double time_call(F&& f, double seconds) {
  f();
  std::vector<double> t;
  double total = 0;
  while (t.size() < 3 || (total < seconds && t.size() < 1000)) {
    const double a = exec::thread_cpu_seconds();
    f();
    const double d = exec::thread_cpu_seconds() - a;
    t.push_back(d);
    total += d;
  }
  return quantile(t, 0.5);
}

}  // namespace

std::vector<uint32_t> gemm_probe_ladder(uint32_t max_tokens) {
  const uint32_t top = std::max<uint32_t>(max_tokens, 4);
  std::vector<uint32_t> ladder;
  for (uint32_t t = 2; t <= top; t = t < 4 ? t + 1 : t + t / 2) ladder.push_back(t);
  if (ladder.back() != top) ladder.push_back(top);
  return ladder;
}

GemmProbe probe_gemms(const std::string& store, const std::vector<uint64_t>& dense_bytes, uint32_t max_tokens,
                      double seconds_per_point) {
  const exec::StoreReader reader(store);
  const exec::StoreEntry* gate = reader.find_swiglu(0, 0, exec::StoreReader::SwigluRole::kGate);
  if (!gate || gate->shape.size() != 2)
    throw Error(store +
                ": no gate tensor (gate_proj or w1) of layer 0 expert 0 to time the expert's GEMMs at");
  GemmProbe p;
  p.inter = static_cast<uint32_t>(gate->shape[0]);
  p.hidden = static_cast<uint32_t>(gate->shape[1]);
  const uint64_t dense = dense_bytes.empty() ? 0 : *std::max_element(dense_bytes.begin(), dense_bytes.end());
  p.dense_rows = p.hidden > 0 ? dense / 2 / p.hidden : 0;
  const std::vector<uint32_t> ladder = gemm_probe_ladder(max_tokens);
  const uint32_t top = ladder.back();
  // Weights of a small nonzero value (denormals or NaNs could change the time), activations alike. Each kind
  // rotates over copies of its weights filling kRotateBytes, so that a call finds its weights out of the
  // core's cache, as a run's op does (its expert was read or recovered by another thread; a layer's dense
  // weights were last touched a step ago), not still hot from the call before.
  const uint16_t w = kernels::f32_to_bf16(0.01f);
  const uint64_t expert_elems = uint64_t{p.hidden} * p.inter;
  const uint64_t dense_elems = p.dense_rows * p.hidden;
  auto copies = [](uint64_t elems) {
    return static_cast<size_t>(std::clamp<uint64_t>(kRotateBytes / std::max<uint64_t>(2 * elems, 1), 1, 64));
  };
  const size_t ne = copies(3 * expert_elems), nd = dense_elems ? copies(dense_elems) : 0;
  const std::vector<uint16_t> experts(ne * 3 * expert_elems, w), dense_w(nd * dense_elems, w);
  const std::vector<float> x(size_t{top} * std::max<uint64_t>(p.hidden, 1), 0.01f);
  std::vector<float> y(size_t{top} * std::max<uint64_t>({p.hidden, p.inter, p.dense_rows, 1}));
  size_t ie = 0, id = 0;
  for (uint32_t t : ladder) {
    GemmProbe::Point e{true, t, kernels::expert_ffn_flops(p.hidden, p.inter, t), 0};
    e.seconds = time_call(
        [&] {
          const uint16_t* g = experts.data() + (ie++ % ne) * 3 * expert_elems;
          kernels::expert_ffn(g, g + expert_elems, g + 2 * expert_elems, p.hidden, p.inter, x.data(),
                              y.data(), t);
        },
        seconds_per_point);
    p.points.push_back(e);
    if (nd == 0) continue;
    GemmProbe::Point d{false, t, 2.0 * static_cast<double>(p.dense_rows) * p.hidden * t, 0};
    d.seconds = time_call(
        [&] {
          kernels::dense_gemm(dense_w.data() + (id++ % nd) * dense_elems, p.dense_rows, p.hidden, x.data(),
                              y.data(), t);
        },
        seconds_per_point);
    p.points.push_back(d);
  }
  for (int k = 0; k < 2; ++k) {
    std::vector<double> fx, fy;
    for (const GemmProbe::Point& q : p.points)
      if (q.expert == (k == 1)) {
        fx.push_back(q.flops);
        fy.push_back(q.seconds);
      }
    // Relative weights: every point of the ladder as good as the next (harness/calibrate/calibrate_fit.h).
    if (fx.size() >= 2) p.line[k] = fit_line_or_origin(fx, fy, false, true);
  }
  return p;
}

GemmLines lines_on_runs(const GemmProbe& probe, const GemmOps& runs) {
  GemmLines g;
  for (int k = 0; k < 2; ++k) {
    if (probe.line[k].points < 2) continue;
    Fit& f = g.line[k];
    f = probe.line[k];
    if (runs.flops[k].empty()) continue;  // the probe's own residuals stand
    std::vector<double> fitted;
    double modelled = 0, measured = 0;
    for (size_t i = 0; i < runs.flops[k].size(); ++i) {
      fitted.push_back(f.intercept + f.slope * runs.flops[k][i]);
      modelled += fitted.back();
      measured += runs.seconds[k][i];
    }
    f.points = fitted.size();
    set_residuals(f, fitted, runs.seconds[k]);
    g.ratio[k] = modelled > 0 ? measured / modelled : 0;
  }
  return g;
}

Json gemm_probe_json(const GemmProbe& probe) {
  Json pts = Json::array();
  for (const GemmProbe::Point& q : probe.points)
    pts.push_back({{"kind", q.expert ? "expert" : "dense"},
                   {"tokens", q.tokens},
                   {"flops", q.flops},
                   {"time_s", q.seconds}});
  return {
      {"shapes",
       {{"hidden", probe.hidden}, {"expert_intermediate", probe.inter}, {"dense_rows", probe.dense_rows}}},
      {"points", pts},
      {"dense", fit_json(probe.line[0], "fixed + flops / rate (dense GEMM, 2+ tokens, alone)")},
      {"expert", fit_json(probe.line[1], "fixed + flops / rate (expert FFN, 2+ tokens, alone)")}};
}

}  // namespace moesim::harness
