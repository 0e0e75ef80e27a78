// `moesim merge`: options, help and printing; what it does is harness/merge_job.h.
#include <cstdio>
#include <memory>

#include "base/json_io.h"
#include "cli/command.h"
#include "harness/merge_job.h"

namespace moesim::cli {
namespace merge_cmd {

struct Options {
  harness::MergeArgs args;
  bool json = false;
};

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("dirs", o->args.dirs, "sweep output folders (shards of one spec)")->required();
  app.add_option("-o,--output", o->args.out, "merged output folder")->required();
  app.add_flag("--json", o->json, "print a JSON summary (points merged, missing, failed; docs/sweep.md)");
  app.callback([o] {
    const harness::MergeResult r = harness::merge_shards(o->args);
    std::fprintf(stderr, "merged %zu of %zu points from %zu folder(s) -> %s\n", r.points_done, r.points_total,
                 o->args.dirs.size(), r.results_csv.c_str());
    if (o->json) write_json_file("-", r.doc);
  });
}

}  // namespace merge_cmd
MOESIM_CLI_COMMAND("merge", "Merge sweep shards (refuses shards of another spec) into one results.csv",
                   merge_cmd::setup);
}  // namespace moesim::cli
