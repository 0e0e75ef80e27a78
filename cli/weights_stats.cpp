// `moesim weights stats`: options and help; what it does is harness/weights_stats_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "harness/weights_stats_job.h"

namespace moesim::cli {
namespace weights_stats_cmd {

void setup(CLI::App& app) {
  auto o = std::make_shared<WeightsStatsArgs>();
  const std::string help = "Checkpoint: .safetensors file, folder of shards, or raw BF16 (with --raw-shape)";
  auto* named = app.add_option("--weights", o->path, help);
  app.add_option("path", o->path, help + " (same as --weights)")->excludes(named);
  app.add_flag("--json", o->json, "Write JSON instead of the table");
  app.add_option("-o,--output", o->out, "Output file ('-' = standard output)")->capture_default_str();
  app.add_option("--raw-shape", o->raw_shape, "PATH is raw BF16 of this shape, e.g. 4096x14336");
  add_jobs_option(app, o->threads, "Threads (results do not depend on it)", "--threads");
  app.callback([o] { write_file_atomic(o->out, weights_stats_output(*o)); });
}

}  // namespace weights_stats_cmd
MOESIM_CLI_COMMAND("weights stats",
                   "Exponent entropy, entropy bound and codec ratios of a checkpoint's weights",
                   weights_stats_cmd::setup);
}  // namespace moesim::cli
