#include "harness/sweep_job.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/plot_script.h"
#include "harness/sweep_spec.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;
using sweep::Point;
using sweep::Spec;

// Above this many points a sweep says how long it will take before it commits to it; above the second it
// needs --force: a typo in a grid (a list of 1000 seeds instead of 10) multiplies, and the point files of 10
// million points alone fill gigabytes.
constexpr uint64_t kWarnPoints = 100'000;
constexpr uint64_t kForcePoints = 10'000'000;

// The number of points a spec describes (grid product plus explicit points, saturating), read from its JSON
// without building the points, so a huge grid is refused before it takes the memory. nullopt when the JSON is
// not a spec this can count: spec_from_json() then reports what is wrong with it.
std::optional<uint64_t> count_spec_points(const Json& raw) {
  if (!raw.is_object()) return std::nullopt;
  uint64_t n = 0;
  if (raw.contains("grid") && raw["grid"].is_object()) {
    n = 1;
    for (const auto& [k, v] : raw["grid"].items()) {
      if (!v.is_array() || v.empty()) return std::nullopt;
      n = v.size() > UINT64_MAX / n ? UINT64_MAX : n * v.size();
    }
  }
  if (raw.contains("points") && raw["points"].is_array())
    n += std::min<uint64_t>(raw["points"].size(), UINT64_MAX - n);
  return n;
}

// "0.031 s", "45 s", "12 min", "3.4 h", "2.1 days": an estimate's scale, not its digits.
std::string rough_duration(double s) {
  if (s < 10) return strprintf("%.2g s", s);
  if (s < 90) return strprintf("%.0f s", s);
  if (s < 90 * 60) return strprintf("%.0f min", s / 60);
  if (s < 48 * 3600) return strprintf("%.1f h", s / 3600);
  return strprintf("%.1f days", s / 86400);
}

// Leftovers of a killed run of this sweep in DIR: the commands' outputs and temporary files in points/ (the
// sweep's own folder, where only point files are kept) and the temporaries AtomicFile left beside results.csv
// and manifest.json (is_temporary_output_name: only moesim names files that way, and a shard owns its
// folder). Returns how many were removed.
size_t remove_stale_temporaries(const fs::path& dir) {
  size_t removed = 0;
  std::error_code ec;
  auto drop = [&](const fs::path& p) {
    if (fs::is_regular_file(fs::symlink_status(p, ec)) && fs::remove(p, ec)) ++removed;
  };
  for (const auto& e : fs::directory_iterator(dir / "points", ec))
    if (!sweep::is_point_file(e.path())) drop(e.path());
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (is_temporary_output_name(name)) drop(e.path());
  }
  return removed;
}

std::pair<uint32_t, uint32_t> parse_shard(const std::string& s) {
  const size_t slash = s.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no /");
    size_t used_i = 0, used_n = 0;
    const std::string si = s.substr(0, slash), sn = s.substr(slash + 1);
    const unsigned long i = std::stoul(si, &used_i), n = std::stoul(sn, &used_n);
    if (used_i != si.size() || used_n != sn.size() || n == 0 || i >= n || n > 1000000)
      throw std::invalid_argument("range");
    return {static_cast<uint32_t>(i), static_cast<uint32_t>(n)};
  } catch (const std::logic_error&) {
    throw UsageError("--shard '" + s +
                     "': expected i/N with 0 <= i < N (e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)");
  }
}

// A finished point's file, or the error that stopped it. `*unwritten` is set when the error is that its
// output could not be written (a full disk), which the sweep counts apart from the points that failed to run.
std::optional<std::string> run_point(const PointRunner& run_command, const Spec& spec, size_t index,
                                     const fs::path& dir, std::vector<std::string>* warnings,
                                     bool* unwritten) {
  const Point& p = spec.points[index];
  std::vector<std::string> args = sweep::point_args(spec, p);
  const std::string id = sweep::point_id(args);
  // The command's JSON output; ".out" is not a point file, so merge and resume never take it for one.
  const fs::path out = dir / "points" / (id + ".out");
  ThreadWarningScope captured;
  try {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--json", "-o", out.string()});
    try {
      run_command(full);
    } catch (const Error& e) {
      // Output errors name the file first ("DIR/points/ID.out: cannot write: No space left on device").
      *unwritten = std::string_view(e.what()).rfind(out.string() + ":", 0) == 0;
      throw;
    }
    const Json j = Json::parse(read_file(out.string()));
    std::error_code ec;
    fs::remove(out, ec);
    Json metrics = sweep::point_metrics(p.at("command"), j);
    Json pj;
    pj["index"] = index;
    pj["id"] = id;
    pj["point"] = Json(p);
    pj["args"] = args;
    pj["warnings"] = captured.items();
    pj["metrics"] = std::move(metrics);
    pj["rests_on"] = j.value("rests_on", Json::array());  // replay points read no profile
    try {
      write_json_file(sweep::point_file(dir, id).string(), pj);
    } catch (const Error&) {
      *unwritten = true;
      throw;
    }
    *warnings = captured.items();
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.what());
  } catch (const std::bad_alloc&) {
    return std::string("out of memory");
  } catch (const std::exception& e) {
    return std::string("internal error: ") + e.what();
  }
}

// Each distinct warning once, with how many points raised it (the point files keep them all).
void report_warnings(const std::vector<std::vector<std::string>>& per_point) {
  std::map<std::string, size_t> count;
  std::vector<std::string> order;
  for (const auto& ws : per_point)
    for (const auto& w : ws)
      if (count[w]++ == 0) order.push_back(w);
  constexpr size_t kShown = 10;
  for (size_t i = 0; i < order.size() && i < kShown; ++i)
    warn(strprintf("[%zu point%s] ", count[order[i]], count[order[i]] == 1 ? "" : "s") + order[i]);
  if (order.size() > kShown)
    warn(std::to_string(order.size() - kShown) +
         " more distinct warnings (each point's are in its point file)");
}

// Creates the output folder; a folder that has a manifest must hold this spec's results and be resumed.
void prepare_output(const SweepArgs& a, const Spec& spec, const fs::path& dir,
                    const fs::path& manifest_path) {
  std::error_code ec;
  fs::create_directories(dir / "points", ec);
  if (ec) throw Error(a.out + ": cannot create the output folder: " + ec.message());
  if (fs::exists(manifest_path)) {
    const Json old = sweep::read_manifest(dir);
    if (old["spec_hash"] != spec.hash)
      throw Error(a.out + " holds the results of another spec (" + old["spec_hash"].get<std::string>() +
                  "; this one is " + spec.hash + "): use another folder");
    if (!a.resume)
      throw UsageError(a.out + " holds results of this spec already: pass --resume to finish it");
    if (old.value("moesim_version", std::string()) != sweep::version_string())
      warn(a.out + " was started by moesim " + old.value("moesim_version", std::string("?")) + "; this is " +
           sweep::version_string() + ": its finished points are kept as they are");
    // One sweep runs in a folder at a time (shards each have their own), so what is not a finished point
    // is a killed run's leftover.
    if (const size_t n = remove_stale_temporaries(dir))
      std::fprintf(stderr, "sweep %s: removed %zu temporary file(s) of an earlier, interrupted run\n",
                   a.out.c_str(), n);
  }
}

// This shard's points: `mine` counts them all, `todo` lists the ones still to run.
struct ShardWork {
  size_t mine = 0;
  std::vector<size_t> todo;
};

// This shard's points, minus the ones finished in `dir` (none when it is empty). A point given twice (a grid
// list with a value twice, an explicit point the grid has too) runs once: both CSV rows come from its one
// file.
ShardWork shard_work(const Spec& spec, const fs::path& dir, uint32_t shard, uint32_t shards) {
  ShardWork w;
  std::set<std::string> queued;
  for (size_t i = 0; i < spec.points.size(); ++i) {
    if (i % shards != shard) continue;
    ++w.mine;
    const std::string id = sweep::point_id(spec, spec.points[i]);
    const bool done = !dir.empty() && fs::exists(sweep::point_file(dir, id));
    if (!done && queued.insert(id).second) w.todo.push_back(i);
  }
  return w;
}

// Per point to run: its error (none when it succeeded), its warnings, and whether its file was not written.
struct PointOutcomes {
  std::vector<std::optional<std::string>> errors;
  std::vector<std::vector<std::string>> warnings;
  std::vector<char> unwritten;
};

PointOutcomes run_points(const SweepArgs& a, const PointRunner& run_command, const Spec& spec,
                         const fs::path& dir, const std::vector<size_t>& todo, unsigned jobs) {
  PointOutcomes o{std::vector<std::optional<std::string>>(todo.size()),
                  std::vector<std::vector<std::string>>(todo.size()), std::vector<char>(todo.size(), 0)};
  Progress bar("sweep", todo.size(), "points");
  auto one = [&](size_t k) {
    bool u = false;
    o.errors[k] = run_point(run_command, spec, todo[k], dir, &o.warnings[k], &u);
    o.unwritten[k] = u;
    bar.add(1);
  };
  size_t first = 0;
  // A big sweep's time is measured, not modelled: a point's cost depends on its trace, system and budget in
  // ways no per-point formula captures. The first point runs alone (its work is kept) and the rest are
  // assumed to cost the same, spread over the threads.
  if (spec.points.size() > kWarnPoints && !todo.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    one(0);
    first = 1;
    const double t1 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double est = t1 * static_cast<double>(todo.size()) / std::min<double>(jobs, todo.size());
    warn(
        strprintf("%s has %zu points (%zu to run here): about %s with --jobs %u, estimated from its first "
                  "point (%s); Ctrl-C stops it, --resume continues",
                  a.spec.c_str(), spec.points.size(), todo.size(), rough_duration(est).c_str(), jobs,
                  rough_duration(t1).c_str()));
  }
  parallel_for(todo.size() - first, jobs, [&](size_t k) { one(first + k); });
  bar.finish();
  return o;
}

// The failed points for the manifest, and how many of them lost their point file (with the first error).
struct Failures {
  Json failed = Json::array();
  size_t not_written = 0;
  std::string write_error;
};

Failures collect_failures(const Spec& spec, const std::vector<size_t>& todo, const PointOutcomes& o) {
  Failures f;
  for (size_t k = 0; k < todo.size(); ++k)
    if (o.errors[k]) {
      const Point& p = spec.points[todo[k]];
      f.failed.push_back({{"index", todo[k]},
                          {"id", sweep::point_id(spec, p)},
                          {"point", Json(p)},
                          {"error", *o.errors[k]}});
      if (o.unwritten[k] && f.not_written++ == 0) f.write_error = *o.errors[k];
    }
  return f;
}

// Writes results.csv and the finished manifest; returns the errors of those that could not be written. On a
// full disk the CSV and the manifest may not be written either: the count of lost point files is the error
// that matters, so theirs only follow it.
// A point file that cannot be read back (damaged) is no full disk: it goes to `damaged`, with its own advice.
std::vector<std::string> write_results(const Spec& spec, const fs::path& dir, const fs::path& manifest_path,
                                       Json& man, const Json& failed, std::string* damaged) {
  size_t found = 0;
  std::vector<std::string> outputs_lost;
  std::optional<std::string> csv;
  try {
    csv = sweep::merged_csv(spec, {dir}, &found);
  } catch (const Error& e) {
    *damaged = e.what();
  }
  try {
    if (csv) write_file_atomic((dir / "results.csv").string(), *csv);
  } catch (const Error& e) {
    outputs_lost.push_back(e.what());
  }
  man["state"] = "finished";
  man["points_done"] = found;
  man["failed"] = failed;
  try {
    write_json_file(manifest_path.string(), man);
  } catch (const Error& e) {
    outputs_lost.push_back(e.what());
  }
  return outputs_lost;
}

Json summary_json(const SweepArgs& a, const Spec& spec, const ShardWork& w, const Json& man, unsigned jobs,
                  size_t shard_done, const Failures& f, const fs::path& dir, const fs::path& manifest_path) {
  Json config = {{"spec", a.spec}, {"output", a.out},    {"shard", man["shard"]},
                 {"jobs", jobs},   {"resume", a.resume}, {"force", a.force}};
  Json j;
  j["header"] = run_header("sweep", config);
  j["warnings"] = warnings_json();
  j["spec_hash"] = spec.hash;
  j["points_total"] = spec.points.size();
  j["shard_points"] = w.mine;
  j["shard_points_done"] = shard_done;
  j["points_run"] = w.todo.size();
  j["points_failed"] = f.failed.size();
  j["point_files_not_written"] = f.not_written;
  j["results_csv"] = (dir / "results.csv").string();
  j["manifest"] = manifest_path.string();
  j["failed"] = f.failed;
  return j;
}

// Lost files first (a full disk), then failed points: either makes the sweep fail.
void throw_on_failures(const SweepArgs& a, size_t points_run, const Failures& f,
                       const std::vector<std::string>& outputs_lost, const std::string& damaged,
                       const fs::path& manifest_path) {
  if (!damaged.empty()) throw Error("results.csv not written: " + damaged);
  if (f.not_written > 0 || !outputs_lost.empty()) {
    std::string msg;
    if (f.not_written > 0)
      msg = strprintf("%zu of %zu point files could not be written (first: %s)", f.not_written, points_run,
                      f.write_error.c_str());
    for (const auto& e : outputs_lost) msg += (msg.empty() ? "" : "; ") + e;
    throw Error(msg + ": free some space, then `moesim sweep " + a.spec + " --resume -o " + a.out +
                "` runs what is missing");
  }
  const Json& failed = f.failed;
  if (!failed.empty())
    throw Error(std::to_string(failed.size()) + " point(s) failed; see " + manifest_path.string() +
                " (first: point " + std::to_string(failed[0]["index"].get<size_t>()) + ": " +
                failed[0]["error"].get<std::string>() + ")");
}

// The spec's JSON: a.spec_json, or a.spec's file; nullopt when the file is no JSON (load_spec() says why).
std::optional<Json> raw_spec(const SweepArgs& a) {
  if (a.spec_json) return *a.spec_json;
  try {
    return Json::parse(read_file(a.spec));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Changes into a spec's folder for its points and back when the sweep ends. The working directory is the
// process's: sweeps that change it run one at a time (the Python module may start several on threads).
class SpecFolder {
 public:
  SpecFolder(const SweepArgs& a, const fs::path& base) {
    if (base.empty()) return;
    lock_ = std::unique_lock<std::mutex>(mutex());
    std::error_code ec;
    previous_ = fs::current_path(ec);
    fs::current_path(base, ec);
    if (ec) throw Error(a.spec + ": cannot change into the spec's folder: " + ec.message());
  }
  ~SpecFolder() {
    std::error_code ec;
    if (!previous_.empty()) fs::current_path(previous_, ec);
  }
  SpecFolder(const SpecFolder&) = delete;
  SpecFolder& operator=(const SpecFolder&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  std::unique_lock<std::mutex> lock_;
  fs::path previous_;
};

}  // namespace

namespace {

// The spec's "options" parsed with each of its commands (the first point of each): options that fail where
// the same point without them parses are the options' fault, refused before any point runs. A failure the
// point's own values cause stays that point's.
void check_options(const Spec& spec, const PointRunner& check) {
  if (!check || spec.options.empty()) return;
  std::set<std::string> seen;
  for (const sweep::Point& p : spec.points) {
    const std::string& command = p.at("command");
    if (!seen.insert(command).second) continue;
    const std::vector<std::string> args = sweep::point_args(spec, p);
    try {
      check(args);
    } catch (const UsageError& e) {
      const std::vector<std::string> bare(args.begin(),
                                          args.end() - static_cast<std::ptrdiff_t>(spec.options.size()));
      try {
        check(bare);
      } catch (const Error& without) {
        if (std::string_view(without.what()) == e.what()) continue;  // the same fault without the options
      }
      throw UsageError(spec.file + ": /options: do not fit `moesim " + command + "`: " + e.what());
    }
  }
}

// --plot's columns must be results.csv's (docs/sweep.md "Outputs"): refused before any point runs.
void check_plot_columns(const SweepArgs& a) {
  std::string header = sweep::csv_header();
  header.pop_back();  // the newline
  std::vector<std::string> columns;
  std::string c;
  for (char ch : header + ",") {
    if (ch == ',') {
      columns.push_back(c);
      c.clear();
    } else {
      c += ch;
    }
  }
  const std::pair<const char*, std::string> given[] = {
      {"--x", a.plot_x}, {"--y", a.plot_y}, {"--group", a.plot_group}};
  for (const auto& [option, value] : given)
    if (!value.empty() && std::find(columns.begin(), columns.end(), value) == columns.end())
      throw UsageError(std::string(option) + " '" + value + "' is not a column of results.csv (" + header +
                       ")");
}

// "00:07:00" or "1-02:00:00": Slurm's --time for `s` seconds x 1.5, rounded up to whole minutes, at least
// one.
std::string slurm_time(double s) {
  const double minutes_d = std::ceil(s * 1.5 / 60);
  const uint64_t minutes = minutes_d < 1     ? 1
                           : minutes_d > 1e9 ? 1'000'000'000
                                             : static_cast<uint64_t>(minutes_d);
  const uint64_t days = minutes / 1440, h = minutes % 1440 / 60, m = minutes % 60;
  return days ? strprintf("%llu-%02llu:%02llu:00", static_cast<unsigned long long>(days),
                          static_cast<unsigned long long>(h), static_cast<unsigned long long>(m))
              : strprintf("%02llu:%02llu:00", static_cast<unsigned long long>(h),
                          static_cast<unsigned long long>(m));
}

// A fresh private folder for a dry run's timed points, removed when it goes.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string tmpl = (fs::temp_directory_path() / "moesim-dry-run-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw Error("sweep --dry-run: cannot create a temporary folder in " +
                  fs::temp_directory_path().string());
    path_ = tmpl;
    fs::create_directories(path_ / "points");
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

SweepOutcome dry_run(const SweepArgs& a, const PointRunner& run_command, const Spec& spec, uint32_t shard,
                     uint32_t shards) {
  // Finished points count only in a folder of this very spec (another spec's would be refused by the run).
  ShardWork w;
  const fs::path dir = a.out.empty() ? fs::path() : fs::absolute(a.out);
  bool resumable = false;
  if (!dir.empty() && fs::exists(dir / "manifest.json")) {
    const Json old = sweep::read_manifest(dir);
    if (old["spec_hash"] != spec.hash)
      throw Error(a.out + " holds the results of another spec (" + old["spec_hash"].get<std::string>() +
                  "; this one is " + spec.hash + "): use another folder");
    resumable = true;
  }
  w = shard_work(spec, resumable ? dir : fs::path(), shard, shards);
  const unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::map<std::string, size_t> per_command;
  for (size_t i : w.todo) ++per_command[spec.points[i].at("command")];

  std::vector<size_t> sample;
  for (size_t k : {size_t{0}, w.todo.size() / 2, w.todo.size() - 1})
    if (k < w.todo.size() && std::find(sample.begin(), sample.end(), w.todo[k]) == sample.end())
      sample.push_back(w.todo[k]);
  Json timed = Json::array();
  double sum = 0;
  size_t ok = 0;
  {
    const ScratchFolder scratch;
    const SpecFolder in_spec_folder(a, spec.base);
    for (size_t index : sample) {
      std::vector<std::string> warnings;
      bool unwritten = false;
      const auto t0 = std::chrono::steady_clock::now();
      const std::optional<std::string> error =
          run_point(run_command, spec, index, scratch.path(), &warnings, &unwritten);
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      Json one = {{"index", index}, {"id", sweep::point_id(spec, spec.points[index])}, {"seconds", t}};
      if (error) {
        one["error"] = *error;
      } else {
        sum += t;
        ++ok;
      }
      timed.push_back(std::move(one));
    }
  }
  const double mean = ok ? sum / static_cast<double>(ok) : 0;
  const double est = w.todo.empty() ? 0
                                    : mean * static_cast<double>(w.todo.size()) /
                                          static_cast<double>(std::min<size_t>(jobs, w.todo.size()));

  SweepOutcome out;
  Json config = {{"spec", a.spec},
                 {"output", a.out},
                 {"shard", std::to_string(shard) + "/" + std::to_string(shards)},
                 {"jobs", jobs},
                 {"dry_run", true}};
  Json& j = out.summary;
  j["header"] = run_header("sweep", config);
  j["warnings"] = warnings_json();
  j["spec_hash"] = spec.hash;
  j["points_total"] = spec.points.size();
  j["shard_points"] = w.mine;
  j["points_to_run"] = w.todo.size();
  j["points_per_command"] = per_command;
  j["timed_points"] = timed;
  j["mean_point_s"] = ok ? Json(mean) : Json(nullptr);
  j["estimate_s"] = ok ? Json(est) : Json(nullptr);
  j["slurm_time"] = ok ? Json(slurm_time(est)) : Json(nullptr);

  std::string commands;
  for (const auto& [c, n] : per_command)
    commands += (commands.empty() ? "" : ", ") + std::to_string(n) + " " + c;
  out.text = strprintf("sweep %s (dry run, nothing written): %zu points; shard %u/%u has %zu, %zu to run%s\n",
                       a.spec.c_str(), spec.points.size(), shard, shards, w.mine, w.todo.size(),
                       commands.empty() ? "" : (" (" + commands + ")").c_str());
  for (const Json& t : timed)
    out.text += strprintf(
        "  point %zu: %s%s\n", t["index"].get<size_t>(), rough_duration(t["seconds"].get<double>()).c_str(),
        t.contains("error") ? (" -- failed: " + t["error"].get<std::string>()).c_str() : "");
  if (ok)
    out.text += strprintf(
        "estimate: about %s for this shard with --jobs %u (the mean of the %zu timed point%s x %zu, over "
        "%zu thread%s); Slurm array task: --time=%s (1.5 x the estimate)\n",
        rough_duration(est).c_str(), jobs, ok, ok == 1 ? "" : "s", w.todo.size(),
        std::min<size_t>(jobs, w.todo.size()), std::min<size_t>(jobs, w.todo.size()) == 1 ? "" : "s",
        slurm_time(est).c_str());
  else if (!w.todo.empty())
    out.text += "estimate: none (every timed point failed; the sweep would fail them too)\n";
  return out;
}

}  // namespace

SweepOutcome run_sweep(const SweepArgs& a, const PointRunner& run_command, const PointInputs& inputs_of,
                       const PointRunner& check_command) {
  const std::optional<Json> raw = raw_spec(a);
  if (const auto n = raw ? count_spec_points(*raw) : std::nullopt; n && *n > kForcePoints && !a.force)
    throw UsageError(a.spec + ": " + std::to_string(*n) + " points, more than " +
                     std::to_string(kForcePoints) +
                     ": check the grid's lists (their lengths multiply), or pass --force to run them all");
  const Spec spec =
      a.spec_json ? sweep::spec_from_json(*a.spec_json, a.spec, a.spec_base) : sweep::load_spec(a.spec);
  {
    const SpecFolder in_spec_folder(a, spec.base);
    check_options(spec, check_command);
  }
  uint32_t shard = 0, shards = 1;
  if (!a.shard.empty()) std::tie(shard, shards) = parse_shard(a.shard);
  if (a.dry_run) return dry_run(a, run_command, spec, shard, shards);
  if (a.out.empty()) throw UsageError("sweep: an output folder is needed (-o DIR), except with --dry-run");
  if (!a.plot.empty()) check_plot_columns(a);
  const fs::path dir = fs::absolute(a.out);
  const fs::path manifest_path = dir / "manifest.json";
  {
    std::vector<NamedPath> reads;
    if (!a.spec_json) reads.push_back({fs::absolute(a.spec).string(), "the sweep spec"});
    const SpecFolder as_the_points_see_it(a, spec.base);
    for (NamedPath& f : sweep::files_named(spec, inputs_of)) reads.push_back(std::move(f));
    std::vector<NamedPath> outputs = {{dir.string(), "-o"}};
    if (!a.plot.empty()) outputs.push_back({fs::absolute(a.plot).string(), "--plot"});
    refuse_outputs_over_inputs(outputs, reads);
  }
  prepare_output(a, spec, dir, manifest_path);
  const ShardWork w = shard_work(spec, dir, shard, shards);
  Json man = sweep::manifest_base(spec);
  man["shard"] = std::to_string(shard) + "/" + std::to_string(shards);
  man["shard_points"] = w.mine;
  man["state"] = "running";
  write_json_file(manifest_path.string(), man);

  // Relative paths in the spec are relative to its folder (output paths are absolute by now).
  const SpecFolder in_spec_folder(a, spec.base);
  const unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  const PointOutcomes outcomes = run_points(a, run_command, spec, dir, w.todo, jobs);
  report_warnings(outcomes.warnings);

  const Failures f = collect_failures(spec, w.todo, outcomes);
  std::string damaged;
  const std::vector<std::string> outputs_lost =
      write_results(spec, dir, manifest_path, man, f.failed, &damaged);
  size_t shard_done = 0;
  for (size_t i = shard; i < spec.points.size(); i += shards)
    shard_done += fs::exists(sweep::point_file(dir, sweep::point_id(spec, spec.points[i])));
  if (a.report)
    std::fprintf(stderr, "sweep %s: %zu of %zu points of shard %u/%u done (%zu this run), %zu failed -> %s\n",
                 a.spec.c_str(), shard_done, w.mine, shard, shards, w.todo.size() - f.failed.size(),
                 f.failed.size(), (dir / "results.csv").c_str());
  SweepOutcome out;
  out.summary = summary_json(a, spec, w, man, jobs, shard_done, f, dir, manifest_path);
  if (!a.plot.empty() && fs::exists(dir / "results.csv"))
    plot_table("plot_sweep.py", "", (dir / "results.csv").string(), fs::absolute(a.plot).string(),
               a.plot_group.empty() ? std::vector<std::string>{a.plot_x, a.plot_y}
                                    : std::vector<std::string>{a.plot_x, a.plot_y, a.plot_group});
  try {
    throw_on_failures(a, w.todo.size(), f, outputs_lost, damaged, manifest_path);
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace moesim::harness
