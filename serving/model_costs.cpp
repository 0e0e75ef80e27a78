#include "serving/model_costs.h"

#include <algorithm>

#include "base/error.h"

namespace moesim::serving {
namespace {

void fill_shape(ModelCosts& c, const ModelSpec& m) {
  const double total = static_cast<double>(m.expert_elements());
  for (const auto& t : m.expert_tensors) {
    c.tensor_names.push_back(t.name);
    c.tensor_share.push_back(static_cast<double>(t.elements()) / total);
  }
  c.expert_flops_per_token = m.expert_flops_per_token();
  c.dense_flops_per_token = 2.0 * static_cast<double>(m.dense_bytes_per_layer() / dtype_size(m.dtype));
}

}  // namespace

SourcedCosts model_costs(const traces::TraceInfo& info, const std::optional<ModelSpec>& model) {
  SourcedCosts out;
  ModelCosts& c = out.costs;
  Json& s = out.sizes;
  if (model) {
    fill_shape(c, *model);
    c.expert_bytes.assign(info.layers, model->bytes_per_expert());
    c.dense_bytes.assign(info.layers, model->dense_bytes_per_layer());
    s["expert_bytes_source"] = "model " + model->name + " (" + dtype_name(model->dtype) + ")";
    s["dense_bytes_source"] = "model " + model->name;
    s["shape_source"] = "model " + model->name;
  } else {
    if (info.expert_bytes.size() != info.layers)
      throw Error("the trace records no per-layer expert sizes; pass --model to take them from a preset");
    const auto preset = preset_for_model_name(info.model);
    if (!preset)
      throw Error("no model preset matches the trace's model '" + info.model +
                  "' (needed for FLOPs and dense sizes); pass --model (see `moesim presets`)");
    fill_shape(c, *preset);
    c.expert_bytes = info.expert_bytes;
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
            static_cast<double>(info.expert_bytes[l]) / static_cast<double>(preset->bytes_per_expert());
        c.dense_bytes.push_back(
            static_cast<uint64_t>(static_cast<double>(preset->dense_bytes_per_layer()) * ratio));
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
