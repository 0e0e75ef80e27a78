// `moesim trace export T -o OUT.jsonl [--fields MAP]`: writes any trace as JSONL, one routing record per
// line in canonical order (traces/export_jsonl.cpp); `--fields` names the output keys. T is `--trace T` or
// positional; `--in-fields`, `--format`, the import options (cli/trace_options.h) and `--model` apply to
// reading T.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/trace_options.h"
#include "core/atomic_file.h"
#include "traces/trace_io.h"

namespace moesim::cli {
namespace {

struct Options {
  std::string in, out, fields;
  traces::LoadOptions load;
};

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  add_trace_input(app, o->in, "trace to export (any importable format)");
  app.add_option("-o,--output", o->out, "output JSONL file ('-' = stdout)")->required();
  app.add_option("--fields", o->fields, "output key names: seq=KEY,token=KEY,layer=KEY,experts=KEY,...");
  add_trace_format_options(app, o->load, "--in-fields");
  app.add_option("--model", o->load.model, "model preset or JSON for reading the input");
  app.callback([o] {
    require_trace_input(o->in);
    const traces::FieldMap fm = traces::parse_field_map(o->fields);
    check_output_writable(o->out);
    const traces::Trace t = traces::load_trace(o->in, o->load);
    traces::export_jsonl_file(t, o->out, fm);
    if (o->out != "-") std::fprintf(stderr, "moesim: wrote %s: %zu records\n", o->out.c_str(), t.records());
  });
}

}  // namespace
MOESIM_CLI_COMMAND("trace export", "Export a trace to JSONL (round-trips through trace import)", setup);
}  // namespace moesim::cli
