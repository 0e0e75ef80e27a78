#include "serving/model_costs.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/data_dir.h"

namespace moesim::serving {
namespace {

// The distinct storage types of a model's expert tensors ("bf16", "q4_k+q6_k").
std::string expert_storage(const ModelSpec& m) {
  std::vector<std::string> names;
  for (const auto& t : m.expert_tensors)
    if (std::find(names.begin(), names.end(), m.tensor_type(t).name()) == names.end())
      names.push_back(m.tensor_type(t).name());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : "+") + n;
  return s;
}

std::string storage_label(const ModelSpec& m) {
  return m.quantization.empty() ? std::string(dtype_name(m.dtype)) : m.quantization;
}

// A preset name the trace's model name would start with: lower case, without a quantization suffix.
std::string suggested_name(const std::string& model) {
  std::string n;
  for (char ch : model) n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* q : {"-q", "-iq", "-mxfp4", "-f16", "-bf16"})
    if (auto at = n.rfind(q); at != std::string::npos && at > 0) n.resize(at);
  return n;
}

// The trace's recorded sizes win; when the matched preset claims a stored form of its own (a quantization),
// sizes that differ by more than 5% in all say that one of the two does not describe the recorded file.
void warn_size_mismatch(const traces::TraceInfo& info, const ModelSpec& preset) {
  if (preset.quantization.empty() || info.expert_bytes.empty()) return;
  double trace = 0, model = 0;
  for (uint32_t l = 0; l < info.expert_bytes.size(); ++l) {
    trace += static_cast<double>(info.expert_bytes[l]);
    model += static_cast<double>(preset.bytes_per_expert(l));
  }
  if (std::abs(trace / model - 1.0) <= 0.05) return;
  warn("the trace's expert sizes (" + format_bytes(static_cast<uint64_t>(trace / info.expert_bytes.size())) +
       " an expert, mean over its " + std::to_string(info.expert_bytes.size()) +
       " layers) differ by more than 5% " + "from model preset " + preset.name + "'s (" +
       format_bytes(preset.bytes_per_expert()) + " in " + preset.quantization +
       "); the run uses the trace's");
}

void fill_shape(ModelCosts& c, const ModelSpec& m) {
  const double total = static_cast<double>(m.expert_elements());
  for (const auto& t : m.expert_tensors) {
    c.tensor_names.push_back(t.name);
    c.tensor_share.push_back(static_cast<double>(t.elements()) / total);
  }
  c.expert_flops_per_token = m.expert_flops_per_token();
  // FLOPs from element counts: a quantized weight is one multiply-add as a BF16 one is.
  c.dense_flops_per_token = 2.0 * static_cast<double>(m.dense_elements_per_layer());
}

}  // namespace

SourcedCosts model_costs(const traces::TraceInfo& info, const std::optional<ModelSpec>& model) {
  SourcedCosts out;
  ModelCosts& c = out.costs;
  Json& s = out.sizes;
  if (model) {
    fill_shape(c, *model);
    for (uint32_t l = 0; l < info.layers; ++l) {
      c.expert_bytes.push_back(model->bytes_per_expert(l));
      c.dense_bytes.push_back(model->dense_bytes_per_layer(l));
      std::vector<std::pair<std::string, uint64_t>> by_type;
      for (size_t i = 0; i < model->expert_tensors.size(); ++i) {
        const std::string t = model->tensor_type(i, l).name();
        auto at = std::find_if(by_type.begin(), by_type.end(), [&](const auto& p) { return p.first == t; });
        if (at == by_type.end()) at = by_type.insert(by_type.end(), {t, 0});
        at->second += model->expert_tensors[i].elements();
      }
      c.expert_storage.push_back(std::move(by_type));
    }
    s["expert_bytes_source"] = "model " + model->name + " (" + storage_label(*model) + ")";
    s["expert_storage"] = expert_storage(*model);
    s["dense_bytes_source"] = "model " + model->name;
    s["shape_source"] = "model " + model->name;
  } else {
    if (info.expert_bytes.size() != info.layers)
      throw Error("the trace records no per-layer expert sizes; pass --model to take them from a preset");
    const auto preset = preset_for_model_name(info.model);
    if (!preset)
      throw Error(
          "no model preset matches the trace's model '" + info.model +
          "' (needed for FLOPs and the tensor split; the sizes come from the trace): make one from the "
          "model's Hugging Face config.json with `moesim model import config.json -o " +
          data_dir() + "/models/NAME.json` (NAME a prefix of the trace's model name, e.g. " +
          suggested_name(info.model) + "), or pass --model M.json (see `moesim presets`)");
    fill_shape(c, *preset);
    c.expert_bytes = info.expert_bytes;
    s["expert_storage"] = "trace";
    warn_size_mismatch(info, *preset);
    s["expert_bytes_source"] =
        "trace: " + info.provenance.value("expert_bytes_source", std::string("header"));
    s["shape_source"] = "model preset " + preset->name + " (element counts, tensor split, FLOPs)";
    const Json& prov = info.provenance;
    if (prov.contains("dense_bytes") && prov["dense_bytes"].is_array() &&
        prov["dense_bytes"].size() == info.layers) {
      for (const auto& v : prov["dense_bytes"]) c.dense_bytes.push_back(v.get<uint64_t>());
      s["dense_bytes_source"] = "trace provenance";
    } else {
      for (uint32_t l = 0; l < info.layers; ++l) {
        const double ratio =
            static_cast<double>(info.expert_bytes[l]) / static_cast<double>(preset->bytes_per_expert(l));
        c.dense_bytes.push_back(
            static_cast<uint64_t>(static_cast<double>(preset->dense_bytes_per_layer(l)) * ratio));
      }
      s["dense_bytes_source"] =
          "model preset " + preset->name +
          " dense bytes scaled by the trace's quantization ratio (trace expert bytes / preset "
          "expert bytes)";
    }
  }
  s["expert_bytes_layer0"] = c.expert_bytes.empty() ? 0 : c.expert_bytes[0];
  uint64_t lo = 0, hi = 0, total = 0;
  for (uint64_t b : c.expert_bytes) {
    lo = lo ? std::min(lo, b) : b;
    hi = std::max(hi, b);
    total += b * info.experts;
  }
  s["expert_bytes_min"] = lo;
  s["expert_bytes_max"] = hi;
  s["all_experts_bytes"] = total;
  s["dense_bytes_layer0"] = c.dense_bytes.empty() ? 0 : c.dense_bytes[0];
  s["dense_weights"] = "resident (not charged to the budget, never read from the SSD)";
  return out;
}

}  // namespace moesim::serving
