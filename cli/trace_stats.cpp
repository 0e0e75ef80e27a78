// `moesim trace stats T`: options, help and the table; what it computes is harness/trace_job.h (trace_stats;
// definitions in traces/stats.h, JSON schema in docs/trace-stats.md).
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/trace_options.h"
#include "harness/trace_job.h"
#include "traces/stats.h"

namespace moesim::cli {
namespace trace_stats_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<harness::TraceStatsArgs>();
  add_trace_input(app, a->trace, "Trace file (.mtr, BigMoeOnEdge route CSV, JSONL or CSV)");
  app.add_flag("--json", a->json, "Write JSON (docs/trace-stats.md) instead of the table");
  app.add_option("--top-pairs", a->top_pairs, "Co-activated pairs reported per layer")->capture_default_str();
  add_trace_format_options(app, a->load);
  app.add_option("--model", a->load.model, "Model preset or JSON: check the trace against it");
  app.add_option("-o,--output", a->out, "Output file ('-' = standard output)")->capture_default_str();
  app.callback([a] {
    const harness::TraceStatsResult r = harness::trace_stats(*a);
    write_file_atomic(a->out, a->json ? r.doc.dump(2) + "\n" : traces::stats_to_text(r.stats));
  });
}

}  // namespace trace_stats_cmd
MOESIM_CLI_COMMAND("trace stats", "Describe a trace: entropy, rank-frequency, reuse, repeats, co-activation",
                   trace_stats_cmd::setup);
}  // namespace moesim::cli
