// `moesim sweep SPEC.json [--jobs N] [--shard i/N] [--resume] -o DIR` and `moesim merge DIR... -o OUT`:
// what-if sweeps (traces x models x hardware x systems x policies x budgets x seeds) on every core of a machine
// and, sharded, over many (a Slurm job array, GNU parallel over ssh), with no scheduler of our own.
//
// A spec (docs/sweep.md) lists a grid -- each key a list of values, the sweep is their cartesian product in
// a fixed key order -- and/or explicit points. Each point is one `moesim run` (a child process: a point
// cannot disturb another, and a killed sweep loses only the points in flight). Its result is written
// atomically to DIR/points/<id>.json, where <id> is a hash of the point's parameters; a rerun with --resume
// skips finished points. DIR/results.csv (one row per finished point, in spec order, fixed columns) depends
// only on the spec and the points' results, so the CSV of a sharded run merged with `moesim merge` equals
// the unsharded one byte for byte. DIR/manifest.json records the spec hash, the moesim version, and the
// points done and failed (with their errors); `merge` refuses shards of another spec.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/hash64.h"
#include "core/json_io.h"
#include "core/progress.h"
#include "core/units.h"
#include "moesim_build_info.h"

extern char** environ;

namespace moesim::cli {
namespace {

namespace fs = std::filesystem;

// The parameters a point may set, in the fixed order of the grid's loops and the CSV's columns, with the
// `moesim run` option each one becomes.
struct Key {
  const char* name;
  const char* option;
};
constexpr Key kKeys[] = {{"trace", "--trace"},   {"model", "--model"},   {"hw", "--hw"},
                         {"system", "--system"}, {"policy", "--policy"}, {"routing", "--routing"},
                         {"prefetch", "--prefetch"}, {"budget", "--budget"}, {"scope", "--scope"},
                         {"batch", "--batch"},   {"seed", "--seed"}};

using Point = std::map<std::string, std::string>;

struct Spec {
  Json raw;
  fs::path base;  // the spec's folder: points run there, so relative paths in the spec are relative to it
  std::string hash;  // of the spec's canonical JSON
  std::vector<Point> points;
  std::vector<std::string> options;  // fixed extra options of every point
};

std::string hex(uint64_t v) { return strprintf("%016llx", static_cast<unsigned long long>(v)); }

std::string scalar(const Json& v, const std::string& file, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return strprintf("%.17g", v.get<double>());
  if (v.is_null()) return "";
  throw Error(file + ": " + where + ": expected a string or a number");
}

bool known_key(const std::string& k) {
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const Key& x) { return k == x.name; });
}

Spec load_spec(const std::string& file) {
  Spec s;
  try {
    s.raw = Json::parse(read_file(file));
  } catch (const Json::parse_error& e) {
    throw Error(file + ": not valid JSON: " + e.what());
  }
  if (!s.raw.is_object()) throw Error(file + ": a sweep spec is a JSON object");
  for (const auto& [k, v] : s.raw.items())
    if (k != "grid" && k != "points" && k != "options" && k != "command" && k != "description")
      throw Error(file + ": /" + k + ": unknown key (known: command, description, grid, points, options)");
  if (s.raw.contains("command") && s.raw["command"] != "run")
    throw Error(file + ": /command: only \"run\" points are supported");
  s.base = fs::path(file).parent_path();
  // Values stay as written (point ids and the CSV do not depend on where the spec lies).
  auto resolve = [](const std::string&, std::string v) { return v; };
  if (s.raw.contains("grid")) {
    const Json& g = s.raw["grid"];
    if (!g.is_object()) throw Error(file + ": /grid: expected an object of lists");
    for (const auto& [k, v] : g.items()) {
      if (!known_key(k)) throw Error(file + ": /grid/" + k + ": unknown parameter");
      if (!v.is_array() || v.empty()) throw Error(file + ": /grid/" + k + ": expected a non-empty list");
    }
    std::vector<Point> pts{Point{}};
    for (const Key& key : kKeys) {
      if (!g.contains(key.name)) continue;
      std::vector<Point> next;
      for (const Point& p : pts) {
        size_t i = 0;
        for (const auto& v : g[key.name]) {
          Point q = p;
          q[key.name] = resolve(key.name, scalar(v, file, "/grid/" + std::string(key.name) + "/" + std::to_string(i++)));
          next.push_back(std::move(q));
        }
      }
      pts.swap(next);
    }
    s.points = std::move(pts);
  }
  if (s.raw.contains("points")) {
    const Json& list = s.raw["points"];
    if (!list.is_array()) throw Error(file + ": /points: expected a list of objects");
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object()) throw Error(file + ": /points/" + std::to_string(i) + ": expected an object");
      Point p;
      for (const auto& [k, v] : list[i].items()) {
        if (!known_key(k)) throw Error(file + ": /points/" + std::to_string(i) + "/" + k + ": unknown parameter");
        p[k] = resolve(k, scalar(v, file, "/points/" + std::to_string(i) + "/" + k));
      }
      s.points.push_back(std::move(p));
    }
  }
  if (s.points.empty() || (s.points.size() == 1 && s.points[0].empty()))
    throw Error(file + ": the spec has no points (give /grid or /points)");
  for (size_t i = 0; i < s.points.size(); ++i)
    if (!s.points[i].count("trace")) throw Error(file + ": point " + std::to_string(i) + " has no trace");
  if (s.raw.contains("options")) {
    if (!s.raw["options"].is_array()) throw Error(file + ": /options: expected a list of strings");
    for (size_t i = 0; i < s.raw["options"].size(); ++i)
      s.options.push_back(scalar(s.raw["options"][i], file, "/options/" + std::to_string(i)));
  }
  const std::string canon = s.raw.dump();
  s.hash = hex(hash64(canon.data(), canon.size()));
  return s;
}

std::string point_id(const Point& p) {
  std::string c;
  for (const auto& [k, v] : p) c += k + "=" + v + "\n";
  return hex(hash64(c.data(), c.size(), 0x5eed));
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("sweep: cannot find the moesim executable (/proc/self/exe)");
  return p.string();
}

// The CSV: fixed columns, numbers with 17 significant digits, empty for what was not measured.
const char* kMetricCols[] = {"hit_rate", "decode_hit_rate", "tpot_mean_s", "tpot_p90_s", "ttft_mean_s",
                             "decode_tokens_per_s", "ssd_bytes_read", "makespan_s", "prefetch_accuracy",
                             "routing_changed_fraction"};

std::string csv_cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number()) return strprintf("%.17g", v.get<double>());
  return v.dump();
}

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

Json point_metrics(const Json& m) {
  Json r;
  r["hit_rate"] = m["cache"]["hit_rate"];
  r["decode_hit_rate"] = m["cache"]["decode_hit_rate"];
  r["tpot_mean_s"] = m["tpot"]["mean_s"];
  r["tpot_p90_s"] = m["tpot"]["p90_s"];
  r["ttft_mean_s"] = m["ttft"]["mean_s"];
  r["decode_tokens_per_s"] = m["decode_tokens_per_s"];
  r["ssd_bytes_read"] = m["ssd_bytes_read"];
  r["makespan_s"] = m["makespan_s"];
  r["prefetch_accuracy"] = m.contains("prefetch") ? m["prefetch"]["accuracy"] : Json(nullptr);
  r["routing_changed_fraction"] =
      m.contains("routing_deviation") ? m["routing_deviation"]["changed_fraction"] : Json(nullptr);
  return r;
}

// results.csv of the points of `spec` found under `dirs` (the first copy of each), in spec order.
std::string merged_csv(const Spec& spec, const std::vector<std::string>& dirs, size_t* found = nullptr) {
  std::string csv = "index";
  for (const Key& k : kKeys) csv += std::string(",") + k.name;
  for (const char* m : kMetricCols) csv += std::string(",") + m;
  csv += "\n";
  size_t n = 0;
  for (size_t i = 0; i < spec.points.size(); ++i) {
    const Point& p = spec.points[i];
    const std::string id = point_id(p);
    for (const auto& d : dirs) {
      const fs::path f = fs::path(d) / "points" / (id + ".json");
      if (!fs::exists(f)) continue;
      Json j;
      try {
        j = Json::parse(read_file(f.string()));
      } catch (const Json::parse_error& e) {
        throw Error(f.string() + ": not valid JSON (a damaged point file; delete it and rerun with --resume): " + e.what());
      }
      csv += std::to_string(i);
      for (const Key& k : kKeys) csv += "," + (p.count(k.name) ? quote(p.at(k.name)) : std::string());
      for (const char* m : kMetricCols) csv += "," + csv_cell(j["metrics"].value(m, Json(nullptr)));
      csv += "\n";
      ++n;
      break;
    }
  }
  if (found) *found = n;
  return csv;
}

struct SweepArgs {
  std::string spec, out, shard;
  unsigned jobs = 0;
  bool resume = false;
};

std::pair<uint32_t, uint32_t> parse_shard(const std::string& s) {
  const size_t slash = s.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no /");
    const unsigned long i = std::stoul(s.substr(0, slash)), n = std::stoul(s.substr(slash + 1));
    if (n == 0 || i >= n || n > 1000000) throw std::invalid_argument("range");
    return {static_cast<uint32_t>(i), static_cast<uint32_t>(n)};
  } catch (const std::logic_error&) {
    throw UsageError("--shard '" + s + "': expected i/N with 0 <= i < N (e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)");
  }
}

struct Running {
  pid_t pid;
  size_t index;
  std::string id;
};

void execute(const SweepArgs& a) {
  const Spec spec = load_spec(a.spec);
  uint32_t shard = 0, shards = 1;
  if (!a.shard.empty()) std::tie(shard, shards) = parse_shard(a.shard);
  const fs::path dir = fs::absolute(a.out), points_dir = dir / "points";
  std::error_code ec;
  fs::create_directories(points_dir, ec);
  if (ec) throw Error(a.out + ": cannot create the output folder: " + ec.message());
  const fs::path manifest_path = dir / "manifest.json";
  if (fs::exists(manifest_path)) {
    const Json old = Json::parse(read_file(manifest_path.string()));
    if (old.value("spec_hash", std::string()) != spec.hash)
      throw Error(a.out + " holds the results of another spec (" + old.value("spec_hash", std::string("?")) +
                  ", this one is " + spec.hash + "): use another folder");
    if (!a.resume) throw UsageError(a.out + " holds results of this spec already: pass --resume to finish it");
  }
  // This shard's points, minus the finished ones.
  std::vector<size_t> todo;
  size_t mine = 0;
  for (size_t i = 0; i < spec.points.size(); ++i) {
    if (i % shards != shard) continue;
    ++mine;
    if (!fs::exists(points_dir / (point_id(spec.points[i]) + ".json"))) todo.push_back(i);
  }
  unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  const std::string exe = self_exe();
  Json failures = Json::array();
  Progress bar("sweep", todo.size());
  std::vector<Running> running;
  size_t next = 0;
  auto launch = [&](size_t index) {
    const Point& p = spec.points[index];
    const std::string id = point_id(p);
    const std::string out = (points_dir / (id + ".run.json")).string();
    const std::string err = (points_dir / (id + ".err")).string();
    std::vector<std::string> args{exe, "-q", "run", "--json", "-o", out};
    for (const Key& k : kKeys)
      if (p.count(k.name) && !p.at(k.name).empty()) {
        args.push_back(k.option);
        args.push_back(p.at(k.name));
      }
    for (const auto& o : spec.options) args.push_back(o);
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    // Points run in the spec's folder: relative paths in a spec (traces, models, train=) are relative to it.
    if (!spec.base.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.base.c_str());
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw Error("sweep: cannot start " + exe + ": " + std::strerror(rc));
    running.push_back(Running{pid, index, id});
  };
  auto finish = [&](const Running& r, int status) {
    const Point& p = spec.points[r.index];
    const fs::path out = points_dir / (r.id + ".run.json"), err = points_dir / (r.id + ".err");
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::exists(out);
    if (ok) {
      const Json j = Json::parse(read_file(out.string()));
      Json pj;
      pj["index"] = r.index;
      pj["point"] = Json(p);
      pj["metrics"] = point_metrics(j["metrics"]);
      pj["warnings"] = j.value("warnings", Json::array());
      write_file_atomic((points_dir / (r.id + ".json")).string(), pj.dump(2) + "\n");
      fs::remove(out, ec);
      fs::remove(err, ec);
    } else {
      std::string msg = fs::exists(err) ? read_file(err.string()) : std::string();
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      if (msg.empty()) msg = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) : "failed";
      failures.push_back({{"index", r.index}, {"id", r.id}, {"point", Json(p)}, {"error", msg}});
      fs::remove(out, ec);
    }
    bar.add(1);
  };
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && running.size() < jobs) launch(todo[next++]);
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("sweep: waitpid: ") + std::strerror(errno));
    }
    auto it = std::find_if(running.begin(), running.end(), [&](const Running& r) { return r.pid == pid; });
    if (it == running.end()) continue;
    const Running r = *it;
    running.erase(it);
    finish(r, status);
  }
  bar.finish();
  size_t found = 0;
  const std::string csv = merged_csv(spec, {a.out}, &found);
  write_file_atomic((dir / "results.csv").string(), csv);
  Json man;
  man["spec_hash"] = spec.hash;
  man["spec"] = spec.raw;
  man["spec_file"] = a.spec;
  man["moesim_version"] = std::string(MOESIM_VERSION) + " (" + MOESIM_GIT_DESCRIBE + ")";
  man["points_total"] = spec.points.size();
  man["shard"] = std::to_string(shard) + "/" + std::to_string(shards);
  man["shard_points"] = mine;
  man["points_done"] = found;
  man["failed"] = failures;
  write_file_atomic(manifest_path.string(), man.dump(2) + "\n");
  std::fprintf(stderr, "sweep %s: %zu of %zu points of shard %u/%u done, %zu failed -> %s\n", a.spec.c_str(),
               mine - failures.size() - (todo.size() - next), mine, shard, shards, failures.size(),
               (dir / "results.csv").c_str());
  if (!failures.empty())
    throw Error(std::to_string(failures.size()) + " point(s) failed; see " + manifest_path.string() +
                " (first: " + failures[0]["error"].get<std::string>() + ")");
}

void setup(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  app.add_option("spec", a->spec, "sweep spec (JSON; docs/sweep.md)")->required();
  app.add_option("-o,--output", a->out, "output folder (points/, results.csv, manifest.json)")->required();
  app.add_option("--jobs", a->jobs, "points run at once (default: every CPU)");
  app.add_option("--shard", a->shard, "run only the i-th of N disjoint slices: i/N");
  app.add_flag("--resume", a->resume, "finish a sweep in a folder that has some of its points");
  app.callback([a] { execute(*a); });
}

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out;
};

void merge(const MergeArgs& a) {
  std::string hash;
  Json spec_raw;
  std::string spec_file;
  for (const auto& d : a.dirs) {
    const fs::path m = fs::path(d) / "manifest.json";
    if (!fs::exists(m)) throw Error(d + ": no manifest.json (not a sweep output folder)");
    const Json j = Json::parse(read_file(m.string()));
    const std::string h = j.value("spec_hash", std::string());
    if (hash.empty()) {
      hash = h;
      spec_raw = j["spec"];
      spec_file = j.value("spec_file", std::string());
    } else if (h != hash) {
      throw Error(d + ": a shard of another spec (" + h + ", the first folder's is " + hash + "); refusing to merge");
    }
  }
  std::error_code ec;
  fs::create_directories(fs::path(a.out) / "points", ec);
  if (ec) throw Error(a.out + ": cannot create the output folder: " + ec.message());
  // The spec as the shards ran it, from their manifest (point ids depend only on its values).
  const fs::path spec_copy = fs::path(a.out) / "spec.json";
  write_file_atomic(spec_copy.string(), spec_raw.dump(2) + "\n");
  const Spec spec = load_spec(spec_copy.string());
  size_t found = 0;
  const std::string csv = merged_csv(spec, a.dirs, &found);
  for (const auto& d : a.dirs)
    for (const auto& e : fs::directory_iterator(fs::path(d) / "points"))
      if (e.path().extension() == ".json" && e.path().stem().extension().empty()) {
        const fs::path to = fs::path(a.out) / "points" / e.path().filename();
        if (!fs::exists(to)) fs::copy_file(e.path(), to, ec);
      }
  write_file_atomic((fs::path(a.out) / "results.csv").string(), csv);
  Json man;
  man["spec_hash"] = hash;
  man["spec"] = spec_raw;
  man["spec_file"] = spec_file;
  man["moesim_version"] = std::string(MOESIM_VERSION) + " (" + MOESIM_GIT_DESCRIBE + ")";
  man["points_total"] = spec.points.size();
  man["points_done"] = found;
  man["merged_from"] = a.dirs;
  man["failed"] = Json::array();
  write_file_atomic((fs::path(a.out) / "manifest.json").string(), man.dump(2) + "\n");
  std::fprintf(stderr, "merged %zu of %zu points from %zu folder(s) -> %s\n", found, spec.points.size(), a.dirs.size(),
               (fs::path(a.out) / "results.csv").c_str());
}

void setup_merge(CLI::App& app) {
  auto a = std::make_shared<MergeArgs>();
  app.add_option("dirs", a->dirs, "sweep output folders (shards of one spec)")->required();
  app.add_option("-o,--output", a->out, "merged output folder")->required();
  app.callback([a] { merge(*a); });
}

}  // namespace
MOESIM_CLI_COMMAND("sweep", "Run a sweep spec's points (run), in parallel, sharded, resumable", setup);
MOESIM_CLI_COMMAND("merge", "Merge sweep shards (refuses shards of another spec) into one results.csv", setup_merge);
}  // namespace moesim::cli
