#include "harness/sweep_spec.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/hash64.h"
#include "base/json_schema.h"
#include "core/cluster_spec.h"
#include "core/data_dir.h"
#include "harness/arguments.h"
#include "moesim_build_info.h"

namespace moesim::harness::sweep {
namespace {

namespace fs = std::filesystem;

// The parameters a point may set: the order of the grid's loops, of a point's options and of the CSV's
// columns; the option each becomes ("" for the command itself, kPositional for `cluster`'s SERVERS.json);
// which commands take it.
constexpr const char* kPositional = "(positional)";
struct Key {
  const char* name;
  const char* option;
  bool run, replay, cluster;
};
constexpr Key kKeys[] = {{"command", "", true, true, true},
                         {"trace", "--trace", true, true, false},
                         {"model", "--model", true, true, false},
                         {"hw", "--hw", true, false, false},
                         {"system", "--system", true, false, false},
                         {"policy", "--policy", true, true, false},
                         {"routing", "--routing", true, true, false},
                         {"prefetch", "--prefetch", true, false, false},
                         {"budget", "--budget", true, true, false},
                         {"scope", "--scope", true, true, false},
                         {"batch", "--batch", true, true, false},
                         {"seed", "--seed", true, false, true},
                         {"servers", kPositional, false, false, true},
                         {"placement", "--placement", false, false, true},
                         {"migrate_every", "--migrate-every", false, false, true},
                         {"duration", "--duration", false, false, true}};
constexpr const char* kCommands[] = {"run", "replay", "cluster"};

// What `options` may not hold: the runner's own output options, and the parameters (they belong in the
// grid or the points, where they are named in the CSV and the point's id).
constexpr const char* kRunnerOptions[] = {"-o",         "--output",         "--json",
                                          "--timeline", "--timeline-steps", "--csv"};

// A CSV metric column and where each command's JSON has it (JSON pointers into the point's metrics: `run`'s
// "metrics", `replay`'s one "results" entry, `cluster_point_metrics` of a cluster run); empty = the command
// does not measure it.
struct Metric {
  const char* column;
  const char* run;
  const char* replay;
  const char* cluster;
};
constexpr Metric kMetrics[] = {
    {"hit_rate", "/cache/hit_rate", "/hit_rate", ""},
    {"decode_hit_rate", "/cache/decode_hit_rate", "/decode_hit_rate", ""},
    {"miss_rate_vs_router", "", "/miss_rate_vs_router", ""},
    {"tpot_mean_s", "/tpot/mean_s", "", "/tpot/mean_s"},
    {"tpot_p50_s", "/tpot/p50_s", "", "/tpot/p50_s"},
    {"tpot_p90_s", "/tpot/p90_s", "", "/tpot/p90_s"},
    {"ttft_mean_s", "/ttft/mean_s", "", "/ttft/mean_s"},
    {"tokens_per_s", "/tokens_per_s", "", ""},
    {"decode_tokens_per_s", "/decode_tokens_per_s", "", ""},
    {"ssd_bytes_read", "/ssd_bytes_read", "/read_bytes", ""},
    {"makespan_s", "/makespan_s", "", "/simulated_s"},
    {"prefetch_accuracy", "/prefetch/accuracy", "", ""},
    {"prefetch_coverage", "/prefetch/coverage", "", ""},
    {"routing_changed_fraction", "/routing_deviation/changed_fraction", "/routing_deviation/changed_fraction",
     ""},
    {"lifetime_mean_tokens", "/cache_lifetime/mean_tokens", "/cache_lifetime/mean_tokens", ""},
    {"latency_mean_s", "", "", "/latency/mean_s"},
    {"latency_p90_s", "", "", "/latency/p90_s"},
    {"local_compute_ratio", "", "", "/local_compute_ratio"},
    {"remote_invocations", "", "", "/remote_invocations"},
    {"proxy_cost", "", "", "/proxy_cost"},
    {"migrations", "", "", "/migrations"},
};

std::string hex(uint64_t v) {
  return strprintf("%016llx", static_cast<unsigned long long>(v));
}

const Key* find_key(const std::string& name) {
  for (const Key& k : kKeys)
    if (name == k.name) return &k;
  return nullptr;
}

// "unknown parameter; did you mean budget?" or, with no near name, the list of known ones.
std::string unknown_parameter(const std::string& name) {
  std::vector<std::string_view> names;
  for (const Key& k : kKeys) names.push_back(k.name);
  if (auto near = closest_name(name, names)) return "unknown parameter; did you mean " + *near + "?";
  std::string s;
  for (const Key& k : kKeys) s += std::string(s.empty() ? "" : ", ") + k.name;
  return "unknown parameter (known: " + s + ")";
}

std::string scalar(const Json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return strprintf("%.17g", v.get<double>());
  throw Error(where + ": expected a string or a number");
}

// A parameter's value checked where it is written: `where` is "FILE: /grid/policy/2" style.
std::string parameter(const std::string& key, const Json& v, const std::string& where) {
  std::string s = scalar(v, where);
  if (s.empty()) throw Error(where + ": an empty value (leave the parameter out instead)");
  if (key == "command" && std::find(std::begin(kCommands), std::end(kCommands), s) == std::end(kCommands))
    throw Error(where + ": unknown command '" + s + "' (a point runs `run`, `replay` or `cluster`)");
  return s;
}

// The point's parameters fit its command; `where(key)` names the JSON path a parameter came from.
template <class Where>
void check_point(const Point& p, Where where) {
  const std::string& cmd = p.at("command");
  for (const auto& [k, v] : p) {
    const Key* key = find_key(k);
    if (cmd == "replay" && !key->replay)
      throw Error(where(k) + ": `moesim replay` points take no " + k +
                  (key->run ? " (a `moesim run` parameter)" : " (a `moesim cluster` parameter)"));
    if (cmd == "run" && !key->run)
      throw Error(where(k) + ": `moesim run` points take no " + k + " (a `moesim cluster` parameter)");
    if (cmd == "cluster" && !key->cluster)
      throw Error(where(k) + ": `moesim cluster` points take no " + k +
                  " (SERVERS.json names the traces, models and hardware)");
  }
  if (cmd == "cluster") {
    if (!p.count("servers"))
      throw Error(where("servers") + ": a cluster point has no servers (its SERVERS.json)");
    if (!p.count("placement")) throw Error(where("placement") + ": a cluster point has no placement");
    return;
  }
  if (!p.count("trace")) throw Error(where("trace") + ": the point has no trace");
}

std::string csv_cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return strprintf("%.17g", v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
  return "";
}

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

Spec spec_from_json(const Json& raw, const std::string& origin, const fs::path& base) {
  Spec s;
  s.raw = raw;
  s.file = origin;
  s.base = base;
  const std::string f = origin + ": ";
  if (!raw.is_object()) throw Error(origin + ": a sweep spec is a JSON object");
  static const std::vector<std::string_view> kTop = {"command", "description", "grid", "points", "options"};
  for (const auto& [k, v] : raw.items())
    if (std::find(kTop.begin(), kTop.end(), k) == kTop.end()) {
      const auto near = closest_name(k, kTop);
      throw Error(f + "/" + k + ": unknown key" +
                  (near ? "; did you mean /" + *near + "?"
                        : " (known: command, description, grid, points, options)"));
    }
  std::string command = "run";
  if (raw.contains("command")) command = parameter("command", raw["command"], f + "/command");
  if (raw.contains("description") && !raw["description"].is_string())
    throw Error(f + "/description: expected a string");

  if (raw.contains("grid")) {
    const Json& g = raw["grid"];
    if (!g.is_object()) throw Error(f + "/grid: expected an object of lists");
    for (const auto& [k, v] : g.items()) {
      if (!find_key(k)) throw Error(f + "/grid/" + k + ": " + unknown_parameter(k));
      if (!v.is_array() || v.empty()) throw Error(f + "/grid/" + k + ": expected a non-empty list");
    }
    std::vector<Point> pts{Point{{"command", command}}};
    for (const Key& key : kKeys) {
      if (!g.contains(key.name)) continue;
      std::vector<Point> next;
      next.reserve(pts.size() * g[key.name].size());
      for (const Point& p : pts)
        for (size_t i = 0; i < g[key.name].size(); ++i) {
          Point q = p;
          q[key.name] =
              parameter(key.name, g[key.name][i], f + "/grid/" + key.name + "/" + std::to_string(i));
          next.push_back(std::move(q));
        }
      pts.swap(next);
    }
    for (const Point& p : pts) check_point(p, [&](const std::string& k) { return f + "/grid/" + k; });
    s.points = std::move(pts);
  }
  if (raw.contains("points")) {
    const Json& list = raw["points"];
    if (!list.is_array()) throw Error(f + "/points: expected a list of objects");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = f + "/points/" + std::to_string(i);
      if (!list[i].is_object()) throw Error(at + ": expected an object");
      Point p{{"command", command}};
      for (const auto& [k, v] : list[i].items()) {
        if (!find_key(k)) throw Error(at + "/" + k + ": " + unknown_parameter(k));
        p[k] = parameter(k, v, at + "/" + k);
      }
      check_point(p, [&](const std::string& k) { return at + (k == "trace" ? "" : "/" + k); });
      s.points.push_back(std::move(p));
    }
  }
  if (s.points.empty()) throw Error(origin + ": the spec has no points (give /grid or /points)");

  if (raw.contains("options")) {
    const Json& o = raw["options"];
    if (!o.is_array()) throw Error(f + "/options: expected a list of strings");
    for (size_t i = 0; i < o.size(); ++i) {
      const std::string at = f + "/options/" + std::to_string(i);
      const std::string v = scalar(o[i], at);
      const std::string name = v.substr(0, v.find('='));
      if (std::find(std::begin(kRunnerOptions), std::end(kRunnerOptions), name) != std::end(kRunnerOptions))
        throw Error(at + ": " + name + " is the sweep's to set (each point's JSON goes to its point file)");
      for (const Key& k : kKeys)
        if (name == k.option && *k.option && k.option != kPositional)
          throw Error(at + ": " + name + " is a sweep parameter: set it in /grid or /points as \"" + k.name +
                      "\"");
      s.options.push_back(v);
    }
  }
  // Key order and whitespace do not change the hash: nlohmann::json (unlike the ordered Json) sorts keys.
  const std::string canon = nlohmann::json::parse(raw.dump()).dump();
  s.hash = hex(hash64(canon.data(), canon.size()));
  return s;
}

Spec load_spec(const std::string& file) {
  return spec_from_json(load_json_file(file), file, fs::path(file).parent_path());
}

std::vector<std::string> point_args(const Spec& spec, const Point& p) {
  std::vector<std::string> args{p.at("command")};
  for (const Key& k : kKeys) {
    const auto it = p.find(k.name);
    if (it == p.end() || !*k.option) continue;
    if (k.option != kPositional) args.push_back(k.option);
    args.push_back(it->second);
  }
  args.insert(args.end(), spec.options.begin(), spec.options.end());
  return args;
}

std::string point_id(const std::vector<std::string>& args) {
  std::string c;
  for (const auto& a : args) c += a + '\0';
  return hex(hash64(c.data(), c.size(), 0x5eed));
}

std::vector<NamedPath> files_named(const Spec& spec, const CommandInputs& inputs_of) {
  std::vector<NamedPath> out;
  // A command line's inputs are what each of its values names plus what its command reads by default, so the
  // whole line is parsed once per command and set of parameters given (its defaults and options), and each
  // further value is looked at alone.
  std::set<std::string> shapes;
  std::set<std::pair<std::string, std::string>> values;  // (parameter, value) already looked at
  for (size_t i = 0; i < spec.points.size(); ++i) {
    const Point& p = spec.points[i];
    const std::string where = spec.file + ": point " + std::to_string(i) + ", ";
    std::string shape = p.at("command");
    for (const Key& k : kKeys) shape += p.count(k.name) ? '1' : '0';
    const bool whole = shapes.insert(shape).second;
    if (whole)
      for (NamedPath& f : inputs_of(point_args(spec, p)))
        out.push_back({std::move(f.path), where + f.option});
    for (const Key& k : kKeys) {
      const auto it = p.find(k.name);
      if (it == p.end() || !*k.option || !values.emplace(k.name, it->second).second) continue;
      if (!whole)
        for (NamedPath& f :
             files_named_by_value(k.option == kPositional ? k.name : k.option, it->second, false))
          out.push_back({std::move(f.path), where + f.option});
      if (std::string_view(k.name) != "servers") continue;
      try {
        for (const NamedFile& f : moesim::files_named(load_cluster_spec(it->second)))
          out.push_back({f.path, where + f.where});
      } catch (const Error&) {
        // A SERVERS.json that does not load fails its points, which then read nothing.
      }
    }
  }
  return out;
}

fs::path point_file(const fs::path& dir, const std::string& id) {
  return dir / "points" / (id + ".json");
}

bool is_point_file(const fs::path& f) {
  const std::string stem = f.stem().string();
  return f.extension() == ".json" && stem.size() == 16 && std::all_of(stem.begin(), stem.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c));
         });
}

std::string csv_header() {
  std::string csv = "index";
  for (const Key& k : kKeys) csv += std::string(",") + k.name;
  for (const Metric& m : kMetrics) csv += std::string(",") + m.column;
  return csv + ",warnings\n";
}

std::string merged_csv(const Spec& spec, const std::vector<fs::path>& dirs, size_t* found) {
  std::string csv = csv_header();
  size_t n = 0;
  for (size_t i = 0; i < spec.points.size(); ++i) {
    const Point& p = spec.points[i];
    const std::string id = point_id(spec, p);
    for (const auto& d : dirs) {
      const fs::path f = point_file(d, id);
      if (!fs::exists(f)) continue;
      const Json j = read_point_file(f);
      const Json& metrics = j["metrics"];
      csv += std::to_string(i);
      for (const Key& k : kKeys) csv += "," + (p.count(k.name) ? quote(p.at(k.name)) : std::string());
      const std::string& cmd = p.at("command");
      for (const Metric& m : kMetrics) {
        const char* ptr = cmd == "run" ? m.run : cmd == "replay" ? m.replay : m.cluster;
        csv += ",";
        if (*ptr && metrics.contains(Json::json_pointer(ptr)))
          csv += csv_cell(metrics.at(Json::json_pointer(ptr)));
      }
      csv += "," + std::to_string(j.value("warnings", Json::array()).size()) + "\n";
      ++n;
      break;
    }
  }
  if (found) *found = n;
  return csv;
}

Json point_metrics(const std::string& command, const Json& out) {
  if (command == "run") return out.at("metrics");
  if (command == "replay") {
    const Json& results = out.at("results");
    if (results.size() != 1)
      throw Error("a replay point runs one policy and one budget (this one gave " +
                  std::to_string(results.size()) + " results)");
    return results[0];
  }
  // A cluster run's summary without its series (over time, per link), which belong to `moesim cluster`'s own
  // output: the point file keeps what the CSV reads and the per-server figures.
  Json m;
  for (const char* k : {"latency", "ttft", "tpot"}) {
    m[k] = out.at(k);
    m[k].erase("over_time");
  }
  m["local_compute_ratio"] = out.at("local_compute_ratio").at("overall");
  m["local_compute_ratio_per_server"] = out.at("local_compute_ratio").at("per_server");
  for (const char* k : {"requests", "remote_invocations", "proxy_cost", "simulated_s"}) m[k] = out.at(k);
  m["migrations"] = out.at("migrations").size();
  return m;
}

Json read_point_file(const fs::path& f) {
  const std::string hint = " (a damaged point file: delete it and rerun with --resume)";
  try {
    const Json j = load_json_file(f.string());
    const JsonAt root(j, f.string());
    root["metrics"].object();
    if (auto w = root.find("warnings")) w->array();
    return j;
  } catch (const Error& e) {
    throw Error(e.what() + hint);
  }
}

std::string version_string() {
  return std::string(MOESIM_VERSION) + " (" + MOESIM_GIT_DESCRIBE + ")";
}

Json manifest_base(const Spec& spec) {
  Json m;
  m["spec_hash"] = spec.hash;
  m["spec_file"] = spec.file;
  m["spec"] = spec.raw;
  m["moesim_version"] = version_string();
  m["points_total"] = spec.points.size();
  return m;
}

Json read_manifest(const fs::path& dir) {
  const fs::path m = dir / "manifest.json";
  if (!fs::exists(m)) throw Error(dir.string() + ": no manifest.json (not a `moesim sweep` output folder)");
  const Json j = load_json_file(m.string());
  const JsonAt root(j, m.string());
  const std::string hint = " (not a sweep manifest: rerun the sweep into a new folder)";
  try {
    root.object();
    (void)root["spec_hash"].string();
    root["spec"].object();
    for (const char* k : {"spec_file", "moesim_version", "state"})
      if (auto v = root.find(k)) (void)v->string();
    for (const char* k : {"points_total", "points_done", "points_failed"})
      if (auto n = root.find(k)) (void)n->integer();
  } catch (const Error& e) {
    throw Error(e.what() + hint);
  }
  return j;
}

}  // namespace moesim::harness::sweep
