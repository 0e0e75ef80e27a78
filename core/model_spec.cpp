#include "core/model_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "core/data_dir.h"
#include "core/error.h"

namespace moesim {

uint32_t dtype_size(DType d) { return d == DType::F32 ? 4 : 2; }

const char* dtype_name(DType d) {
  switch (d) {
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::F32: return "f32";
  }
  return "?";
}

DType parse_dtype(const std::string& s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "bf16" || l == "bfloat16") return DType::BF16;
  if (l == "f16" || l == "fp16" || l == "float16") return DType::F16;
  if (l == "f32" || l == "fp32" || l == "float32") return DType::F32;
  throw Error("unknown dtype '" + s + "' (use bf16, f16, f32)");
}

uint64_t ExpertTensor::elements() const {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool preset_has(const Json& j, const char* key) { return j.is_object() && j.contains(key); }

double preset_number(const Json& j, const char* key, const std::string& origin) {
  if (!preset_has(j, key)) throw Error(origin + ": missing field '" + key + "'");
  const Json& v = j.at(key);
  const Json* num = &v;
  if (v.is_object()) {
    if (!v.contains("value")) throw Error(origin + ": field '" + std::string(key) + "' has no 'value'");
    num = &v.at("value");
  }
  if (!num->is_number())
    throw Error(origin + ": field '" + std::string(key) + "' must be a number, got " + num->dump());
  double d = num->get<double>();
  if (!std::isfinite(d) || d < 0)
    throw Error(origin + ": field '" + std::string(key) + "' must be finite and non-negative");
  return d;
}

namespace {
uint64_t count(const Json& j, const char* key, const std::string& origin, bool positive = true) {
  double d = preset_number(j, key, origin);
  if (d != std::floor(d)) throw Error(origin + ": field '" + std::string(key) + "' must be an integer");
  if (positive && d < 1) throw Error(origin + ": field '" + std::string(key) + "' must be at least 1");
  return static_cast<uint64_t>(d);
}
}  // namespace

ModelSpec model_from_json(const Json& j, const std::string& origin) {
  ModelSpec m;
  m.raw = j;
  m.origin = origin;
  m.name = j.value("name", std::filesystem::path(origin).stem().string());
  m.display_name = j.value("display_name", m.name);
  m.architecture = j.value("architecture", "decoder");
  m.num_layers = static_cast<uint32_t>(count(j, "num_layers", origin));
  m.moe_layers = static_cast<uint32_t>(count(j, "moe_layers", origin));
  m.routed_experts = static_cast<uint32_t>(count(j, "routed_experts", origin));
  m.shared_experts = static_cast<uint32_t>(preset_has(j, "shared_experts") ? count(j, "shared_experts", origin, false) : 0);
  m.top_k = static_cast<uint32_t>(count(j, "top_k", origin));
  m.hidden_size = count(j, "hidden_size", origin);
  m.expert_intermediate_size = count(j, "expert_intermediate_size", origin);
  if (preset_has(j, "shared_expert_intermediate_size"))
    m.shared_expert_intermediate_size = count(j, "shared_expert_intermediate_size", origin, false);
  if (preset_has(j, "attention_params_per_layer"))
    m.attention_params_per_layer = count(j, "attention_params_per_layer", origin, false);
  if (j.contains("dtype")) m.dtype = parse_dtype(j.at("dtype").get<std::string>());
  if (m.moe_layers > m.num_layers) throw Error(origin + ": moe_layers exceeds num_layers");
  if (m.routed_experts > 65535) throw Error(origin + ": routed_experts must be at most 65535");
  if (m.top_k > m.routed_experts) throw Error(origin + ": top_k exceeds routed_experts");
  if (!j.contains("expert_tensors") || !j.at("expert_tensors").is_array() || j.at("expert_tensors").empty())
    throw Error(origin + ": 'expert_tensors' must be a non-empty array of {name, shape}");
  for (const auto& t : j.at("expert_tensors")) {
    ExpertTensor et;
    et.name = require<std::string>(t, "name", origin);
    if (!t.contains("shape") || !t.at("shape").is_array() || t.at("shape").empty())
      throw Error(origin + ": expert tensor '" + et.name + "' needs a non-empty 'shape' array");
    for (const auto& d : t.at("shape")) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() == 0)
        throw Error(origin + ": expert tensor '" + et.name + "' has a bad dimension " + d.dump());
      et.shape.push_back(d.get<uint64_t>());
    }
    m.expert_tensors.push_back(std::move(et));
  }
  return m;
}

ModelSpec load_model(const std::string& name_or_path) {
  std::string path = resolve_preset("models", name_or_path);
  return model_from_json(load_json_file(path), path);
}

uint64_t ModelSpec::expert_elements() const {
  uint64_t n = 0;
  for (const auto& t : expert_tensors) n += t.elements();
  return n;
}

uint64_t ModelSpec::shared_expert_bytes() const {
  if (shared_experts == 0 || expert_intermediate_size == 0) return 0;
  const uint64_t inter = shared_expert_intermediate_size ? shared_expert_intermediate_size : expert_intermediate_size;
  // Scale the routed expert's element count by the intermediate-size ratio (same tensor layout).
  return expert_elements() / expert_intermediate_size * inter * dtype_size(dtype);
}

uint64_t ModelSpec::dense_bytes_per_layer() const {
  const uint64_t router = hidden_size * routed_experts;
  return (attention_params_per_layer + router) * dtype_size(dtype) + shared_experts * shared_expert_bytes();
}

std::optional<ModelSpec> preset_for_model_name(const std::string& model_name) {
  std::string m = model_name;
  for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string best;
  for (const auto& n : list_presets("models"))
    if (m.starts_with(n) && n.size() > best.size()) best = n;
  if (best.empty()) return std::nullopt;
  return load_model(best);
}

}  // namespace moesim
