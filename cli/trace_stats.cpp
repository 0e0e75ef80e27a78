// `moesim trace stats T`: per-layer activation entropy, rank-frequency curve, reuse distances, next-token
// repeat rate and co-activated pairs of a trace (definitions in traces/stats.h, JSON schema in
// docs/trace-stats.md).
#include <cstdio>
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "base/warnings.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "core/run_info.h"
#include "traces/stats.h"
#include "traces/trace_io.h"
#include "traces/trace_summary.h"

namespace moesim::cli {
namespace trace_stats_cmd {

struct Args {
  std::string trace;
  traces::LoadOptions load;  // --format, --fields, --model
  bool json = false;
  uint32_t top_pairs = 10;
  std::string out = "-";
};

void run(const Args& a) {
  require_trace_input(a.trace);
  require_at_least("--top-pairs", a.top_pairs, 1);
  check_output_writable(a.out);
  const traces::Trace t = traces::load_trace(a.trace, a.load);
  warn_trace_plausibility(a.trace, t, 1);
  traces::StatsOptions so;
  so.top_pairs = a.top_pairs;
  const traces::TraceStats s = traces::compute_stats(t, so);
  std::string text;
  if (a.json) {
    const Json config = {{"trace", a.trace},
                         {"format", a.load.format},
                         {"fields", a.load.fields},
                         {"model", a.load.model},
                         {"top_pairs", a.top_pairs}};
    Json j = traces::stats_to_json(s, run_header("trace stats", config),
                                   traces::trace_summary_json(t, a.trace, traces::build_lookup_stream(t, 1)));
    j["warnings"] = warnings_json();
    text = j.dump(2) + "\n";
  } else {
    text = traces::stats_to_text(s);
  }
  write_file_atomic(a.out, text);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  add_trace_input(app, a->trace, "Trace file (.mtr, BigMoeOnEdge route CSV, JSONL or CSV)");
  app.add_flag("--json", a->json, "Write JSON (docs/trace-stats.md) instead of the table");
  app.add_option("--top-pairs", a->top_pairs, "Co-activated pairs reported per layer")->capture_default_str();
  add_trace_format_options(app, a->load);
  app.add_option("--model", a->load.model, "Model preset or JSON: check the trace against it");
  app.add_option("-o,--output", a->out, "Output file ('-' = standard output)")->capture_default_str();
  app.callback([a] { run(*a); });
}

}  // namespace trace_stats_cmd
MOESIM_CLI_COMMAND("trace stats", "Describe a trace: entropy, rank-frequency, reuse, repeats, co-activation",
                   trace_stats_cmd::setup);
}  // namespace moesim::cli
