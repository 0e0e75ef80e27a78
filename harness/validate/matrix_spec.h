// The spec of `moesim validate --matrix` (docs/exec.md, "A held-out matrix"): the axes of a grid of
// validations, each calibrated on another trace than the one it validates. A cell is one point of the grid
//   model x trace pair x system x budget x batch x I/O variant
// (that loop order, outermost first, is the cells' order, the table's and the JSON's), run as
// `moesim validate VALIDATE --calibrate-on CALIBRATE --repeat N` with the cell's options. Relative paths in
// the spec (traces, models given as files, stores) are relative to the spec's folder; option lists are passed
// as written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "base/output_guard.h"

namespace moesim::harness::matrix {

// A value of an axis with the run options it adds: a system ("zipmoe" with ["--recover-on", "cpu"]) or an I/O
// variant ("uring" with ["--io", "uring"]).
struct Variant {
  std::string name;
  std::vector<std::string> options;
};

struct Model {
  std::string name;                           // the table's label
  std::string model;                          // --model: a preset name or a model file
  std::string store;                          // the store of every system, or
  std::map<std::string, std::string> stores;  // per system
};

// Validate on one trace, calibrate on another: never the same file, nor a trace synthesized (`trace synth
// --fit`) from the validated one, whose routing statistics would then be the validated trace's own.
struct TracePair {
  std::string name, validate, calibrate;
};

struct Spec {
  std::string file;
  std::filesystem::path base;
  std::vector<Model> models;
  std::vector<TracePair> traces;
  std::vector<Variant> systems;
  // A budget or batch value: the validated runs', and the calibration runs' where the spec gives another
  // ({"calibrate": 1, "validate": 4}): such a cell judges a profile fitted at one batch or budget at another.
  struct Budget {
    std::string validate, calibrate;  // calibrate empty: the same
  };
  struct Batch {
    uint32_t validate = 1, calibrate = 0;  // calibrate 0: the same
  };
  std::vector<Budget> budgets;
  std::vector<Batch> batches;
  std::vector<Variant> io;  // [{"default", {}}] unless given
  uint32_t repeat = 3;      // calibration runs, each followed by an exec run of the validated trace
  std::string targets = kDefaultTargets;
  std::vector<std::string> options;  // every cell's
  static constexpr const char* kDefaultTargets =
      "structure.tpot=2%,structure.layer_makespan_median=5%,cost.tpot=5%";
};

struct Cell {
  size_t index = 0;
  std::string model, trace, system, budget, io;  // the axes' labels
  uint32_t batch = 1;
  uint32_t calibrate_batch = 0;     // the calibration runs' where it differs (0: batch)
  std::string calibrate_budget;     // the calibration runs' where it differs (empty: budget)
  std::string validate, calibrate;  // the traces
  std::vector<std::string> args;    // run and exec options (no trace, no output options)
  std::string label() const;        // "zipmoe 8MiB b1 small a-on-b default", "offload 64MiB b1->4 ..."
};

// Reads and checks a spec: every error is a moesim::Error naming the file and the JSON path
// ("m.json: traces[0].calibrate: the calibration trace is the validated one; calibrate on another").
Spec load_spec(const std::string& file);
Spec spec_from_json(const Json& raw, const std::string& origin, const std::filesystem::path& base);

// The grid's cells in order.
std::vector<Cell> cells_of(const Spec& spec);

// Every file the spec's cells read (the spec itself aside), for the output guard (base/output_guard.h): the
// traces, the models (presets resolved through the data folder), the stores, and what the cells' options
// name (core/data_dir.h's files_named_by_value), each with where the spec names it ("m.json:
// traces[0].validate", "m.json: the model, --model tiny-moe (cell ...)").
std::vector<NamedPath> files_named(const Spec& spec);

}  // namespace moesim::harness::matrix
