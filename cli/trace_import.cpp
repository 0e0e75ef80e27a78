// `moesim trace import IN... [--trace IN] [--format ...] [--fields MAP] [import options] [--model M]
// [--no-lookup-index] -o OUT.mtr`: converts any importable trace into the canonical .mtr file (written
// atomically; nothing on failure), with its lookup index unless --no-lookup-index, so that a user's trace
// replays at the indexed speed without knowing a flag. Several inputs become several sequences of one trace
// (traces::load_traces). The summary line says how many records --where, --skip-warmup and --drop-duplicates
// removed.
// Options, help and printing here; what it does is harness/trace_job.h (trace_import).
#include <cstdio>
#include <memory>
#include <vector>

#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "harness/trace_job.h"

namespace moesim::cli {
namespace trace_import_cmd {

struct Options {
  std::vector<std::string> in, named;
  harness::TraceImportArgs args;
  bool json = false;
};

// " (skipped 3 by --where, ...)" from the import counts in the provenance, or "".
std::string removed_summary(const Json& prov) {
  std::string s;
  const std::pair<const char*, const char*> counts[] = {{"where_skipped", "skipped by --where"},
                                                        {"warmup_dropped", "warm-up records dropped"},
                                                        {"duplicates_dropped", "duplicates dropped"}};
  for (const auto& [key, what] : counts)
    if (prov.contains(key))
      s += (s.empty() ? "" : ", ") + std::to_string(prov[key].get<uint64_t>()) + " " + what;
  return s.empty() ? s : "; " + s;
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("input", o->in,
                 "traces to import (route_trace CSV, JSONL, CSV or .mtr); several = several sequences");
  app.add_option("--trace", o->named, "a trace to import (repeatable; same as the positional inputs)")
      ->allow_extra_args(false);
  app.add_option("-o,--output", o->args.out, "output .mtr file")->required();
  add_trace_format_options(app, o->args.load);
  app.add_option("--model", o->args.load.model,
                 "model preset or JSON: layers/experts come from it; the trace must fit");
  app.add_flag(
      "--lookup-index,!--no-lookup-index", o->args.lookup_index,
      "store the batch-1 lookup stream and its next-use index (format version 2; the default): `moesim "
      "replay` then runs from it without reading the records (docs/trace-format.md); "
      "--no-lookup-index writes version 1, about 40% smaller, which older builds read");
  add_summary_json_flag(app, o->json);
  app.callback([o] {
    check_summary_json(o->json, o->args.out);
    o->args.inputs = o->named;
    o->args.inputs.insert(o->args.inputs.end(), o->in.begin(), o->in.end());
    const harness::TraceImportResult r = harness::trace_import(o->args);
    if (o->json) return print_summary_json("trace import", r.wrote);
    std::fprintf(
        stderr,
        "moesim: wrote %s: %zu records, %zu sequence%s, %u layers x %u experts, top-%u, %llu missing "
        "cells%s\n",
        o->args.out.c_str(), r.records, r.sequences, r.sequences == 1 ? "" : "s", r.info.layers,
        r.info.experts, r.info.top_k, static_cast<unsigned long long>(r.info.missing_cells),
        removed_summary(r.info.provenance).c_str());
  });
}

}  // namespace trace_import_cmd
MOESIM_CLI_COMMAND("trace import",
                   "Convert a trace (route_trace CSV, JSONL, CSV) to the canonical .mtr format",
                   trace_import_cmd::setup);
}  // namespace moesim::cli
