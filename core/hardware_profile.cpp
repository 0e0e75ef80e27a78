#include "core/hardware_profile.h"

#include <cmath>
#include <filesystem>
#include <string_view>

#include "base/error.h"
#include "base/json_schema.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/data_dir.h"
#include "core/storage_type.h"

namespace moesim {
namespace {

// The schema (docs/hardware-format.md). A field is a quantity written {"value": V, "source"|"assumption": S}
// (or, in a profile built in code, a bare V); the section's descriptive entries are plain values.
// `any`: a value the simulator's runtime setup checks itself (harness/run_setup.cpp: quantile lists, flags).
// `per_type`: an object of storage type names (core/storage_type.h) to time quantities.
enum class Kind { rate, time, bytes, number, any, per_type };
struct FieldSpec {
  const char* key;
  Kind kind;
};
struct SectionSpec {
  const char* name;
  bool required;
  std::vector<FieldSpec> fields;
  std::vector<const char*> plain;    // descriptive entries: no provenance
  std::vector<const char*> retired;  // written by older versions; read by nothing now: warned about, ignored
};

const std::vector<SectionSpec>& sections() {
  static const std::vector<SectionSpec> s = {
      {"ssd",
       true,
       {{"read_bandwidth", Kind::rate},
        {"read_latency", Kind::time},
        {"prefill_read_bandwidth", Kind::rate},
        {"prefill_read_latency", Kind::time},
        {"queue_depth", Kind::number},
        {"read_cpu_overhead", Kind::time},
        {"read_cpu_bandwidth", Kind::rate},
        {"prefill_read_cpu_overhead", Kind::time},
        {"prefill_read_cpu_bandwidth", Kind::rate},
        {"queue_depth_curve", Kind::any}},
       {"model"},
       {}},
      {"memory",
       true,
       {{"capacity", Kind::bytes}, {"bandwidth", Kind::rate}, {"os_reserve", Kind::bytes}},
       {"unified"},
       {}},
      {"cpu",
       true,
       {{"cores", Kind::number},
        {"memcpy_bandwidth_per_core", Kind::rate},
        {"decompress_bandwidth_per_core", Kind::rate},
        {"flops_per_core", Kind::number},
        {"expert_bandwidth", Kind::rate},
        {"load_copy_bandwidth", Kind::rate},
        {"prefill_compute_slowdown", Kind::number},
        {"prefill_slowdown", Kind::number},
        {"prefill_recover_slowdown", Kind::number},
        {"dequant_time_per_element", Kind::per_type}},
       {"model"},
       {}},
      {"gpu",
       true,
       {{"bf16_flops", Kind::number},
        {"memory_bandwidth", Kind::rate},
        {"kernel_overhead", Kind::time},
        {"expert_overhead", Kind::time},
        {"fresh_expert_overhead", Kind::time},
        {"expert_gemm_overhead", Kind::time},
        {"dense_gemm_overhead", Kind::time},
        {"expert_gemm_flops", Kind::number},
        {"dense_gemm_flops", Kind::number},
        {"recover_bandwidth", Kind::rate},
        {"recover_overhead", Kind::time},
        {"memory_capacity", Kind::bytes},
        {"memory_reserve", Kind::bytes},
        {"dequant_time_per_element", Kind::per_type}},
       {"model"},
       {"fresh_weights_bandwidth"}},
      {"link", true, {{"bandwidth", Kind::rate}, {"latency", Kind::time}}, {"kind"}, {}},
      // Costs of the engine's own machinery, fitted by calibrate and applied by the simulator
      // (harness/run_setup.cpp).
      {"runtime",
       false,
       {{"dispatch_latency", Kind::time},
        {"pipeline_latency", Kind::time},
        {"wake_latency", Kind::time},
        {"plan_latency_per_op", Kind::time},
        {"plan_latency_fixed", Kind::time},
        {"plan_tail_per_op", Kind::time},
        {"plan_tail_fixed", Kind::time},
        {"wake_latency_quantiles", Kind::any},
        {"cpu_cores", Kind::number},
        {"gpu_stream_on_cpu", Kind::any},
        {"turnaround_ssd", Kind::time},
        {"turnaround_cpu", Kind::time},
        {"turnaround_gpu", Kind::time},
        {"turnaround_link", Kind::time},
        {"dispatch_latency_ssd", Kind::time},
        {"dispatch_latency_cpu", Kind::time},
        {"dispatch_latency_gpu", Kind::time},
        {"dispatch_latency_link", Kind::time},
        {"dispatch_latency_ssd_quantiles", Kind::any},
        {"dispatch_latency_cpu_quantiles", Kind::any},
        {"dispatch_latency_gpu_quantiles", Kind::any},
        {"dispatch_latency_link_quantiles", Kind::any}},
       {},
       {"cpu_sharing", "dispatch_latency_ssd_woken", "dispatch_latency_cpu_woken",
        "dispatch_latency_gpu_woken", "dispatch_latency_link_woken"}},
  };
  return s;
}

// Top-level entries besides the sections: descriptive strings, and the records calibrate writes of how it
// measured (free-form: read by validate and by people, never by the cost models).
constexpr std::string_view kTopStrings[] = {"name", "display_name", "notes"};
constexpr std::string_view kTopRecords[] = {"calibration", "micro"};

// The value of a quantity: the field itself when bare, else its "value", after checking the object's keys
// and (when required) its provenance.
JsonAt quantity(const JsonAt& f, bool require_provenance) {
  if (!f.json().is_object()) {
    if (require_provenance)
      f.fail(
          "has neither source nor assumption (write {\"value\": V, \"source\": \"where V comes from\"} or "
          "{\"value\": V, \"assumption\": \"why V; replace by `moesim calibrate`\"})");
    return f;
  }
  f.only_keys({"value", "source", "assumption"});
  bool sourced = false;
  for (const char* k : {"source", "assumption"})
    if (auto p = f.find(k)) sourced |= !p->string().empty();
  if (require_provenance && !sourced)
    f.fail(
        "has neither source nor assumption (add \"source\": \"where the value comes from\" or "
        "\"assumption\": \"why it was assumed\")");
  return f["value"];
}

// Rates and times must also lie in base/units.h's physical ranges (a bandwidth of 1e-300 B/s would make every
// read take forever); the error states the range.
double in_physical_range(const JsonAt& v, Kind kind, double d) {
  try {
    if (kind == Kind::rate) check_bandwidth_range(d);
    if (kind == Kind::time) check_latency_range(d);
  } catch (const Error& e) {
    v.fail(e.what());
  }
  return d;
}

// The storage type a per-type field's key names, in its canonical spelling; fails naming the key's path.
std::string storage_key(const JsonAt& field, const std::string& key) {
  try {
    return parse_storage_type(key).name();
  } catch (const Error& e) {
    field[key].fail(e.what());
  }
}

double convert(const JsonAt& v, Kind kind) {
  if (v.json().is_number()) {
    const double d = v.number();
    if (d < 0) v.expected("a non-negative number");
    return in_physical_range(v, kind, d);
  }
  if (!v.json().is_string() || kind == Kind::number)
    v.expected(kind == Kind::number ? "a number" : "a number or a string with a unit");
  const std::string s = v.json().get<std::string>();
  double d = 0;
  try {
    if (kind == Kind::rate)
      d = parse_rate(s);
    else if (kind == Kind::time)
      d = parse_seconds(s);
    else
      d = static_cast<double>(parse_bytes(s));
  } catch (const Error& e) {
    v.fail(e.what());
  }
  return in_physical_range(v, kind, d);
}

void check_value(const JsonAt& v, Kind kind) {
  if (kind != Kind::any) (void)convert(v, kind);
}

void check_measured_on(const JsonAt& m) {
  m.only_keys({"host", "cpu_model", "cores", "gpu"});
  for (const char* k : {"host", "cpu_model", "gpu"})
    if (auto s = m.find(k)) (void)s->string();
  if (auto c = m.find("cores")) (void)c->integer(1, 1u << 20);
}

void check_schema(const Json& j, const std::string& origin, bool require_provenance) {
  const JsonAt root(j, origin);
  if (!j.is_object()) root.expected("an object (a hardware profile: name, ssd, memory, cpu, gpu, link)");
  std::vector<std::string_view> top(std::begin(kTopStrings), std::end(kTopStrings));
  top.insert(top.end(), std::begin(kTopRecords), std::end(kTopRecords));
  top.push_back("measured_on");
  for (const auto& s : sections()) top.push_back(s.name);
  root.only_keys(top);
  for (auto k : kTopStrings)
    if (auto s = root.find(k)) (void)s->string();
  for (auto k : kTopRecords)
    if (auto r = root.find(k)) r->object();
  if (auto m = root.find("measured_on")) check_measured_on(*m);
  for (const auto& sec : sections()) {
    if (!sec.required && !root.has(sec.name)) continue;
    const JsonAt s = root[sec.name].object();
    std::vector<std::string_view> known;
    for (const auto& f : sec.fields) known.push_back(f.key);
    for (const char* p : sec.plain) known.push_back(p);
    for (const char* r : sec.retired) known.push_back(r);
    s.only_keys(known);
    if (auto m = s.find("model")) (void)m->string();
    for (const char* r : sec.retired)
      if (s.has(r))
        warn(origin + ": " + s.child_path(r) +
             " is no longer read by moesim (an older version's field): ignored");
    for (const auto& f : sec.fields) {
      auto field = s.find(f.key);
      if (!field) continue;
      if (f.kind != Kind::per_type) {
        check_value(quantity(*field, require_provenance), f.kind);
        continue;
      }
      field->object();
      for (const auto& [key, value] : field->json().items()) {
        (void)storage_key(*field, key);
        check_value(quantity((*field)[key], require_provenance), Kind::time);
      }
    }
  }
}

// gpu.dequant_time_per_element and cpu.dequant_time_per_element (absent: none); two keys naming one type are
// an error.
void read_dequant_times(HardwareProfile& h, const JsonAt& root) {
  for (auto [sec, into] :
       {std::pair{"gpu", &h.gpu_dequant_time_per_element}, {"cpu", &h.cpu_dequant_time_per_element}})
    if (auto f = root[sec].find("dequant_time_per_element"))
      for (const auto& [key, value] : f->json().items()) {
        const std::string type = storage_key(*f, key);
        if (into->count(type)) (*f)[key].fail("names " + type + " again (another key spells the same type)");
        (*into)[type] = convert(quantity((*f)[key], false), Kind::time);
      }
}

// The machine a calibrated profile was measured on, where it says.
void read_measured_on(HardwareProfile& h, const JsonAt& root) {
  if (auto m = root.find("measured_on")) {
    MeasuredOn mo;
    mo.host = m->json().value("host", "");
    mo.cpu_model = m->json().value("cpu_model", "");
    mo.gpu = m->json().value("gpu", "");
    if (auto c = m->find("cores")) mo.cores = static_cast<uint32_t>(c->integer(1, 1u << 20));
    h.measured_on = mo;
  }
}

// HardwareProfile::field_of: each member's own field where the profile has it, else the field its default is
// read from (as hardware_from_json below defaults them), else none.
void record_fields(HardwareProfile& h, const Json& j) {
  auto present = [&](const std::string& field) {
    const size_t dot = field.find('.');
    const std::string sec = field.substr(0, dot), key = field.substr(dot + 1);
    return j.contains(sec) && j.at(sec).is_object() && j.at(sec).contains(key);
  };
  auto own_or = [&](HwParam p, const std::string& fallback) {
    const std::string own = kHwParamFields[static_cast<size_t>(p)];
    return present(own) ? own : present(fallback) ? fallback : std::string();
  };
  for (size_t i = 0; i < kHwParams; ++i) h.field_of[i] = present(kHwParamFields[i]) ? kHwParamFields[i] : "";
  auto set = [&](HwParam p, const std::string& field) { h.field_of[static_cast<size_t>(p)] = field; };
  set(HwParam::kSsdPrefillReadBandwidth, own_or(HwParam::kSsdPrefillReadBandwidth, "ssd.read_bandwidth"));
  set(HwParam::kSsdPrefillReadLatency, own_or(HwParam::kSsdPrefillReadLatency, "ssd.read_latency"));
  if (!present("ssd.prefill_read_cpu_overhead") && !present("ssd.prefill_read_cpu_bandwidth")) {
    set(HwParam::kSsdPrefillReadCpuOverhead,
        own_or(HwParam::kSsdPrefillReadCpuOverhead, "ssd.read_cpu_overhead"));
    set(HwParam::kSsdPrefillReadCpuBandwidth,
        own_or(HwParam::kSsdPrefillReadCpuBandwidth, "ssd.read_cpu_bandwidth"));
  }
  set(HwParam::kCpuPrefillRecoverSlowdown,
      own_or(HwParam::kCpuPrefillRecoverSlowdown, "cpu.prefill_slowdown"));
  set(HwParam::kGpuExpertOverhead, own_or(HwParam::kGpuExpertOverhead, "gpu.kernel_overhead"));
  set(HwParam::kGpuRecoverBandwidth, own_or(HwParam::kGpuRecoverBandwidth, "gpu.memory_bandwidth"));
  set(HwParam::kGpuRecoverOverhead, own_or(HwParam::kGpuRecoverOverhead, "gpu.kernel_overhead"));
}

// ssd.queue_depth_curve's value: [{"depth": D, "latency": T, "bandwidth": R}, ...], depths whole and
// increasing, latencies non-negative, bandwidths positive (T and R numbers or strings with units).
std::vector<SsdDepthPoint> queue_depth_curve(const JsonAt& v) {
  v.array();
  if (v.size() == 0) v.expected("a non-empty list of {\"depth\", \"latency\", \"bandwidth\"} points");
  std::vector<SsdDepthPoint> curve;
  for (size_t i = 0; i < v.size(); ++i) {
    const JsonAt p = v[i].object();
    p.only_keys({"depth", "latency", "bandwidth"});
    SsdDepthPoint pt;
    pt.depth = static_cast<double>(p["depth"].integer(1, 1u << 20));
    if (!curve.empty() && !(pt.depth > curve.back().depth))
      p["depth"].expected("a depth above the previous point's " +
                          std::to_string(static_cast<uint64_t>(curve.back().depth)) +
                          " (the points in increasing depth)");
    pt.latency = convert(p["latency"], Kind::time);
    pt.bandwidth = convert(p["bandwidth"], Kind::rate);
    if (!(pt.bandwidth > 0)) p["bandwidth"].expected("a positive bandwidth");
    curve.push_back(pt);
  }
  return curve;
}

}  // namespace

SsdDepthPoint ssd_curve_at(const std::vector<SsdDepthPoint>& curve, double depth) {
  if (depth <= curve.front().depth) return curve.front();
  if (depth >= curve.back().depth) return curve.back();
  size_t i = 1;
  while (curve[i].depth < depth) ++i;
  const SsdDepthPoint &a = curve[i - 1], &b = curve[i];
  const double w = (depth - a.depth) / (b.depth - a.depth);
  return SsdDepthPoint{depth, a.latency + w * (b.latency - a.latency),
                       a.bandwidth + w * (b.bandwidth - a.bandwidth)};
}

double hardware_value(const Json& j, const char* section, const char* key, const char* kind,
                      const std::string& origin) {
  const JsonAt root(j, origin);
  const JsonAt v = quantity(root[section][key], false);
  const std::string_view k(kind);
  return convert(v, k == "rate"    ? Kind::rate
                    : k == "time"  ? Kind::time
                    : k == "bytes" ? Kind::bytes
                                   : Kind::number);
}

const char* hardware_field_kind(const std::string& section, const std::string& key) {
  for (const auto& sec : sections())
    if (sec.name == section)
      for (const auto& f : sec.fields)
        if (f.key == key) {
          switch (f.kind) {
            case Kind::rate:
              return "rate";
            case Kind::time:
              return "time";
            case Kind::bytes:
              return "bytes";
            case Kind::number:
              return "number";
            case Kind::any:
            case Kind::per_type:
              return "any";
          }
        }
  return nullptr;
}

HardwareProfile hardware_from_json(const Json& j, const std::string& origin, bool require_provenance) {
  check_schema(j, origin, require_provenance);
  HardwareProfile h;
  h.raw = j;
  record_fields(h, j);
  h.origin = origin;
  h.name = j.value("name", std::filesystem::path(origin).stem().string());
  h.display_name = j.value("display_name", h.name);
  const JsonAt root(j, origin);
  auto has = [&](const char* s, const char* k) { return j.at(s).contains(k); };
  auto get = [&](const char* s, const char* k, const char* kind) {
    return hardware_value(j, s, k, kind, origin);
  };
  auto positive = [&](const char* s, const char* k, const char* kind) {
    const double v = get(s, k, kind);
    if (!(v > 0)) quantity(root[s][k], false).expected("a positive value");
    return v;
  };
  auto whole = [&](const char* s, const char* k, uint64_t hi) {
    return static_cast<uint32_t>(quantity(root[s][k], false).integer(1, hi));
  };
  h.ssd_read_bandwidth = positive("ssd", "read_bandwidth", "rate");
  h.ssd_read_latency = get("ssd", "read_latency", "time");
  h.ssd_prefill_read_bandwidth = has("ssd", "prefill_read_bandwidth")
                                     ? positive("ssd", "prefill_read_bandwidth", "rate")
                                     : h.ssd_read_bandwidth;
  h.ssd_prefill_read_latency =
      has("ssd", "prefill_read_latency") ? get("ssd", "prefill_read_latency", "time") : h.ssd_read_latency;
  h.ssd_queue_depth = whole("ssd", "queue_depth", 1u << 20);
  if (auto c = root["ssd"].find("queue_depth_curve"))
    h.ssd_queue_depth_curve = queue_depth_curve(quantity(*c, false));
  if (has("ssd", "read_cpu_overhead")) h.ssd_read_cpu_overhead = get("ssd", "read_cpu_overhead", "time");
  if (has("ssd", "read_cpu_bandwidth"))
    h.ssd_read_cpu_bandwidth = positive("ssd", "read_cpu_bandwidth", "rate");
  // A prefill's pair: either field given, the pair is the prefill's own (an absent one 0); neither, the
  // decode step's.
  const bool prefill_overhead = has("ssd", "prefill_read_cpu_overhead");
  const bool prefill_bandwidth = has("ssd", "prefill_read_cpu_bandwidth");
  if (prefill_overhead || prefill_bandwidth) {
    if (prefill_overhead) h.ssd_prefill_read_cpu_overhead = get("ssd", "prefill_read_cpu_overhead", "time");
    if (prefill_bandwidth)
      h.ssd_prefill_read_cpu_bandwidth = positive("ssd", "prefill_read_cpu_bandwidth", "rate");
  } else {
    h.ssd_prefill_read_cpu_overhead = h.ssd_read_cpu_overhead;
    h.ssd_prefill_read_cpu_bandwidth = h.ssd_read_cpu_bandwidth;
  }
  const double capacity = positive("memory", "capacity", "bytes");
  if (!(capacity < 18446744073709551616.0))
    quantity(root["memory"]["capacity"], false).expected("at most 16EiB");
  h.memory_capacity = static_cast<uint64_t>(capacity);
  h.memory_bandwidth = positive("memory", "bandwidth", "rate");
  if (auto u = root["memory"].find("unified")) h.unified_memory = quantity(*u, false).boolean();
  if (has("memory", "os_reserve")) {
    const double reserve = get("memory", "os_reserve", "bytes");
    if (!(reserve >= 0 && reserve < capacity))
      quantity(root["memory"]["os_reserve"], false)
          .expected("a reserve of 0 or more bytes below memory.capacity");
    h.memory_reserve = static_cast<uint64_t>(reserve);
  }
  h.cpu_cores = whole("cpu", "cores", 1u << 20);
  h.cpu_memcpy_bandwidth = positive("cpu", "memcpy_bandwidth_per_core", "rate");
  if (has("cpu", "flops_per_core")) h.cpu_flops_per_core = positive("cpu", "flops_per_core", "number");
  if (has("cpu", "expert_bandwidth")) h.cpu_expert_bandwidth = positive("cpu", "expert_bandwidth", "rate");
  if (has("cpu", "load_copy_bandwidth"))
    h.cpu_load_copy_bandwidth = positive("cpu", "load_copy_bandwidth", "rate");
  if (has("cpu", "prefill_compute_slowdown"))
    h.cpu_prefill_compute_slowdown = positive("cpu", "prefill_compute_slowdown", "number");
  if (has("cpu", "prefill_slowdown")) h.cpu_prefill_slowdown = positive("cpu", "prefill_slowdown", "number");
  h.cpu_prefill_recover_slowdown = has("cpu", "prefill_recover_slowdown")
                                       ? positive("cpu", "prefill_recover_slowdown", "number")
                                       : h.cpu_prefill_slowdown;
  if (has("cpu", "decompress_bandwidth_per_core"))
    h.cpu_decompress_bandwidth = positive("cpu", "decompress_bandwidth_per_core", "rate");
  h.gpu_bf16_flops = positive("gpu", "bf16_flops", "number");
  h.gpu_memory_bandwidth = positive("gpu", "memory_bandwidth", "rate");
  if (has("gpu", "memory_capacity")) {
    // A unified-memory device has one memory (memory.capacity): a second size would be counted twice.
    if (h.unified_memory)
      quantity(root["gpu"]["memory_capacity"], false)
          .expected(
              "no GPU memory size on a unified-memory profile (memory.unified: its GPU uses "
              "memory.capacity)");
    const double vram = positive("gpu", "memory_capacity", "bytes");
    if (!(vram < 18446744073709551616.0))
      quantity(root["gpu"]["memory_capacity"], false).expected("at most 16EiB");
    h.gpu_memory_capacity = static_cast<uint64_t>(vram);
  }
  if (has("gpu", "memory_reserve")) {
    const double reserve = get("gpu", "memory_reserve", "bytes");
    if (!(reserve >= 0 && reserve < static_cast<double>(h.gpu_memory_capacity)))
      quantity(root["gpu"]["memory_reserve"], false)
          .expected("a reserve of 0 or more bytes below gpu.memory_capacity (which it needs)");
    h.gpu_memory_reserve = static_cast<uint64_t>(reserve);
  }
  h.gpu_kernel_overhead = get("gpu", "kernel_overhead", "time");
  h.gpu_expert_overhead =
      has("gpu", "expert_overhead") ? get("gpu", "expert_overhead", "time") : h.gpu_kernel_overhead;
  if (has("gpu", "fresh_expert_overhead"))
    h.gpu_fresh_expert_overhead = get("gpu", "fresh_expert_overhead", "time");
  if (has("gpu", "expert_gemm_overhead"))
    h.gpu_expert_gemm_overhead = get("gpu", "expert_gemm_overhead", "time");
  if (has("gpu", "dense_gemm_overhead"))
    h.gpu_dense_gemm_overhead = get("gpu", "dense_gemm_overhead", "time");
  if (has("gpu", "expert_gemm_flops"))
    h.gpu_expert_gemm_flops = positive("gpu", "expert_gemm_flops", "number");
  if (has("gpu", "dense_gemm_flops")) h.gpu_dense_gemm_flops = positive("gpu", "dense_gemm_flops", "number");
  h.gpu_recover_bandwidth =
      has("gpu", "recover_bandwidth") ? positive("gpu", "recover_bandwidth", "rate") : h.gpu_memory_bandwidth;
  h.gpu_recover_overhead =
      has("gpu", "recover_overhead") ? get("gpu", "recover_overhead", "time") : h.gpu_kernel_overhead;
  read_dequant_times(h, root);
  h.link_kind = quantity(root["link"]["kind"], false).string_of({"uma", "pcie"});
  h.link_bandwidth = positive("link", "bandwidth", "rate");
  h.link_latency = get("link", "latency", "time");
  read_measured_on(h, root);
  return h;
}

HardwareProfile load_hardware(const std::string& name_or_path) {
  std::string path = resolve_preset("hardware", name_or_path);
  return hardware_from_json(load_json_file(path), path, true);
}

}  // namespace moesim
