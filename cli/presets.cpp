// `moesim presets`: options, help and the tables; what it lists is harness/presets_job.h.
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "harness/presets_job.h"

namespace moesim::cli {
namespace presets_cmd {

struct Options {
  bool json = false;
  std::string out = "-";
};

std::string billions(uint64_t n) {
  return n ? strprintf("%.2fB", static_cast<double>(n) / 1e9) : "-";
}

std::string presets_text(const harness::PresetsResult& r) {
  std::string text = strprintf("Models (%s/models):\n", r.data_dir.c_str());
  text += strprintf("  %-24s %6s %7s %5s %9s %9s %10s %-9s", "name", "layers", "experts", "top-k", "total",
                    "active", "expert", "stored");
  for (const auto& t : harness::presets_storage_types()) text += strprintf(" %10s", t.c_str());
  text += "\n";
  for (const auto& m : r.models) {
    text += strprintf("  %-24s %6u %7u %5u %9s %9s %10s %-9s", m.name.c_str(), m.layers, m.experts, m.top_k,
                      billions(m.total_params).c_str(), billions(m.active_params).c_str(),
                      format_bytes(m.expert_bytes).c_str(), m.stored_as.c_str());
    for (const auto& t : harness::presets_storage_types())
      text += strprintf(" %10s", format_bytes(m.weight_bytes_as.at(t)).c_str());
    text += "\n";
  }
  text +=
      "  (active: the weights a token reads, the embedding lookup left out; the listed types: every weight\n"
      "  stored so, rows that hold no whole block falling back as llama.cpp does)\n";
  text += strprintf("Hardware profiles (%s/hardware):\n", r.data_dir.c_str());
  for (const auto& h : r.hardware)
    text += strprintf("  %-22s %s, %u CPU cores, SSD %s, memory %s\n", h.name.c_str(), h.display_name.c_str(),
                      h.cpu_cores, format_rate(h.ssd_read_bandwidth).c_str(),
                      format_bytes(h.memory_capacity).c_str());
  return text;
}

void run(const Options& o) {
  check_output_writable(o.out);
  const harness::PresetsResult r = harness::list_presets_result();
  if (o.json)
    write_json_file(o.out, r.doc);
  else
    write_file_atomic(o.out, presets_text(r));
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_flag("--json", o->json, "print JSON (header, models, hardware) instead of the tables");
  app.add_option("-o,--output", o->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([o] { run(*o); });
}

}  // namespace presets_cmd
MOESIM_CLI_COMMAND("presets", "List the bundled model presets and hardware profiles", presets_cmd::setup);
}  // namespace moesim::cli
