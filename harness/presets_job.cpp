#include "harness/presets_job.h"

#include "core/data_dir.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/run_info.h"
#include "core/storage_type.h"

namespace moesim::harness {
namespace {

// All weights' bytes if every weight were stored as `t`.
uint64_t weight_bytes_as(ModelSpec m, const StorageType& t) {
  m.weight_types = {t, t, t, t, std::nullopt, m.weight_types.norms};
  m.layer_types.clear();
  for (auto& x : m.expert_tensors)
    if (x.shape.size() > 1) x.type.reset();
  return m.all_experts_bytes() + m.non_expert_bytes();
}

PresetModel preset_model(const std::string& name) {
  const ModelSpec m = load_model(name);
  PresetModel p;
  p.name = name;
  p.stored_as = m.quantization.empty() ? dtype_name(m.dtype) : m.quantization;
  p.layers = m.moe_layers;
  p.experts = m.routed_experts;
  p.top_k = m.top_k;
  p.expert_bytes = m.bytes_per_expert();
  p.total_params = m.total_params();
  p.active_params = m.active_params();
  p.weight_bytes = m.all_experts_bytes() + m.non_expert_bytes();
  p.kv_bytes_per_token = m.kv_bytes_per_token();
  for (const auto& t : presets_storage_types())
    p.weight_bytes_as[t] = weight_bytes_as(m, parse_storage_type(t));
  return p;
}

}  // namespace

const std::vector<std::string>& presets_storage_types() {
  static const std::vector<std::string> types = {"bf16", "fp8_e4m3_b128", "q8_0", "q4_k", "mxfp4"};
  return types;
}

PresetsResult list_presets_result() {
  PresetsResult r;
  r.data_dir = data_dir();
  Json models = Json::array(), hardware = Json::array();
  for (const auto& n : list_presets("models")) {
    const PresetModel& m = r.models.emplace_back(preset_model(n));
    Json at = Json::object();
    for (const auto& t : presets_storage_types()) at[t] = m.weight_bytes_as.at(t);
    models.push_back({{"name", m.name},
                      {"layers", m.layers},
                      {"experts", m.experts},
                      {"top_k", m.top_k},
                      {"expert_bytes", m.expert_bytes},
                      {"stored_as", m.stored_as},
                      {"total_params", m.total_params},
                      {"active_params", m.active_params},
                      {"weight_bytes", m.weight_bytes},
                      {"kv_bytes_per_token", m.kv_bytes_per_token},
                      {"weight_bytes_as", at}});
  }
  for (const auto& n : list_presets("hardware")) {
    const HardwareProfile h = load_hardware(n);
    r.hardware.push_back({n, h.display_name, h.cpu_cores, h.ssd_read_bandwidth, h.memory_capacity});
    hardware.push_back({{"name", n},
                        {"display_name", h.display_name},
                        {"cpu_cores", h.cpu_cores},
                        {"ssd_read_bandwidth", h.ssd_read_bandwidth},
                        {"memory_capacity", h.memory_capacity}});
  }
  r.doc["header"] = run_header("presets", {{"data_dir", r.data_dir}});
  r.doc["models"] = models;
  r.doc["hardware"] = hardware;
  return r;
}

}  // namespace moesim::harness
