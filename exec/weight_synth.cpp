#include "exec/weight_synth.h"

#include <algorithm>

#include "base/error.h"
#include "base/rng.h"
#include "kernels/bf16.h"

namespace moesim::exec {
namespace {

// Preset tensor names -> the hf-mlp-experts role names (Mixtral's w1/w3/w2 = gate/up/down; Switch's wi/wo).
std::string role_for(const std::string& preset_name, const std::string& model) {
  if (preset_name == "gate_proj" || preset_name == "up_proj" || preset_name == "down_proj")
    return preset_name;
  if (preset_name == "w1") return "gate_proj";
  if (preset_name == "w3" || preset_name == "wi") return "up_proj";
  if (preset_name == "w2" || preset_name == "wo") return "down_proj";
  throw Error("model " + model + ": expert tensor '" + preset_name +
              "' has no gate_proj/up_proj/down_proj equivalent; use --size instead");
}

}  // namespace

std::vector<SynthTensor> synth_layout_for_model(const ModelSpec& m, uint32_t layers, uint32_t experts) {
  const uint32_t L = layers ? layers : m.moe_layers;
  const uint32_t E = experts ? experts : m.routed_experts;
  if (L > m.moe_layers || E > m.routed_experts)
    throw Error("model " + m.name + " has " + std::to_string(m.moe_layers) + " MoE layers and " +
                std::to_string(m.routed_experts) + " experts; asked for " + std::to_string(L) + " x " +
                std::to_string(E));
  std::vector<SynthTensor> out;
  for (uint32_t l = 0; l < L; ++l)
    for (uint32_t e = 0; e < E; ++e)
      for (const auto& t : m.expert_tensors) {
        const std::string role = role_for(t.name, m.name);
        out.push_back({"model.layers." + std::to_string(l) + ".mlp.experts." + std::to_string(e) + "." +
                           role + ".weight",
                       role, t.shape});
      }
  return out;
}

std::vector<SynthTensor> synth_layout_for_size(uint64_t bytes) {
  constexpr uint64_t kCols = 1024, kMaxRows = 512;
  if (bytes == 0 || bytes % (kCols * 2) != 0)
    throw Error("--size " + std::to_string(bytes) +
                ": must be a positive multiple of 2 KiB (rows of 1024 BF16 values)");
  static const char* roles[] = {"gate_proj", "up_proj", "down_proj"};
  std::vector<SynthTensor> out;
  uint64_t rows_left = bytes / (kCols * 2);
  for (uint64_t i = 0; rows_left > 0; ++i) {
    const uint64_t rows = std::min(kMaxRows, rows_left);
    rows_left -= rows;
    const std::string role = roles[i % 3];
    out.push_back({"model.layers.0.mlp.experts." + std::to_string(i / 3) + "." + role + ".weight",
                   role,
                   {rows, kCols}});
  }
  return out;
}

void write_synth_weights(const std::string& path, const std::vector<SynthTensor>& tensors,
                         const SynthOptions& opts, const Json& meta,
                         const std::function<void(uint64_t, uint64_t)>& progress) {
  std::vector<SafetensorsEntry> entries;
  uint64_t total_bytes = 0;
  for (const auto& t : tensors) {
    entries.push_back({t.name, DType::BF16, t.shape});
    total_bytes += entries.back().size_bytes();
  }
  uint64_t written = 0;
  for (const auto& [role, s] : opts.std_per_role)
    if (!(s > 0)) throw Error("--std-per-tensor " + role + ": std must be > 0");
  if (!(opts.std > 0)) throw Error("--std must be > 0");
  SafetensorsWriter w(path, std::move(entries), meta);
  const Rng root(opts.seed);
  constexpr size_t kBlock = 65536;
  std::vector<float> f(kBlock);
  std::vector<uint16_t> b(kBlock);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    auto it = opts.std_per_role.find(t.role);
    const double sd = it != opts.std_per_role.end() ? it->second : opts.std;
    Rng rng = root.split(i);
    uint64_t n = 1;
    for (auto d : t.shape) n *= d;
    for (uint64_t done = 0; done < n; done += kBlock) {
      const size_t m = static_cast<size_t>(std::min<uint64_t>(kBlock, n - done));
      for (size_t j = 0; j < m; ++j) f[j] = static_cast<float>(rng.normal() * sd);
      kernels::f32_to_bf16(f.data(), m, b.data());
      w.write(b.data(), m * 2);
      written += m * 2;
      if (progress) progress(written, total_bytes);
    }
  }
  w.commit();
}

}  // namespace moesim::exec
