#include "core/hardware_profile.h"

#include <cmath>
#include <filesystem>
#include <string_view>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/units.h"

namespace moesim {

double hardware_value(const Json& j, const char* section, const char* key, const char* kind,
                      const std::string& origin) {
  const std::string where = std::string(section) + "." + key;
  if (!j.contains(section) || !j.at(section).is_object() || !j.at(section).contains(key))
    throw Error(origin + ": missing field '" + where + "'");
  const Json* v = &j.at(section).at(key);
  if (v->is_object()) {
    if (!v->contains("value")) throw Error(origin + ": field '" + where + "' has no 'value'");
    v = &v->at("value");
  }
  try {
    std::string_view k(kind);
    if (v->is_number()) {
      double d = v->get<double>();
      if (!std::isfinite(d) || d < 0) throw Error("must be finite and non-negative");
      return d;
    }
    if (!v->is_string()) throw Error("expected a number or a string with a unit, got " + v->dump());
    const std::string s = v->get<std::string>();
    if (k == "rate") return parse_rate(s);
    if (k == "time") return parse_seconds(s);
    if (k == "bytes") return static_cast<double>(parse_bytes(s));
    throw Error("expected a number, got \"" + s + "\"");
  } catch (const Error& e) {
    throw Error(origin + ": field '" + where + "': " + e.what());
  }
}

HardwareProfile hardware_from_json(const Json& j, const std::string& origin) {
  HardwareProfile h;
  h.raw = j;
  h.origin = origin;
  h.name = j.value("name", std::filesystem::path(origin).stem().string());
  h.display_name = j.value("display_name", h.name);
  auto get = [&](const char* s, const char* k, const char* kind) {
    return hardware_value(j, s, k, kind, origin);
  };
  auto positive = [&](double v, const char* what) {
    if (!(v > 0)) throw Error(origin + ": field '" + std::string(what) + "' must be positive");
    return v;
  };
  h.ssd_read_bandwidth = positive(get("ssd", "read_bandwidth", "rate"), "ssd.read_bandwidth");
  h.ssd_read_latency = get("ssd", "read_latency", "time");
  h.ssd_prefill_read_bandwidth =
      j.at("ssd").contains("prefill_read_bandwidth")
          ? positive(get("ssd", "prefill_read_bandwidth", "rate"), "ssd.prefill_read_bandwidth")
          : h.ssd_read_bandwidth;
  h.ssd_prefill_read_latency =
      j.at("ssd").contains("prefill_read_latency") ? get("ssd", "prefill_read_latency", "time") : h.ssd_read_latency;
  h.ssd_queue_depth = static_cast<uint32_t>(positive(get("ssd", "queue_depth", "number"), "ssd.queue_depth"));
  if (j.at("ssd").contains("read_cpu_overhead")) h.ssd_read_cpu_overhead = get("ssd", "read_cpu_overhead", "time");
  if (j.at("ssd").contains("read_cpu_bandwidth"))
    h.ssd_read_cpu_bandwidth = positive(get("ssd", "read_cpu_bandwidth", "rate"), "ssd.read_cpu_bandwidth");
  // A prefill's pair: either field given, the pair is the prefill's own (an absent one 0); neither, the decode step's.
  const bool prefill_overhead = j.at("ssd").contains("prefill_read_cpu_overhead");
  const bool prefill_bandwidth = j.at("ssd").contains("prefill_read_cpu_bandwidth");
  if (prefill_overhead || prefill_bandwidth) {
    if (prefill_overhead) h.ssd_prefill_read_cpu_overhead = get("ssd", "prefill_read_cpu_overhead", "time");
    if (prefill_bandwidth)
      h.ssd_prefill_read_cpu_bandwidth =
          positive(get("ssd", "prefill_read_cpu_bandwidth", "rate"), "ssd.prefill_read_cpu_bandwidth");
  } else {
    h.ssd_prefill_read_cpu_overhead = h.ssd_read_cpu_overhead;
    h.ssd_prefill_read_cpu_bandwidth = h.ssd_read_cpu_bandwidth;
  }
  h.memory_capacity = static_cast<uint64_t>(positive(get("memory", "capacity", "bytes"), "memory.capacity"));
  h.memory_bandwidth = positive(get("memory", "bandwidth", "rate"), "memory.bandwidth");
  h.unified_memory = j.at("memory").value("unified", false);
  h.cpu_cores = static_cast<uint32_t>(positive(get("cpu", "cores", "number"), "cpu.cores"));
  h.cpu_memcpy_bandwidth =
      positive(get("cpu", "memcpy_bandwidth_per_core", "rate"), "cpu.memcpy_bandwidth_per_core");
  if (j.at("cpu").contains("flops_per_core"))
    h.cpu_flops_per_core = positive(get("cpu", "flops_per_core", "number"), "cpu.flops_per_core");
  if (j.at("cpu").contains("prefill_slowdown"))
    h.cpu_prefill_slowdown = positive(get("cpu", "prefill_slowdown", "number"), "cpu.prefill_slowdown");
  h.cpu_prefill_recover_slowdown =
      j.at("cpu").contains("prefill_recover_slowdown")
          ? positive(get("cpu", "prefill_recover_slowdown", "number"), "cpu.prefill_recover_slowdown")
          : h.cpu_prefill_slowdown;
  if (j.at("cpu").contains("decompress_bandwidth_per_core"))
    h.cpu_decompress_bandwidth =
        positive(get("cpu", "decompress_bandwidth_per_core", "rate"), "cpu.decompress_bandwidth_per_core");
  h.gpu_bf16_flops = positive(get("gpu", "bf16_flops", "number"), "gpu.bf16_flops");
  h.gpu_memory_bandwidth = positive(get("gpu", "memory_bandwidth", "rate"), "gpu.memory_bandwidth");
  h.gpu_kernel_overhead = get("gpu", "kernel_overhead", "time");
  h.gpu_expert_overhead =
      j.at("gpu").contains("expert_overhead") ? get("gpu", "expert_overhead", "time") : h.gpu_kernel_overhead;
  if (j.at("gpu").contains("fresh_expert_overhead"))
    h.gpu_fresh_expert_overhead = get("gpu", "fresh_expert_overhead", "time");
  if (j.at("gpu").contains("expert_gemm_overhead"))
    h.gpu_expert_gemm_overhead = get("gpu", "expert_gemm_overhead", "time");
  if (j.at("gpu").contains("dense_gemm_overhead"))
    h.gpu_dense_gemm_overhead = get("gpu", "dense_gemm_overhead", "time");
  h.gpu_recover_bandwidth = j.at("gpu").contains("recover_bandwidth")
                                ? positive(get("gpu", "recover_bandwidth", "rate"), "gpu.recover_bandwidth")
                                : h.gpu_memory_bandwidth;
  h.gpu_recover_overhead =
      j.at("gpu").contains("recover_overhead") ? get("gpu", "recover_overhead", "time") : h.gpu_kernel_overhead;
  if (!j.contains("link") || !j.at("link").contains("kind"))
    throw Error(origin + ": missing field 'link.kind'");
  h.link_kind = j.at("link").at("kind").get<std::string>();
  if (h.link_kind != "uma" && h.link_kind != "pcie")
    throw Error(origin + ": field 'link.kind' must be \"uma\" or \"pcie\", got \"" + h.link_kind + "\"");
  h.link_bandwidth = positive(get("link", "bandwidth", "rate"), "link.bandwidth");
  h.link_latency = get("link", "latency", "time");
  return h;
}

HardwareProfile load_hardware(const std::string& name_or_path) {
  std::string path = resolve_preset("hardware", name_or_path);
  return hardware_from_json(load_json_file(path), path);
}

}  // namespace moesim
