// `moesim pack`: options and help; what it does is harness/pack_job.h.
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/summary_json.h"
#include "harness/pack_job.h"

namespace moesim::cli {
namespace pack_cmd {

void setup(CLI::App& app) {
  auto o = std::make_shared<PackArgs>();
  app.add_option("--weights", o->weights,
                 "Checkpoint: a .safetensors file, a folder of shards, or a raw BF16 file")
      ->required();
  app.add_option("--codec", o->codec, "E-chunk codec: zstd:LEVEL, lz4hc:LEVEL, lz4, raw")
      ->capture_default_str();
  app.add_option("--shards", o->shards, "K: exponent shards per tensor (independent codec frames)")
      ->capture_default_str()
      ->check(whole_in_range(1, 65536));
  app.add_option("-o,--output", o->out, "Output store file ('-' = standard output)")->required();
  add_jobs_option(app, o->threads, "Compression threads (the output does not depend on it)", "--threads");
  app.add_flag("--all-tensors", o->all_tensors,
               "Pack every tensor as a one-tensor expert (non-MoE checkpoints)");
  app.add_option("--raw-shape", o->raw_shape, "The weights file is raw BF16 of this shape, e.g. 4096x14336");
  add_summary_json_flag(app, o->json);
  app.callback([o] {
    check_summary_json(o->json, o->out);
    print_wrote("pack", pack_store(*o), o->json, o->out);
  });
}

}  // namespace pack_cmd
MOESIM_CLI_COMMAND("pack", "Pack a checkpoint's expert tensors into an expert store (split BF16, K shards)",
                   pack_cmd::setup);
}  // namespace moesim::cli
