// `moesim run`: one simulated serving run of a trace (docs/architecture.md §1, §5, §7, §9).
//   moesim run --trace T [--model M] --hw H --system offload|layer-offload|zipmoe --policy P --budget 8GiB
//              [--scope global|layer] [--batch B] [--prefetch P] [--json] [--timeline out.json [--timeline-steps A:B]]
// The systems are assembled by serving/system.h (what each models, which sizes are used, dense weights
// resident) and run on a SimPlatform. The JSON output starts with run_header() as "header"; --timeline
// writes the Chrome trace event format (serving/timeline.h), atomically.
#pragma once

#include "harness/run_setup.h"

namespace moesim::harness {

// Prepares the run, serves the trace on the simulator (or for real when a.exec), writes the timeline when asked,
// and writes the summary (text or JSON) to a.out.
void run_and_report(RunArgs& a);

}  // namespace moesim::harness
