// The command-line options of a run, shared by `moesim run`, `exec`, `calibrate` and `validate`: they fill a
// harness::RunArgs, which harness/run_setup.h reads into a prepared run.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

#include "harness/run_setup.h"

namespace moesim::cli {

using harness::RunArgs;

// Every option of `moesim run` (exec and validate add their own).
void add_run_options(CLI::App& app, const std::shared_ptr<RunArgs>& a);
// exec's own options (--buffered, --gpu, --verify-gpu), for exec, calibrate and validate; after
// add_run_options
// (--workers then defaults to this machine's CPUs).
void add_exec_options(CLI::App& app, const std::shared_ptr<RunArgs>& a);
// --log-fields (calibrate --from-log, validate --log): the engine log's column or summary key of each field;
// it needs `log`, the option naming the log.
void add_log_fields_option(CLI::App& app, std::string& spec, CLI::Option* log);

}  // namespace moesim::cli
