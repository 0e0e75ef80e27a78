// `moesim fit --model M --hw H [--context N] [--batch B] [--system S] [--budget B] [--trace T]`: will the
// model run on the device, and how fast (core/memory_model.h).
//   * the memory breakdown at the largest budget: reserve, dense weights, embeddings and head, KV cache of
//     `context` tokens x `batch`, activations, the expert cache, what is left for the page cache;
//   * the largest expert budget per tier that fits with that context: the GPU tier (--budget of run; GPU
//   memory on
//     a discrete GPU, DRAM on unified memory) and the host tier (--host-budget: DRAM);
//   * the longest context that fits at --budget (absent: at the largest GPU budget's half, so that the answer
//   says
//     what trading cache for context buys);
//   * TTFT and TPOT at the largest GPU budget (capped at the model's experts), simulated on --trace or on a
//     synthetic trace of the model's shape (one sequence of --prompt prompt and --tokens generated tokens,
//     routed by a Zipf law of --zipf; 0, the default, is uniform routing: no popularity for the cache to
//     exploit, a conservative TPOT).
// A model whose weights, KV cache and reserve alone exceed the memory gets no budget and no timing: the
// breakdown says what is over, and the command exits 1.
#pragma once

#include <cstdint>
#include <string>

#include "base/json_io.h"
#include "core/params.h"

namespace moesim::harness {

struct FitArgs {
  std::string model, hw = "jetson-agx-orin-64gb", trace, budget, out = "-";
  PolicySpec system{"offload", {}};  // the timing run's system, parsed where it is read
  std::string dense = "pinned", compute_on = "gpu", recover_on = "gpu";
  uint64_t context = 4096;
  uint32_t batch = 1, prompt = 128, tokens = 64, io_depth = 1;
  double zipf = 0;
  uint64_t seed = 1;
  bool json = false;
  bool timing = true;  // simulate TTFT and TPOT (the memory answers alone without)
};

// The answer as JSON (header, breakdown, largest budgets, longest context, timing); throws moesim::Error
// (exit 1) when nothing fits beside the model's weights, with the breakdown.
Json fit_result(const FitArgs& a);
// The answer as the command prints it (text, or JSON text with a.json, with the run's warnings); cli/
// writes it to a.out, which is checked to be writable first.
std::string fit_output(const FitArgs& a);

}  // namespace moesim::harness
