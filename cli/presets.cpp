// `moesim presets`: lists the bundled model presets and hardware profiles with their key numbers.
#include <cstdio>

#include "cli/command.h"
#include "core/data_dir.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/units.h"

namespace moesim::cli {
namespace {

void setup(CLI::App& app) {
  app.callback([] {
    std::printf("Models (%s/models):\n", data_dir().c_str());
    std::printf("  %-20s %7s %7s %5s %12s\n", "name", "layers", "experts", "top-k", "expert size");
    for (const auto& n : list_presets("models")) {
      ModelSpec m = load_model(n);
      std::printf("  %-20s %7u %7u %5u %12s\n", n.c_str(), m.moe_layers, m.routed_experts, m.top_k,
                  format_bytes(m.bytes_per_expert()).c_str());
    }
    std::printf("Hardware profiles (%s/hardware):\n", data_dir().c_str());
    for (const auto& n : list_presets("hardware")) {
      HardwareProfile h = load_hardware(n);
      std::printf("  %-22s %s, %u CPU cores, SSD %s, memory %s\n", n.c_str(), h.display_name.c_str(), h.cpu_cores,
                  format_rate(h.ssd_read_bandwidth).c_str(), format_bytes(h.memory_capacity).c_str());
    }
  });
}

}  // namespace
MOESIM_CLI_COMMAND("presets", "List the bundled model presets and hardware profiles", setup);
}  // namespace moesim::cli
