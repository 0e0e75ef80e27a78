#include "harness/weights_synth_job.h"

#include <cstdio>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/units.h"
#include "core/model_spec.h"
#include "exec/weight_synth.h"
#include "harness/arguments.h"

namespace moesim::harness {
namespace {

std::map<std::string, double> parse_std_map(const std::string& text) {
  std::map<std::string, double> m;
  if (text.empty()) return m;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--std-per-tensor '" + item + "': expected name=std (e.g. down_proj=0.01)");
    const std::string role = item.substr(0, eq);
    if (role != "gate_proj" && role != "up_proj" && role != "down_proj")
      throw UsageError("--std-per-tensor '" + item +
                       "': tensor name must be gate_proj, up_proj or down_proj");
    try {
      size_t used = 0;
      const double v = std::stod(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1 || !(v > 0)) throw std::invalid_argument("x");
      m[role] = v;
    } catch (const std::exception&) {
      throw UsageError("--std-per-tensor '" + item + "': std must be a positive number");
    }
  }
  return m;
}

}  // namespace

Wrote weights_synth(const WeightsSynthArgs& o) {
  if (o.model.empty() == o.size.empty()) throw UsageError("give exactly one of --model and --size");
  check_output_writable(o.out);
  std::vector<exec::SynthTensor> tensors;
  Json meta = {{"generator", "moesim weights synth"},
               {"synthetic", "true"},
               {"distribution", "gaussian"},
               {"std", std::to_string(o.std)},
               {"seed", std::to_string(o.seed)}};
  if (!o.model.empty()) {
    const ModelSpec m = load_model(o.model);
    tensors = exec::synth_layout_for_model(m, o.layers, o.experts);
    meta["model"] = m.name;
  } else {
    if (o.layers || o.experts) throw UsageError("--layers and --experts go with --model, not --size");
    tensors = exec::synth_layout_for_size(parse_bytes(o.size));
  }
  exec::SynthOptions so;
  so.std = o.std;
  so.std_per_role = parse_std_map(o.std_per_tensor);
  so.seed = o.seed;
  if (!o.std_per_tensor.empty()) meta["std_per_tensor"] = o.std_per_tensor;
  Progress bar("weights synth", 0, Progress::kBytes);
  exec::write_synth_weights(o.out, tensors, so, meta, [&bar](uint64_t done, uint64_t total) {
    bar.set_total(total);
    bar.set(done);
  });
  bar.finish();
  uint64_t elements = 0;
  for (const auto& t : tensors) {
    uint64_t n = 1;
    for (auto d : t.shape) n *= d;
    elements += n;
  }
  Wrote w;
  w.summary = {{"path", o.out},
               {"tensors", tensors.size()},
               {"bf16_bytes", elements * 2},
               {"std", o.std},
               {"seed", o.seed}};
  w.text = strprintf("wrote %zu synthetic expert tensors (%s BF16, Gaussian std %g, seed %llu) to %s\n",
                     tensors.size(), format_bytes(elements * 2).c_str(), o.std,
                     static_cast<unsigned long long>(o.seed), o.out.c_str());
  return w;
}

}  // namespace moesim::harness
