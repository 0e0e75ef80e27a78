// `moesim store info`: options and help; what it does is harness/store_info_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "harness/store_info_job.h"

namespace moesim::cli {
namespace store_info_cmd {

void setup(CLI::App& app) {
  auto o = std::make_shared<StoreInfoArgs>();
  app.add_option("store", o->store, "Expert store written by `moesim pack`")->required();
  app.add_flag("--json", o->json, "Write JSON (header, totals, per codec, per tensor) instead of the tables");
  app.add_option("-o,--output", o->out, "Output file ('-' = standard output)")->capture_default_str();
  app.callback([o] { write_file_atomic(o->out, store_info_output(*o)); });
}

}  // namespace store_info_cmd
MOESIM_CLI_COMMAND("store info", "Sizes and compression ratio of an expert store, per codec and per tensor",
                   store_info_cmd::setup);
}  // namespace moesim::cli
