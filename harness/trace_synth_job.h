// `moesim trace synth`: generates a synthetic trace (traces/synth.h, docs/synth.md) -- independent Zipf
// per layer, or fitted to a real trace -- and writes it as .mtr (atomically). Synthetic traces are
// labelled synthetic in their header and in every result computed from them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/arguments.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct TraceSynthArgs {
  std::string model;
  uint32_t tokens = 0;
  uint64_t seed = 0;
  std::optional<double> zipf;
  std::string fit;
  std::string trace;       // --trace / positional: the same as --fit
  std::string logits_for;  // attach synthetic logits to this real trace (traces/logits_for.h)
  uint32_t sequences = 1;
  uint32_t prompt_tokens = 0;
  bool logits = false;
  uint32_t pairs = 8;
  bool no_temporal = false;
  std::string out;
  bool json = false;
  traces::LoadOptions load;  // how --fit's and --logits-for's trace is read (--format, --fields, ...)
};

// Generates the synthetic trace and writes it to args.out; returns what it wrote (cli/ prints the text as a
// notice on standard error, or the summary with --json).
Wrote synth_trace(const TraceSynthArgs& args);

}  // namespace moesim::harness
