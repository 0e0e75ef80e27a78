// `moesim trace export T -o OUT.jsonl [--fields MAP]`: writes any trace as JSONL, one routing record per
// line in canonical order (traces/export_jsonl.cpp); `--fields` names the output keys. T is `--trace T` or
// positional; `--in-fields`, `--format`, the import options (cli/trace_options.h) and `--model` apply to
// reading T.
// `--to oraclegeneral [--batch B]` writes instead the trace's lookup stream (traces/lookup_stream.h) as
// libCacheSim's oracleGeneral binary trace (traces/export_oracle_general.h), one request per lookup.
// Options, help and printing here; what it does is harness/trace_job.h (trace_export).
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "harness/trace_job.h"

namespace moesim::cli {
namespace trace_export_cmd {

struct Options {
  harness::TraceExportArgs args;
  bool json = false;
};

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  harness::TraceExportArgs& a = o->args;
  add_trace_input(app, a.in, "trace to export (any importable format)");
  app.add_option("-o,--output", a.out, "output JSONL file ('-' = stdout)")->required();
  app.add_option("--fields", a.fields, "output key names: seq=KEY,token=KEY,layer=KEY,experts=KEY,...");
  app.add_option("--to", a.to,
                 "output format: jsonl (routing records) or oraclegeneral (libCacheSim's binary trace of the "
                 "lookup stream, one request per lookup)")
      ->capture_default_str();
  app.add_option("--batch", a.batch,
                 "with --to oraclegeneral: sequences decoding together (traces/lookup_stream.h)")
      ->capture_default_str();
  add_trace_format_options(app, a.load, "--in-fields");
  app.add_option("--model", a.load.model, "model preset or JSON for reading the input");
  add_summary_json_flag(app, o->json);
  app.callback([o] {
    require_trace_input(o->args.in);
    check_summary_json(o->json, o->args.out);
    const harness::TraceExportResult r = harness::trace_export(o->args);
    if (o->json) return print_summary_json("trace export", r.wrote);
    if (o->args.out == "-") return;
    if (r.format == "oraclegeneral")
      std::fprintf(stderr, "moesim: wrote %s: %zu requests (oracleGeneral, %zu bytes each)\n",
                   o->args.out.c_str(), r.count, r.wrote["record_bytes"].get<size_t>());
    else
      std::fprintf(stderr, "moesim: wrote %s: %zu records\n", o->args.out.c_str(), r.count);
  });
}

}  // namespace trace_export_cmd
MOESIM_CLI_COMMAND("trace export",
                   "Export a trace to JSONL (round-trips through trace import) or its lookups to "
                   "libCacheSim's oracleGeneral",
                   trace_export_cmd::setup);
}  // namespace moesim::cli
