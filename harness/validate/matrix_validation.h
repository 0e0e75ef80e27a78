// `moesim validate --matrix SPEC.json`: a grid of validations (harness/validate/matrix_spec.h), each
// calibrated on another trace than the one it validates, so that the errors are those of configurations the
// profile was not fitted on. Every cell is `moesim validate VALIDATE --calibrate-on CALIBRATE --repeat N`
// (harness/validate/validation.h); its structure and cost errors are judged by the spec's targets:
//   met / missed  where the error's interval lies on one side of the limit (the cost TPOT error: over the
//   exec
//                 median's interval; the structure errors, which replay one run's measured durations and have
//                 no interval, by their value);
//   undecided     where the interval straddles the limit: the runs' noise could turn the verdict.
// The errors the validation reports with a term of the model left out (structure_ops_only: no runtime costs;
// structure_no_contention: no CPU contention; structure_mean_runtime: the runtime costs as means;
// cost_reads_whole: no I/O-thread CPU work per read; cost_without.TERM: the cost check without each optional
// term of the fitted profile, ValidateArgs::term_ablations) are kept per cell and summarized over the matrix,
// so that a term is judged on every cell, not on one configuration (docs/exec.md, "Terms on the held-out
// matrix"). A cell that fails is reported with its message and the others still run; the command then
// exits 1.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/validate/validation.h"

namespace moesim::harness {

struct MatrixArgs {
  std::string spec;
  std::string out = "-", csv;
  bool json = false;
  // The command line's parser of run and exec options (`moesim validate`'s), for a cell's options: a bad one
  // is a UsageError before any cell runs.
  std::function<std::shared_ptr<ValidateArgs>(const std::vector<std::string>&)> parse;
};

struct MatrixOutput {
  Json json;
  std::string text;  // the table (empty with json)
  std::string csv;   // one row per cell (empty without csv)
  size_t failed = 0;
};

MatrixOutput validate_matrix(const MatrixArgs& ma);

}  // namespace moesim::harness
