// The sweep spec (docs/sweep.md) and what `moesim sweep` and `moesim merge` derive from it: the points in
// spec order, each point's command line and id, the point files, the merged CSV and the manifest.
//
// A point is a map parameter -> value as written in the spec (the spec's folder is the working directory
// of its points, so relative paths stay relative). Its command line is `moesim COMMAND --KEY VALUE...
// OPTIONS...` in the fixed key order below; its id is a hash of that command line, so a point's file name,
// like its result, depends on its parameters only (not on its index, its shard or where the spec lies).
//
// The merged CSV has fixed columns (index, the parameters, the metrics; docs/sweep.md) and one row per
// finished point in spec order; it is a function of the spec and the point files alone, which is what makes
// a sharded, a resumed and an unsharded run of one spec give the same bytes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "base/output_guard.h"

namespace moesim::harness::sweep {

using Point = std::map<std::string, std::string>;

struct Spec {
  Json raw;                          // as read
  std::string file;                  // as given (messages, the manifest)
  std::filesystem::path base;        // the spec's folder: its points run there
  std::string hash;                  // of the spec's JSON with sorted keys and no whitespace
  std::vector<Point> points;         // the grid's, then the explicit ones
  std::vector<std::string> options;  // extra options of every point
};

// Reads and checks a spec: every error is a moesim::Error naming the file and the JSON path ("spec.json:
// /grid/policy: expected a non-empty list").
Spec load_spec(const std::string& file);
// The same from JSON already read (a manifest's copy of the spec); `origin` names it in messages.
Spec spec_from_json(const Json& raw, const std::string& origin, const std::filesystem::path& base);

// `COMMAND ARGS...` of a point (no output options: the runner adds --json -o).
std::vector<std::string> point_args(const Spec& spec, const Point& p);
std::string point_id(const std::vector<std::string>& args);
inline std::string point_id(const Spec& spec, const Point& p) {
  return point_id(point_args(spec, p));
}
// Every file the spec's points read (the spec itself aside), for the output guard (base/output_guard.h):
// `inputs_of` lists the inputs of one point's command line (cli/run_command.h's command_line_inputs: paths,
// presets resolved with the command's defaults, files inside policy parameters), and a cluster point's
// SERVERS.json adds the files it names. Each is named "SPEC: point N, HOW". Call it in the spec's folder
// (relative paths are the points'). A command line is parsed once per command and set of parameters given;
// every other value is looked at alone (core/data_dir.h's files_named_by_value), so a grid of a million
// points costs a few parses.
using CommandInputs = std::function<std::vector<NamedPath>(std::vector<std::string> args)>;
std::vector<NamedPath> files_named(const Spec& spec, const CommandInputs& inputs_of);

// DIR/points/<id>.json.
std::filesystem::path point_file(const std::filesystem::path& dir, const std::string& id);
// Whether a file in DIR/points is a finished point's (not a command's output in flight, not a temporary).
bool is_point_file(const std::filesystem::path& f);

// The CSV's columns, one row per finished point found under `dirs` (the first copy of each), in spec order.
// `found` receives the number of rows.
// results.csv's first line: index, the spec keys, the metrics, warnings (docs/sweep.md "Outputs").
std::string csv_header();
std::string merged_csv(const Spec& spec, const std::vector<std::filesystem::path>& dirs,
                       size_t* found = nullptr);

// "0.1.0 (v0.1.0-12-gabc)": the manifest's moesim_version.
std::string version_string();
// The manifest fields every sweep and merge output shares.
Json manifest_base(const Spec& spec);
// Reads DIR/manifest.json; an Error naming the folder when it is missing, or the file and the JSON path when
// it is damaged (not an object, no string spec_hash, no spec object, a count that is not an integer, a
// version or state that is not a string).
Json read_manifest(const std::filesystem::path& dir);
// Reads a finished point's file (DIR/points/<id>.json): an object with a "metrics" object and optionally a
// "warnings" list; an Error naming the file, the JSON path and what to do otherwise.
// What a point file keeps of a command's JSON output: `run`'s "metrics", `replay`'s one result (an Error when
// there are several), a cluster run's summary (latency, TTFT, TPOT, local compute ratio, remote invocations,
// the proxy cost, the number of migrations).
Json point_metrics(const std::string& command, const Json& out);
Json read_point_file(const std::filesystem::path& f);

}  // namespace moesim::harness::sweep
