// `moesim compare --system S1,S2,...`: serving systems side by side -- each system (with its parameters, and
// an eviction policy as `policy=P`, or each of --policy's) x budgets x cache scopes, every cell a full
// simulated `moesim run` of the same trace, hardware and batch (harness/run_outcome.h, so that a system's own
// options, defaults and refusals are exactly run's). Rows: hit rate (any resident state), decode hit rate,
// TPOT mean/p50/p90/p99, TTFT, decode tokens/s, SSD bytes, the system's scope.
//
//   entries = for each --system spec: its policy= (taken out of the spec) or each --policy (default: the
//             system's own default eviction)
//   scopes  = --scope's; a system whose caches are per layer whatever the scope (zipmoe's pools) runs once,
//             at `layer`, and its rows say so: systems are ranked only at equal scope, as policies are
//   cells   = entries x budgets x scopes, simulated on --jobs threads, each in its own slot (the output does
//             not depend on --jobs); a cell's warnings are reported once each, with the cells that raised it
//   best    = per (budget, scope), the row with the lowest mean TPOT, marked '*' in the text
//
// Relative budgets (25%, 2xtopk) resolve per cell as in run. --routing and --prefetch are refused here (one
// lossless comparison; run or a sweep varies them).
#pragma once

#include "harness/compare_job.h"

namespace moesim::harness {

// The comparison as --json prints it and as --csv writes it (the columns of the policy comparison's CSV,
// so that scripts/plot_compare.py draws both, plus `system`).
CompareResult compare_systems_result(const CompareArgs& a);
// The text table, or the JSON text with a.json (cli/ writes it to a.out); the CSV (a.csv) and the plot
// (a.plot) are written when asked.
std::string compare_systems_output(const CompareArgs& a);

}  // namespace moesim::harness
