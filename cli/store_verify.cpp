// `moesim store verify`: options and help; what it does is harness/store_verify_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/summary_json.h"
#include "harness/store_verify_job.h"

namespace moesim::cli {
namespace store_verify_cmd {

void setup(CLI::App& app) {
  auto o = std::make_shared<StoreVerifyArgs>();
  app.add_option("store", o->store, "Expert store written by `moesim pack`")->required();
  app.add_option("--weights", o->weights, "The checkpoint the store was packed from")->required();
  app.add_option("--raw-shape", o->raw_shape,
                 "The weights file is raw BF16 of this shape (default: from the store)");
  add_jobs_option(app, o->threads, "Decompression threads per tensor (the result does not depend on it)",
                  "--threads");
  app.add_flag("--json", o->json,
               "Write JSON (header, tensors and bytes verified) instead of a line of text");
  app.add_option("-o,--output", o->out, "Output file ('-' = standard output)")->capture_default_str();
  app.add_flag("--direct-io", o->direct_io,
               "Read chunks with O_DIRECT (falls back when the filesystem refuses)");
  app.callback([o] { write_file_atomic(o->out, store_verify_output(*o)); });
}

}  // namespace store_verify_cmd
MOESIM_CLI_COMMAND("store verify",
                   "Check every tensor of an expert store bit-exact against its source checkpoint",
                   store_verify_cmd::setup);
}  // namespace moesim::cli
