// `moesim sensitivity SPEC.json [--factors 0.5,2] [--jobs N] [--json] [-o F]` (docs/sensitivity.md): how much
// a comparison moves when the hardware profile's assumed figures move. For each point of the spec, every
// system runs on the profile as it is; then every field marked "assumption" that those runs read
// (core/profile_reads.h, the runs' rests_on) is scaled by each factor, every system runs again, and the
// report gives, per field and factor, each system's metric, its change, and whether the ranking of the
// systems flips. With --find-flip it searches instead, per field, the factor on each side of 1 at which the
// ranking flips (harness/sensitivity_flip.h), and draws the break-evens as a tornado plot (--plot).
// Besides profile fields, a spec's "fields" may name the run parameters "budget" (the point's budget, in its
// unit) and "ratio" (ZipMoE's rho, e_ratio, of the systems that declare it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "base/output_guard.h"
#include "core/params.h"

namespace moesim::harness {

struct SensitivityArgs {
  std::string spec;
  std::string factors;  // "0.5,2"; empty: the spec's "factors", else 0.5 and 2
  unsigned jobs = 1;
  bool json = false;
  std::string out = "-";
  bool find_flip = false;        // search the break-even factors instead of running fixed factors
  std::string range = "0.1,10";  // --find-flip's factors: LO,HI with LO < 1 < HI
  double tolerance = 0.01;       // --find-flip's bracket: within a factor of 1 + tolerance
  std::string plot;              // --find-flip: the break-evens as a tornado plot (scripts/plot_tornado.py)
};

// One system of a point: a system spec (`moesim policies`, parsed where the spec file is read), its eviction
// ("" the system's default), and the label its results carry (the spec's text as written).
struct SensitivitySystem {
  PolicySpec system;
  std::string policy, label;
};

struct SensitivityPoint {
  std::string trace, format, model, hw = "jetson-agx-orin-64gb", budget, scope = "global", metric = "tpot";
  uint32_t batch = 1, io_depth = 1;
  uint64_t seed = 1;
  std::vector<SensitivitySystem> systems;
};

struct SensitivitySpec {
  std::vector<SensitivityPoint> points;
  std::vector<double> factors;      // empty: not given
  std::vector<std::string> fields;  // empty: every assumption-marked field the baseline runs read
};

// Reads a spec (JSON already parsed; relative trace, hw and model paths resolved against `base`, the spec's
// folder). Throws moesim::Error naming `origin` and the JSON path of what is wrong.
SensitivitySpec sensitivity_spec_from_json(const Json& raw, const std::string& origin,
                                           const std::filesystem::path& base);
// Every file the spec's runs read (the spec itself aside), for the output guard (base/output_guard.h): each
// point's trace, model and hardware profile (presets resolved through the data folder, the default profile
// included) and the files its systems' parameters name, as "SPEC: points[N] HOW".
std::vector<NamedPath> files_named(const SensitivitySpec& spec, const std::string& origin);
// "0.5,2": positive factors other than 1. Throws moesim::UsageError naming `option`.
std::vector<double> parse_factors(const std::string& text, const std::string& option);
// The metrics a spec may rank by ("tpot", ...) and whether a larger value is better.
const std::vector<std::string>& sensitivity_metrics();

// Runs the analysis (the tornado plot to a.plot when asked) and returns the report, text or JSON text, which
// cli/ writes to a.out (checked to be writable first).
std::string sensitivity_output(const SensitivityArgs& a);

}  // namespace moesim::harness
