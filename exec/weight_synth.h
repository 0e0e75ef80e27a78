// Synthetic LLM-like expert weights for `moesim weights synth`: Gaussian values N(0, std^2) rounded to BF16
// (trained LLM weight matrices are close to Gaussian; their BF16 exponent entropy is ~2.6 bits, ZipMoE
// §2.2 Fig. 2), named model.layers.{L}.mlp.experts.{E}.{gate,up,down}_proj.weight so `moesim pack`
// recognises them. Tensor i draws from Rng(seed).split(i): the output depends only on the arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "exec/safetensors.h"

namespace moesim::exec {

struct SynthTensor {
  std::string name;
  std::string role;  // gate_proj, up_proj, down_proj
  std::vector<uint64_t> shape;
};

// Expert tensors of `layers` x `experts` experts of a model preset (0 = all of the model's).
std::vector<SynthTensor> synth_layout_for_model(const ModelSpec& m, uint32_t layers, uint32_t experts);
// Experts of gate/up/down tensors of shape [rows, 1024] until `bytes` of BF16 data (a multiple of 2 KiB).
std::vector<SynthTensor> synth_layout_for_size(uint64_t bytes);

struct SynthOptions {
  double std = 0.02;
  std::map<std::string, double> std_per_role;  // overrides by role (gate_proj=0.015, ...)
  uint64_t seed = 0;
};

// Writes the tensors as a BF16 safetensors file (atomically); `meta` goes to __metadata__.
// `progress(done, total)` counts BF16 bytes of tensor data written, from the calling thread.
void write_synth_weights(const std::string& path, const std::vector<SynthTensor>& tensors,
                         const SynthOptions& opts, const Json& meta,
                         const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace moesim::exec
