// `moesim weights synth (--model M [--layers N] [--experts N] | --size BYTES) --std S
//  [--std-per-tensor gate_proj=S,...] --seed S -o OUT.safetensors`: writes LLM-like synthetic expert
// weights (Gaussian, BF16) named so that `moesim pack` recognises them (exec/weight_synth.h). The output is
// labelled synthetic in its __metadata__ and depends only on the arguments.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/arguments.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct WeightsSynthArgs {
  std::string model, size, std_per_tensor, out;
  uint32_t layers = 0, experts = 0;
  double std = 0.02;
  uint64_t seed = 0;
  bool json = false;
};

// Writes the synthetic weights to o.out and prints what it wrote.
// Returns what it wrote (cli/ prints it).
Wrote weights_synth(const WeightsSynthArgs& o);

}  // namespace moesim::harness
