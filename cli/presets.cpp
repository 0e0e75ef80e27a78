// `moesim presets [--json] [-o OUT]`: lists the bundled model presets and hardware profiles with their key
// numbers.
#include <memory>
#include <string>

#include "cli/summary_json.h"
#include "cli/command.h"
#include "base/atomic_file.h"
#include "core/data_dir.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/run_info.h"
#include "base/units.h"

namespace moesim::cli {
namespace {

struct Options {
  bool json = false;
  std::string out = "-";
};

void run(const Options& o) {
  check_output_writable(o.out);
  Json models = Json::array(), hardware = Json::array();
  std::string text = strprintf("Models (%s/models):\n", data_dir().c_str());
  text += strprintf("  %-20s %7s %7s %5s %12s\n", "name", "layers", "experts", "top-k", "expert size");
  for (const auto& n : list_presets("models")) {
    const ModelSpec m = load_model(n);
    text += strprintf("  %-20s %7u %7u %5u %12s\n", n.c_str(), m.moe_layers, m.routed_experts, m.top_k,
                      format_bytes(m.bytes_per_expert()).c_str());
    models.push_back({{"name", n},
                      {"layers", m.moe_layers},
                      {"experts", m.routed_experts},
                      {"top_k", m.top_k},
                      {"expert_bytes", m.bytes_per_expert()}});
  }
  text += strprintf("Hardware profiles (%s/hardware):\n", data_dir().c_str());
  for (const auto& n : list_presets("hardware")) {
    const HardwareProfile h = load_hardware(n);
    text += strprintf("  %-22s %s, %u CPU cores, SSD %s, memory %s\n", n.c_str(), h.display_name.c_str(),
                      h.cpu_cores, format_rate(h.ssd_read_bandwidth).c_str(), format_bytes(h.memory_capacity).c_str());
    hardware.push_back({{"name", n},
                        {"display_name", h.display_name},
                        {"cpu_cores", h.cpu_cores},
                        {"ssd_read_bandwidth", h.ssd_read_bandwidth},
                        {"memory_capacity", h.memory_capacity}});
  }
  if (!o.json) {
    write_file_atomic(o.out, text);
    return;
  }
  Json j;
  j["header"] = run_header("presets", {{"data_dir", data_dir()}});
  j["models"] = models;
  j["hardware"] = hardware;
  write_json_file(o.out, j);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_flag("--json", o->json, "print JSON (header, models, hardware) instead of the tables");
  app.add_option("-o,--output", o->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([o] { run(*o); });
}

}  // namespace
MOESIM_CLI_COMMAND("presets", "List the bundled model presets and hardware profiles", setup);
}  // namespace moesim::cli
