// `moesim trace info T [--json] [--model M] [--format F] [--fields MAP]`: what a trace holds -- model
// shape, sequences, prefill/decode tokens, lookups under the lookup semantics of traces/lookup_stream.h
// (batch 1), missing cells, optional columns, expert sizes. Reads every importable format (load_trace).
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <numeric>

#include "base/atomic_file.h"
#include "base/json_io.h"
#include "base/units.h"
#include "base/warnings.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "core/run_info.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"
#include "traces/trace_summary.h"

namespace moesim::cli {
namespace trace_info_cmd {

struct Options {
  std::string path;
  bool json = false;
  traces::LoadOptions load;
  std::string out = "-";
};

void run(const Options& o) {
  require_trace_input(o.path);
  check_output_writable(o.out);
  const traces::Trace t = traces::load_trace(o.path, o.load);
  warn_trace_plausibility(o.path, t, 1);
  const traces::TraceInfo& info = t.info();
  const traces::LookupStream ls = traces::build_lookup_stream(t, 1);
  // One description for both outputs: the same keys as replay's and trace stats' "trace".
  const Json summary = traces::trace_summary_json(t, o.path, ls);
  const std::string source_format =
      info.provenance.contains("format") && info.provenance["format"].is_string()
          ? info.provenance["format"].get<std::string>()
          : "";

  if (o.json) {
    Json config = {
        {"trace", o.path}, {"format", o.load.format}, {"fields", o.load.fields}, {"model", o.load.model}};
    Json j = Json::object();
    j["header"] = run_header("trace info", config);
    j["warnings"] = warnings_json();
    j.update(summary);
    write_json_file(o.out, j);
    return;
  }
  std::string text;
  text += strprintf("trace:            %s%s\n", o.path.c_str(),
                    source_format.empty() ? "" : (" (from " + source_format + ")").c_str());
  text += strprintf("model:            %s%s\n", info.model.empty() ? "(unnamed)" : info.model.c_str(),
                    info.synthetic ? "  [SYNTHETIC]" : "");
  text += strprintf("shape:            %u MoE layers x %u experts, top-%u\n", info.layers, info.experts,
                    info.top_k);
  text += strprintf("sequences:        %llu\n", summary["sequences"].get<unsigned long long>());
  text += strprintf("prefill tokens:   %llu\n", summary["prefill_tokens"].get<unsigned long long>());
  text += strprintf("decode tokens:    %llu\n", summary["decode_tokens"].get<unsigned long long>());
  text += strprintf("records:          %zu (missing cells: %llu)\n", t.records(),
                    static_cast<unsigned long long>(info.missing_cells));
  text += strprintf("lookups (B=1):    %zu in %zu layer invocations; decode %llu\n", ls.lookups(),
                    ls.invocations(), static_cast<unsigned long long>(ls.decode_lookups()));
  std::string opt;
  for (const auto& c : summary["optional_columns"]) opt += (opt.empty() ? "" : ", ") + c.get<std::string>();
  text += strprintf("optional columns: %s\n", opt.empty() ? "none" : opt.c_str());
  if (info.expert_bytes.empty()) {
    text += strprintf("expert bytes:     unknown (give --model)\n");
  } else {
    const auto [lo, hi] = std::minmax_element(info.expert_bytes.begin(), info.expert_bytes.end());
    const uint64_t total = std::accumulate(info.expert_bytes.begin(), info.expert_bytes.end(), uint64_t{0});
    if (*lo == *hi)
      text += strprintf("expert bytes:     %s per expert (all layers)\n", format_bytes(*lo).c_str());
    else
      text += strprintf("expert bytes:     %s .. %s per expert (mean %s)\n", format_bytes(*lo).c_str(),
                        format_bytes(*hi).c_str(), format_bytes(total / info.expert_bytes.size()).c_str());
    text += strprintf("all experts:      %s\n", format_bytes(total * info.experts).c_str());
  }
  write_file_atomic(o.out, text);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  add_trace_input(app, o->path, "trace file (.mtr, route_trace CSV, JSONL or CSV)");
  app.add_flag("--json", o->json, "print JSON (starts with the run header) instead of text");
  app.add_option("--model", o->load.model,
                 "model preset or JSON: layers/experts come from it; the trace must fit");
  add_trace_format_options(app, o->load);
  app.add_option("-o,--output", o->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([o] { run(*o); });
}

}  // namespace trace_info_cmd
MOESIM_CLI_COMMAND("trace info", "Describe a trace: shape, tokens, lookups, missing cells, columns",
                   trace_info_cmd::setup);
}  // namespace moesim::cli
