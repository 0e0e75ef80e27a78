// `moesim policies`: options and help; what it does is harness/policies_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "harness/policies_job.h"

namespace moesim::cli {
namespace policies_cmd {

void setup(CLI::App& app) {
  auto o = std::make_shared<PoliciesArgs>();
  app.add_flag("--json", o->json,
               "print JSON (header, policies by kind with their parameters) instead of text");
  app.add_option("-o,--output", o->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([o] {
    check_output_writable(o->out);
    write_file_atomic(o->out, policies_output(o->json));
  });
}

}  // namespace policies_cmd
MOESIM_CLI_COMMAND("policies", "List every registered policy with its parameters and defaults",
                   policies_cmd::setup);
}  // namespace moesim::cli
