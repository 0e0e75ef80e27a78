#include "harness/exec_runner.h"

#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/cost_model.h"

namespace moesim::harness {

serving::RunResult run_exec(const serving::SystemConfig& cfg, const traces::LookupStream& stream,
                            const traces::TraceInfo& info, const serving::SourcedCosts& costs,
                            const HardwareProfile& hw, const ExecRunOptions& opt, Json* config,
                            ExecReport* report, HwReads* reads) {
  exec::StoreReadOptions ro;
  ro.direct_io = opt.direct_io;
  ro.io = opt.io;
  const exec::StoreReader reader(opt.store, ro);
  if (opt.io == exec::IoBackend::kUring && reader.io_backend() != exec::IoBackend::kUring)
    warn(opt.store + ": --io uring: io_uring is unavailable here (" + reader.io_fallback() +
         "); exec reads with pread");
  if (opt.direct_io && !reader.direct_io_active())
    warn(opt.store +
         ": the filesystem refused O_DIRECT; exec reads through the page cache, so SSD reads may "
         "be served from memory and look faster than the device");
  exec::ExecModel model;
  model.tensor_roles = costs.costs.tensor_names;
  model.layers = info.layers;
  model.experts = info.experts;
  model.dense_bytes = costs.costs.dense_bytes;
  // The store must hold the tensors whose sizes the run's ops carry: compare expert bytes per layer.
  for (uint32_t l = 0; l < info.layers; ++l) {
    uint64_t bytes = 0;
    for (const auto& role : model.tensor_roles) {
      const exec::StoreEntry* e = reader.find(l, 0, role);
      if (!e)
        throw Error(opt.store + ": no tensor " + role + " for layer " + std::to_string(l) +
                    " expert 0; the trace has " + std::to_string(info.layers) + " layers x " +
                    std::to_string(info.experts) + " experts of " + info.model + exec::kShapeMismatchHint);
      bytes += e->bf16_bytes();
    }
    if (l < costs.costs.expert_bytes.size() && bytes != costs.costs.expert_bytes[l])
      throw Error(opt.store + ": layer " + std::to_string(l) + "'s experts hold " + format_bytes(bytes) +
                  " of BF16 weights but the run's model says " + format_bytes(costs.costs.expert_bytes[l]) +
                  " (pass the --model the store was made from)");
  }
  const unsigned cpus = machine_cores();
  if (opt.workers > cpus)
    warn("exec runs " + std::to_string(opt.workers) +
         " CPU workers (--workers) on a "
         "machine with " +
         std::to_string(cpus) +
         " CPUs: they share the CPUs with the I/O thread, the GPU stream "
         "and the pipeline thread, and the measured times include that contention");
  const CostModel estimator(hw);
  exec::ExecOptions eo;
  eo.cpu_workers = opt.workers;
  eo.io_depth = opt.io_depth;
  eo.direct_io = opt.direct_io;
  eo.seed = opt.seed;
  eo.gpu = opt.gpu;
  eo.verify_gpu = opt.verify_gpu;
  exec::ExecPlatform platform(reader, model, estimator, eo);
  serving::SystemConfig c = cfg;
  // CPU-only machines have one memory; with a GPU the profile says whether it is unified (a Jetson, Apple
  // silicon) or discrete (device memory for F, host memory for the rest, transfers over the link).
  c.unified_memory = opt.gpu ? hw.unified_memory : true;
  serving::RunResult r = serving::run(c, stream, info, costs, platform);
  if (reads) reads->merge(estimator.reads());
  if (config) {
    *config = serving::config_json(c, r, costs, info, stream.batch, platform);
    (*config)["hardware"] = hw.name;
    (*config)["hardware_origin"] = hw.origin;
    (*config)["store"] = opt.store;
  }
  if (report) {
    report->counters = platform.counters();
    report->direct_io = reader.direct_io_active();
    report->io = exec::io_backend_name(reader.io_backend());
    report->io_fallback = reader.io_fallback();
    report->platform = platform.describe();
    report->gpu = opt.gpu;
    report->resources = platform.resource_stats();
  }
  return r;
}

}  // namespace moesim::harness
