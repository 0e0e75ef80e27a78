// The replay of an engine's log and its route trace shared by `validate --log` and `calibrate --from-log`
// (harness/log_replay.h).
#include "harness/log_replay.h"

#include "base/error.h"
#include "base/units.h"
#include "harness/latency_summary.h"
#include "harness/sim_runner.h"

namespace moesim::harness {
namespace {

// The decode steps of the stream, in order (workload step indices).
std::vector<uint32_t> decode_steps(const traces::LookupStream& s) {
  std::vector<uint32_t> d;
  for (uint32_t i = 0; i < s.steps(); ++i)
    if (s.step_phase[i] == static_cast<uint8_t>(traces::Phase::kDecode)) d.push_back(i);
  return d;
}

}  // namespace

LogRun load_log_run(RunArgs& a, const std::string& log_path, const std::string& log_fields) {
  const traces::LogFieldMap fields = traces::parse_log_fields(log_fields);
  LogRun r;
  r.trace_path = a.trace;
  r.log = traces::read_engine_log(log_path, fields);
  prepare_run(a, r.prepared);
  r.args = a;
  const traces::LookupStream& s = r.prepared.stream;
  const std::string pair = "the log " + log_path + " and the trace " + a.trace;
  if (s.batch != 1 || s.seq_first_step.size() != 1)
    throw Error(pair + ": a per-token log is of one sequence at batch 1; the run has " +
                std::to_string(s.seq_first_step.size()) + " sequences at batch " + std::to_string(s.batch));
  const std::vector<uint32_t> dec = decode_steps(s);
  if (dec.size() != r.log.tokens.size())
    throw Error(pair + " are not of one run: the log has " + std::to_string(r.log.tokens.size()) +
                " token rows, the trace " + std::to_string(dec.size()) + " decode steps");
  uint32_t prompt = 0;
  for (uint32_t i = 0; i < s.steps(); ++i)
    if (s.step_phase[i] == static_cast<uint8_t>(traces::Phase::kPrefill)) prompt += s.step_tokens[i];
  if (prompt != r.log.n_prompt)
    throw Error(pair + " are not of one run: the log's summary (line " + std::to_string(r.log.summary_line) +
                ") has " + std::to_string(r.log.n_prompt) + " prompt tokens, the trace " +
                std::to_string(prompt));
  return r;
}

std::vector<ReplayStep> replay_steps(const LogRun& r, const HardwareProfile& hw, serving::RunResult* run) {
  const PreparedRun& p = r.prepared;
  serving::SystemConfig cfg = p.cfg;
  cfg.record_timeline = true;
  cfg.timeline_first_step = 0;
  cfg.timeline_last_step = UINT32_MAX;
  const sim::SimOptions so = sim_options(r.args, hw, r.args.workers);
  serving::RunResult res = run_simulated(cfg, p.stream, p.trace.info(), p.costs, hw, so);
  const std::vector<uint32_t> dec = decode_steps(p.stream);
  std::vector<int64_t> index(p.stream.steps(), -1);
  for (size_t i = 0; i < dec.size(); ++i) index[dec[i]] = static_cast<int64_t>(i);
  std::vector<ReplayStep> out(dec.size());
  for (const auto& e : res.result.timeline) {
    if (e.op.kind != OpKind::kSsdRead || index[e.step] < 0) continue;
    ReplayStep& st = out[static_cast<size_t>(index[e.step])];
    ++st.reads;
    st.read_bytes += static_cast<double>(e.op.bytes);
  }
  const ModelCosts& c = p.costs.costs;
  for (size_t i = 0; i < dec.size(); ++i) {
    const uint32_t step = dec[i];
    for (uint32_t v = p.stream.step_begin[step]; v < p.stream.step_begin[step + 1]; ++v) {
      const uint16_t layer = p.stream.inv_layer[v];
      out[i].weight_bytes += static_cast<double>(c.dense_bytes[layer]);
      out[i].flops += c.dense_flops_per_token * p.stream.step_tokens[step];
      for (uint32_t k = p.stream.inv_begin[v]; k < p.stream.inv_begin[v + 1]; ++k) {
        out[i].weight_bytes += static_cast<double>(c.expert_bytes[layer]);
        out[i].flops += c.expert_flops_per_token * p.stream.tokens[k];
      }
    }
    const StepTiming& t = res.result.steps[step];
    out[i].seconds = t.end - t.start;
  }
  double sim_bytes = 0, log_bytes = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    sim_bytes += out[i].read_bytes;
    log_bytes += r.log.tokens[i].read_bytes;
  }
  if (!(log_bytes > 0.9 * sim_bytes && log_bytes < 1.1 * sim_bytes))
    throw Error("the log " + r.log.origin + " and the trace " + r.trace_path +
                " are not of one run (another model, budget or policy?): the log read " +
                format_bytes(static_cast<uint64_t>(log_bytes)) +
                " in its decode tokens, the simulated replay " +
                format_bytes(static_cast<uint64_t>(sim_bytes)) + " (they must agree within 10%)");
  if (run) *run = std::move(res);
  return out;
}

Json LogErrors::json() const {
  return {{"errors", {{"cost", {{"tpot", tpot()}, {"ttft", ttft()}}}}},
          {"sim", {{"tpot_s", sim_tpot}, {"ttft_s", sim_ttft}, {"stall_s", sim_stall}}},
          {"log", {{"tpot_s", log_tpot}, {"ttft_s", log_ttft}, {"stall_s", log_stall}}}};
}

LogErrors log_errors(const LogRun& r, const HardwareProfile& hw) {
  serving::RunResult res;
  (void)replay_steps(r, hw, &res);
  LogErrors e;
  const LatencySummary f = latency_summary_of(res.result);
  e.sim_tpot = f.tpot;
  e.sim_ttft = f.ttft;
  e.log_tpot = r.log.mean_wall_ms() / 1e3;
  e.log_ttft = r.log.prefill_s;
  // The simulated stall: decode time not spent computing (dense, experts and their copies).
  double busy = 0;
  size_t decode = 0;
  for (const auto& s : res.result.steps) decode += s.phase == 1;
  for (const auto& ev : res.result.timeline)
    if (res.result.steps[ev.step].phase == 1 &&
        (ev.op.kind == OpKind::kExpertCompute || ev.op.kind == OpKind::kDenseCompute ||
         (ev.op.kind == OpKind::kTransfer && ev.op.resource == ResourceClass::kCpu)))
      busy += ev.timing.end - ev.timing.start;
  e.sim_stall = decode ? f.tpot - busy / static_cast<double>(decode) : 0;
  double stall = 0;
  for (const auto& t : r.log.tokens) stall += t.stall_ms;
  e.log_stall = stall / 1e3 / static_cast<double>(r.log.tokens.size());
  return e;
}

}  // namespace moesim::harness
