// `moesim trace import IN... [--trace IN] [--format ...] [--fields MAP] [import options] [--model M]
// [--no-lookup-index] -o OUT.mtr`: converts any importable trace into the canonical .mtr file (written
// atomically; nothing on failure), with its lookup index unless --no-lookup-index, so that a user's trace
// replays at the indexed speed without knowing a flag. Several inputs become several sequences of one trace
// (traces::load_traces). The summary line says how many records --where, --skip-warmup and --drop-duplicates
// removed.
#include <cstdio>
#include <memory>
#include <vector>

#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

namespace moesim::cli {
namespace trace_import_cmd {

struct Options {
  std::vector<std::string> in, named;
  std::string out;
  traces::LoadOptions load;
  bool lookup_index = true;
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
  app.add_option("-o,--output", o->out, "output .mtr file")->required();
  add_trace_format_options(app, o->load);
  app.add_option("--model", o->load.model,
                 "model preset or JSON: layers/experts come from it; the trace must fit");
  app.add_flag(
      "--lookup-index,!--no-lookup-index", o->lookup_index,
      "store the batch-1 lookup stream and its next-use index (format version 2; the default): `moesim "
      "replay` then runs from it without reading the records (docs/trace-format.md); "
      "--no-lookup-index writes version 1, about 40% smaller, which older builds read");
  add_summary_json_flag(app, o->json);
  app.callback([o] {
    check_summary_json(o->json, o->out);
    std::vector<std::string> inputs = o->named;
    inputs.insert(inputs.end(), o->in.begin(), o->in.end());
    require_trace_input(inputs.empty() ? std::string() : inputs.front());
    check_output_writable(o->out);
    const traces::Trace t = traces::load_traces(inputs, o->load);
    traces::write_mtr(t, o->out, traces::MtrWriteOptions{.lookup_index = o->lookup_index});
    const size_t sequences = t.sequence_ids().size();
    if (o->json) {
      Json w{{"path", o->out},
             {"records", t.records()},
             {"sequences", sequences},
             {"layers", t.info().layers},
             {"experts", t.info().experts},
             {"top_k", t.info().top_k},
             {"missing_cells", t.info().missing_cells},
             {"lookup_index", o->lookup_index}};
      for (const char* key : {"where_skipped", "warmup_dropped", "duplicates_dropped"})
        w[key] = t.info().provenance.contains(key) ? t.info().provenance[key] : Json(0);
      return print_summary_json("trace import", w);
    }
    std::fprintf(
        stderr,
        "moesim: wrote %s: %zu records, %zu sequence%s, %u layers x %u experts, top-%u, %llu missing "
        "cells%s\n",
        o->out.c_str(), t.records(), sequences, sequences == 1 ? "" : "s", t.info().layers, t.info().experts,
        t.info().top_k, static_cast<unsigned long long>(t.info().missing_cells),
        removed_summary(t.info().provenance).c_str());
  });
}

}  // namespace trace_import_cmd
MOESIM_CLI_COMMAND("trace import",
                   "Convert a trace (route_trace CSV, JSONL, CSV) to the canonical .mtr format",
                   trace_import_cmd::setup);
}  // namespace moesim::cli
