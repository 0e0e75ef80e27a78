// `moesim presets [--json] [-o OUT]`: lists the bundled model presets and hardware profiles with their key
// numbers.
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "core/data_dir.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/run_info.h"
#include "core/storage_type.h"

namespace moesim::cli {
namespace presets_cmd {

struct Options {
  bool json = false;
  std::string out = "-";
};

// All weights' bytes if every weight were stored as `t` (rows that do not hold whole blocks fall back as
// llama.cpp does, core/model_spec.cpp).
uint64_t weight_bytes_as(ModelSpec m, const StorageType& t) {
  m.weight_types = {t, t, t, t, std::nullopt, m.weight_types.norms};
  m.layer_types.clear();
  for (auto& x : m.expert_tensors)
    if (x.shape.size() > 1) x.type.reset();
  return m.all_experts_bytes() + m.non_expert_bytes();
}

constexpr const char* kListedTypes[] = {"bf16", "fp8_e4m3_b128", "q8_0", "q4_k", "mxfp4"};

std::string billions(uint64_t n) {
  return n ? strprintf("%.2fB", static_cast<double>(n) / 1e9) : "-";
}

void run(const Options& o) {
  check_output_writable(o.out);
  Json models = Json::array(), hardware = Json::array();
  std::string text = strprintf("Models (%s/models):\n", data_dir().c_str());
  text += strprintf("  %-24s %6s %7s %5s %9s %9s %10s %-9s", "name", "layers", "experts", "top-k", "total",
                    "active", "expert", "stored");
  for (const char* t : kListedTypes) text += strprintf(" %10s", t);
  text += "\n";
  for (const auto& n : list_presets("models")) {
    const ModelSpec m = load_model(n);
    const uint64_t own = m.all_experts_bytes() + m.non_expert_bytes();
    const std::string stored = m.quantization.empty() ? dtype_name(m.dtype) : m.quantization;
    text += strprintf("  %-24s %6u %7u %5u %9s %9s %10s %-9s", n.c_str(), m.moe_layers, m.routed_experts,
                      m.top_k, billions(m.total_params()).c_str(), billions(m.active_params()).c_str(),
                      format_bytes(m.bytes_per_expert()).c_str(), stored.c_str());
    Json at = Json::object();
    for (const char* t : kListedTypes) {
      const uint64_t b = weight_bytes_as(m, parse_storage_type(t));
      text += strprintf(" %10s", format_bytes(b).c_str());
      at[t] = b;
    }
    text += "\n";
    models.push_back({{"name", n},
                      {"layers", m.moe_layers},
                      {"experts", m.routed_experts},
                      {"top_k", m.top_k},
                      {"expert_bytes", m.bytes_per_expert()},
                      {"stored_as", stored},
                      {"total_params", m.total_params()},
                      {"active_params", m.active_params()},
                      {"weight_bytes", own},
                      {"kv_bytes_per_token", m.kv_bytes_per_token()},
                      {"weight_bytes_as", at}});
  }
  text +=
      "  (active: the weights a token reads, the embedding lookup left out; the listed types: every weight\n"
      "  stored so, rows that hold no whole block falling back as llama.cpp does)\n";
  text += strprintf("Hardware profiles (%s/hardware):\n", data_dir().c_str());
  for (const auto& n : list_presets("hardware")) {
    const HardwareProfile h = load_hardware(n);
    text += strprintf("  %-22s %s, %u CPU cores, SSD %s, memory %s\n", n.c_str(), h.display_name.c_str(),
                      h.cpu_cores, format_rate(h.ssd_read_bandwidth).c_str(),
                      format_bytes(h.memory_capacity).c_str());
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

}  // namespace presets_cmd
MOESIM_CLI_COMMAND("presets", "List the bundled model presets and hardware profiles", presets_cmd::setup);
}  // namespace moesim::cli
