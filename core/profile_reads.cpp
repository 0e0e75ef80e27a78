#include "core/profile_reads.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace moesim {
namespace {

std::pair<std::string, std::string> split_field(const std::string& field) {
  const size_t dot = field.find('.');
  if (dot == std::string::npos) return {field, ""};
  return {field.substr(0, dot), field.substr(dot + 1)};
}

const Json* field_json(const HardwareProfile& hw, const std::string& field) {
  const auto [sec, key] = split_field(field);
  if (!hw.raw.is_object() || !hw.raw.contains(sec) || !hw.raw.at(sec).is_object() || !hw.raw.at(sec).contains(key))
    return nullptr;
  return &hw.raw.at(sec).at(key);
}

}  // namespace

std::vector<std::string> fields_read(const HardwareProfile& hw, const HwReads& reads,
                                     const std::vector<std::string>& more) {
  std::vector<std::string> out;
  auto add = [&](const std::string& f) {
    if (!f.empty() && std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (size_t i = 0; i < kHwParams; ++i)
    if (reads.has(static_cast<HwParam>(i))) add(hw.field_of[i]);
  for (const auto& f : more) add(f);
  return out;
}

std::vector<std::string> runtime_fields_read(const HardwareProfile& hw) {
  std::vector<std::string> out;
  if (!hw.raw.is_object() || !hw.raw.contains("runtime") || !hw.raw.at("runtime").is_object()) return out;
  for (const auto& [key, v] : hw.raw.at("runtime").items()) {
    const char* kind = hardware_field_kind("runtime", key);
    if (kind && std::string(kind) != "any") out.push_back("runtime." + key);
  }
  return out;
}

Json rests_on_json(const HardwareProfile& hw, const std::vector<std::string>& fields) {
  Json out = Json::array();
  for (const auto& f : fields) {
    const Json* j = field_json(hw, f);
    if (!j || !j->is_object() || !j->contains("assumption")) continue;
    const Json& why = j->at("assumption");
    if (!why.is_string() || why.get<std::string>().empty()) continue;
    out.push_back({{"field", f}, {"value", j->value("value", Json())}, {"assumption", why}});
  }
  return out;
}

std::string rests_on_line(const Json& rests_on) {
  if (!rests_on.is_array() || rests_on.empty()) return "";
  std::string t = "rests on assumptions: ";
  for (size_t i = 0; i < rests_on.size(); ++i) t += (i ? ", " : "") + rests_on[i].at("field").get<std::string>();
  return t + "\n";
}

HardwareProfile scaled_profile(const HardwareProfile& hw, const std::string& field, double factor, double* value) {
  const auto [sec, key] = split_field(field);
  const char* kind = hardware_field_kind(sec, key);
  if (!kind || std::string(kind) == "any")
    throw Error("'" + field + "' is not a scalar quantity of a hardware profile (docs/hardware-format.md)");
  if (!field_json(hw, field)) throw Error(hw.origin + ": has no field '" + field + "' to scale");
  if (!(factor > 0) || !std::isfinite(factor)) throw Error("scaling " + field + ": the factor must be positive");
  double v = hardware_value(hw.raw, sec.c_str(), key.c_str(), kind, hw.origin) * factor;
  const bool whole = field == "ssd.queue_depth" || field == "cpu.cores" || field == "runtime.cpu_cores";
  if (whole) v = std::max(1.0, std::round(v));
  const Json scaled = whole ? Json(static_cast<int64_t>(v)) : Json(v);
  Json raw = hw.raw;
  Json& f = raw[sec][key];
  if (f.is_object()) f["value"] = scaled;
  else f = scaled;
  if (value) *value = v;
  HardwareProfile out = hardware_from_json(raw, hw.origin, false);
  out.name = hw.name;
  out.display_name = hw.display_name;
  return out;
}

}  // namespace moesim
