// `moesim trace export T -o OUT.jsonl [--fields MAP]`: writes any trace as JSONL, one routing record per
// line in canonical order (traces/export_jsonl.cpp); `--fields` names the output keys. T is `--trace T` or
// positional; `--in-fields`, `--format`, the import options (cli/trace_options.h) and `--model` apply to
// reading T.
// `--to oraclegeneral [--batch B]` writes instead the trace's lookup stream (traces/lookup_stream.h) as
// libCacheSim's oracleGeneral binary trace (traces/export_oracle_general.h), one request per lookup.
#include <cstdio>
#include <memory>

#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "traces/export_oracle_general.h"
#include "traces/trace_io.h"

namespace moesim::cli {
namespace trace_export_cmd {

struct Options {
  std::string in, out, fields;
  std::string to = "jsonl";
  uint32_t batch = 1;
  traces::LoadOptions load;
  bool json = false;
};

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  add_trace_input(app, o->in, "trace to export (any importable format)");
  app.add_option("-o,--output", o->out, "output JSONL file ('-' = stdout)")->required();
  app.add_option("--fields", o->fields, "output key names: seq=KEY,token=KEY,layer=KEY,experts=KEY,...");
  app.add_option("--to", o->to,
                 "output format: jsonl (routing records) or oraclegeneral (libCacheSim's binary trace of the "
                 "lookup stream, one request per lookup)")
      ->capture_default_str();
  app.add_option("--batch", o->batch,
                 "with --to oraclegeneral: sequences decoding together (traces/lookup_stream.h)")
      ->capture_default_str();
  add_trace_format_options(app, o->load, "--in-fields");
  app.add_option("--model", o->load.model, "model preset or JSON for reading the input");
  add_summary_json_flag(app, o->json);
  app.callback([o] {
    require_trace_input(o->in);
    check_summary_json(o->json, o->out);
    if (o->to != "jsonl" && o->to != "oraclegeneral")
      throw UsageError("--to: unknown output format '" + o->to + "' (known: jsonl, oraclegeneral)");
    require_at_least("--batch", o->batch, 1);
    if (o->to != "oraclegeneral" && o->batch != 1)
      throw UsageError("--batch applies to --to oraclegeneral only");
    if (o->to == "oraclegeneral" && !o->fields.empty())
      throw UsageError("--fields applies to --to jsonl only");
    const traces::FieldMap fm = traces::parse_field_map(o->fields);
    check_output_writable(o->out);
    const traces::Trace t = traces::load_trace(o->in, o->load);
    if (o->to == "oraclegeneral") {
      const traces::LookupStream s = traces::build_lookup_stream(
          t, o->batch, traces::LookupStreamParts{.tokens = false, .next_use = false});
      traces::write_oracle_general(s, t.info().expert_bytes, o->out);
      if (o->json)
        return print_summary_json("trace export", {{"path", o->out},
                                                   {"format", "oraclegeneral"},
                                                   {"requests", s.lookups()},
                                                   {"record_bytes", traces::kOracleGeneralRecordBytes}});
      if (o->out != "-")
        std::fprintf(stderr, "moesim: wrote %s: %zu requests (oracleGeneral, %zu bytes each)\n",
                     o->out.c_str(), s.lookups(), traces::kOracleGeneralRecordBytes);
      return;
    }
    traces::export_jsonl_file(t, o->out, fm);
    if (o->json)
      return print_summary_json("trace export",
                                {{"path", o->out}, {"format", "jsonl"}, {"records", t.records()}});
    if (o->out != "-") std::fprintf(stderr, "moesim: wrote %s: %zu records\n", o->out.c_str(), t.records());
  });
}

}  // namespace trace_export_cmd
MOESIM_CLI_COMMAND("trace export",
                   "Export a trace to JSONL (round-trips through trace import) or its lookups to "
                   "libCacheSim's oracleGeneral",
                   trace_export_cmd::setup);
}  // namespace moesim::cli
