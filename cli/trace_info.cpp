// `moesim trace info T [--json] [--model M] [--format F] [--fields MAP]`: options, help and the text; what
// it does is harness/trace_job.h (trace_info).
#include <algorithm>
#include <memory>
#include <numeric>

#include "base/atomic_file.h"
#include "base/json_io.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/trace_options.h"
#include "harness/trace_job.h"

namespace moesim::cli {
namespace trace_info_cmd {

struct Options {
  harness::TraceInfoArgs args;
  bool json = false;
};

std::string info_text(const std::string& path, const harness::TraceInfoResult& r) {
  const traces::TraceInfo& info = r.info;
  const Json& summary = r.summary;
  const std::string source_format =
      info.provenance.contains("format") && info.provenance["format"].is_string()
          ? info.provenance["format"].get<std::string>()
          : "";
  std::string text;
  text += strprintf("trace:            %s%s\n", path.c_str(),
                    source_format.empty() ? "" : (" (from " + source_format + ")").c_str());
  text += strprintf("model:            %s%s\n", info.model.empty() ? "(unnamed)" : info.model.c_str(),
                    info.synthetic ? "  [SYNTHETIC]" : "");
  text += strprintf("shape:            %u MoE layers x %u experts, top-%u\n", info.layers, info.experts,
                    info.top_k);
  text += strprintf("sequences:        %llu\n", summary["sequences"].get<unsigned long long>());
  text += strprintf("prefill tokens:   %llu\n", summary["prefill_tokens"].get<unsigned long long>());
  text += strprintf("decode tokens:    %llu\n", summary["decode_tokens"].get<unsigned long long>());
  text += strprintf("records:          %zu (missing cells: %llu)\n", r.records,
                    static_cast<unsigned long long>(info.missing_cells));
  text += strprintf("lookups (B=1):    %zu in %zu layer invocations; decode %llu\n", r.lookups, r.invocations,
                    static_cast<unsigned long long>(r.decode_lookups));
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
  return text;
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  add_trace_input(app, o->args.path, "trace file (.mtr, route_trace CSV, JSONL or CSV)");
  app.add_flag("--json", o->json, "print JSON (starts with the run header) instead of text");
  app.add_option("--model", o->args.load.model,
                 "model preset or JSON: layers/experts come from it; the trace must fit");
  add_trace_format_options(app, o->args.load);
  app.add_option("-o,--output", o->args.out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([o] {
    const harness::TraceInfoResult r = harness::trace_info(o->args);
    if (o->json)
      write_json_file(o->args.out, r.doc);
    else
      write_file_atomic(o->args.out, info_text(o->args.path, r));
  });
}

}  // namespace trace_info_cmd
MOESIM_CLI_COMMAND("trace info", "Describe a trace: shape, tokens, lookups, missing cells, columns",
                   trace_info_cmd::setup);
}  // namespace moesim::cli
