// `moesim sweep SPEC.json [--jobs N] [--shard i/N] [--resume] -o DIR`: what-if sweeps (traces x models x
// hardware x systems x eviction/routing/prefetch policies x budgets x seeds) on every core of a machine and,
// sharded, over many (a Slurm job array, GNU parallel over ssh), with no scheduler of our own.
//
//   spec = load_spec(SPEC)                      (cli/sweep_spec.h: grid and/or explicit points, docs/sweep.md)
//   mine = points i with i mod N == shard, minus those whose DIR/points/<id>.json exists
//   manifest(DIR) = {spec hash, version, state running}      (a folder of another spec is refused)
//   parallel_for(mine, --jobs):                 (core/parallel.h; each point on one thread, in this process)
//       run `moesim run|replay ARGS --json` in process, its warnings captured per thread
//       write DIR/points/<id>.json atomically   (a killed sweep loses only the points in flight)
//   DIR/results.csv = merged_csv(spec, DIR); manifest = {..., points done, failed with their errors}
//
// A point runs the very code of its command (the command's own CLI setup and callback, in this process:
// no process start, and the same checks and warnings as on the command line). Its result depends only on
// its parameters and seed, never on the thread or the order it ran in, so results.csv -- a function of the
// spec and the point files -- is byte-identical however the sweep was sharded, resumed or parallelised.
// Points run in the spec's folder (the process changes into it), so a spec's relative paths (traces,
// models, a prefetch policy's train=) are relative to the spec, from whatever directory the sweep starts.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/sweep_spec.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "core/warnings.h"

namespace moesim::cli {
namespace {

namespace fs = std::filesystem;
using sweep::Point;
using sweep::Spec;

struct SweepArgs {
  std::string spec, out, shard;
  unsigned jobs = 0;
  bool resume = false;
};

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

// `moesim ARGS...` (args[0] the command) in this process, on this thread: the command's own setup and
// callback, as main() would run them.
void run_command(std::vector<std::string> args) {
  const auto& cmds = commands();
  const auto it = std::find_if(cmds.begin(), cmds.end(), [&](const Command& c) { return c.path == args[0]; });
  if (it == cmds.end()) throw Error("sweep: no command '" + args[0] + "'");
  CLI::App app{it->description, "moesim " + args[0]};
  it->setup(app);
  args.erase(args.begin());
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  app.parse(args);
}

// A finished point's file, or the error that stopped it.
std::optional<std::string> run_point(const Spec& spec, size_t index, const fs::path& dir,
                                     std::vector<std::string>* warnings) {
  const Point& p = spec.points[index];
  std::vector<std::string> args = sweep::point_args(spec, p);
  const std::string id = sweep::point_id(args);
  // The command's JSON output; ".out" is not a point file, so merge and resume never take it for one.
  const fs::path out = dir / "points" / (id + ".out");
  ThreadWarningScope captured;
  try {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--json", "-o", out.string()});
    run_command(full);
    const Json j = Json::parse(read_file(out.string()));
    std::error_code ec;
    fs::remove(out, ec);
    Json metrics;
    if (p.at("command") == "run") {
      metrics = j.at("metrics");
    } else {
      const Json& results = j.at("results");
      if (results.size() != 1)
        throw Error("a replay point runs one policy and one budget (this one gave " +
                    std::to_string(results.size()) + " results)");
      metrics = results[0];
    }
    Json pj;
    pj["index"] = index;
    pj["id"] = id;
    pj["point"] = Json(p);
    pj["args"] = args;
    pj["warnings"] = captured.items();
    pj["metrics"] = std::move(metrics);
    write_file_atomic(sweep::point_file(dir, id).string(), pj.dump(2) + "\n");
    *warnings = captured.items();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return "bad options for `moesim " + args[0] + "`: " + e.what();
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
    warn(std::to_string(order.size() - kShown) + " more distinct warnings (each point's are in its point file)");
}

void execute(const SweepArgs& a) {
  const Spec spec = sweep::load_spec(a.spec);
  uint32_t shard = 0, shards = 1;
  if (!a.shard.empty()) std::tie(shard, shards) = parse_shard(a.shard);
  const fs::path dir = fs::absolute(a.out);
  std::error_code ec;
  fs::create_directories(dir / "points", ec);
  if (ec) throw Error(a.out + ": cannot create the output folder: " + ec.message());
  const fs::path manifest_path = dir / "manifest.json";
  if (fs::exists(manifest_path)) {
    const Json old = sweep::read_manifest(dir);
    if (old["spec_hash"] != spec.hash)
      throw Error(a.out + " holds the results of another spec (" + old["spec_hash"].get<std::string>() +
                  "; this one is " + spec.hash + "): use another folder");
    if (!a.resume) throw UsageError(a.out + " holds results of this spec already: pass --resume to finish it");
    if (old.value("moesim_version", std::string()) != sweep::version_string())
      warn(a.out + " was started by moesim " + old.value("moesim_version", std::string("?")) + "; this is " +
           sweep::version_string() + ": its finished points are kept as they are");
  }
  // This shard's points, minus the finished ones. A point given twice (a grid list with a value twice, an
  // explicit point the grid has too) runs once: both CSV rows come from its one file.
  std::vector<size_t> todo;
  std::set<std::string> queued;
  size_t mine = 0;
  for (size_t i = 0; i < spec.points.size(); ++i) {
    if (i % shards != shard) continue;
    ++mine;
    const std::string id = sweep::point_id(spec, spec.points[i]);
    if (!fs::exists(sweep::point_file(dir, id)) && queued.insert(id).second) todo.push_back(i);
  }
  Json man = sweep::manifest_base(spec);
  man["shard"] = std::to_string(shard) + "/" + std::to_string(shards);
  man["shard_points"] = mine;
  man["state"] = "running";
  write_file_atomic(manifest_path.string(), man.dump(2) + "\n");

  // Relative paths in the spec are relative to its folder (output paths are absolute by now).
  if (!spec.base.empty()) {
    fs::current_path(spec.base, ec);
    if (ec) throw Error(a.spec + ": cannot change into the spec's folder: " + ec.message());
  }
  const unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::optional<std::string>> errors(todo.size());
  std::vector<std::vector<std::string>> warnings(todo.size());
  {
    Progress bar("sweep", todo.size());
    parallel_for(todo.size(), jobs, [&](size_t k) {
      errors[k] = run_point(spec, todo[k], dir, &warnings[k]);
      bar.add(1);
    });
    bar.finish();
  }
  report_warnings(warnings);

  size_t found = 0;
  write_file_atomic((dir / "results.csv").string(), sweep::merged_csv(spec, {dir}, &found));
  Json failed = Json::array();
  for (size_t k = 0; k < todo.size(); ++k)
    if (errors[k]) {
      const Point& p = spec.points[todo[k]];
      failed.push_back({{"index", todo[k]}, {"id", sweep::point_id(spec, p)}, {"point", Json(p)},
                        {"error", *errors[k]}});
    }
  man["state"] = "finished";
  man["points_done"] = found;
  man["failed"] = failed;
  write_file_atomic(manifest_path.string(), man.dump(2) + "\n");
  size_t shard_done = 0;
  for (size_t i = shard; i < spec.points.size(); i += shards)
    shard_done += fs::exists(sweep::point_file(dir, sweep::point_id(spec, spec.points[i])));
  std::fprintf(stderr, "sweep %s: %zu of %zu points of shard %u/%u done (%zu this run), %zu failed -> %s\n",
               a.spec.c_str(), shard_done, mine, shard, shards, todo.size() - failed.size(), failed.size(),
               (dir / "results.csv").c_str());
  if (!failed.empty())
    throw Error(std::to_string(failed.size()) + " point(s) failed; see " + manifest_path.string() + " (first: point " +
                std::to_string(failed[0]["index"].get<size_t>()) + ": " + failed[0]["error"].get<std::string>() + ")");
}

void setup(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  app.add_option("spec", a->spec, "sweep spec (JSON; docs/sweep.md)")->required();
  app.add_option("-o,--output", a->out, "output folder (points/, results.csv, manifest.json)")->required();
  app.add_option("--jobs", a->jobs, "points run at once, one thread each (0 = every CPU)")->capture_default_str();
  app.add_option("--shard", a->shard, "run only the i-th of N disjoint slices (points i, i+N, ...): i/N");
  app.add_flag("--resume", a->resume, "finish a sweep in a folder that holds some of its points");
  app.callback([a] { execute(*a); });
}

}  // namespace
MOESIM_CLI_COMMAND("sweep",
                   "Run a sweep spec's points (run or replay) in parallel threads, sharded, resumable; merged CSV",
                   setup);
}  // namespace moesim::cli
