// `moesim trace import IN [--format auto|bigmoe|jsonl|csv|mtr] [--fields MAP] [--model M] -o OUT.mtr`:
// converts any importable trace into the canonical .mtr file (written atomically; nothing on failure).
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/trace_options.h"
#include "traces/trace_io.h"

namespace moesim::cli {
namespace {

struct Options {
  std::string in, out;
  traces::LoadOptions load;
};

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("input", o->in, "trace to import (route_trace CSV, JSONL, CSV or .mtr)")->required();
  app.add_option("-o,--output", o->out, "output .mtr file")->required();
  add_trace_format_options(app, o->load);
  app.add_option("--model", o->load.model, "model preset or JSON: layers/experts come from it; the trace must fit");
  app.callback([o] {
    const traces::Trace t = traces::load_trace(o->in, o->load);
    traces::save_mtr(t, o->out);
    std::fprintf(stderr, "moesim: wrote %s: %zu records, %u layers x %u experts, top-%u, %llu missing cells\n",
                 o->out.c_str(), t.records(), t.info().layers, t.info().experts, t.info().top_k,
                 static_cast<unsigned long long>(t.info().missing_cells));
  });
}

}  // namespace
MOESIM_CLI_COMMAND("trace import", "Convert a trace (route_trace CSV, JSONL, CSV) to the canonical .mtr format",
                   setup);
}  // namespace moesim::cli
