#include "harness/merge_job.h"

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "harness/sweep_spec.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;

// Removes the output folder on failure if this merge created it. Only the topmost folder that did not exist
// is recorded, so a path such as new/deeper/out leaves nothing of new/ behind either.
class CreatedFolder {
 public:
  explicit CreatedFolder(const fs::path& p) {
    for (fs::path q = fs::absolute(p).lexically_normal(); !q.empty() && !fs::exists(q); q = q.parent_path()) {
      top_ = q;
      if (q == q.parent_path()) break;
    }
  }
  ~CreatedFolder() {
    if (top_.empty() || kept_) return;
    std::error_code ec;
    fs::remove_all(top_, ec);
  }
  void keep() { kept_ = true; }

 private:
  fs::path top_;
  bool kept_ = false;
};

}  // namespace

MergeResult merge_shards(const MergeArgs& a) {
  std::vector<Json> manifests;
  for (const auto& d : a.dirs) {
    manifests.push_back(sweep::read_manifest(d));
    const Json& m = manifests.back();
    if (m["spec_hash"] != manifests[0]["spec_hash"])
      throw Error(d + ": a shard of another spec (" + m["spec_hash"].get<std::string>() + "; " + a.dirs[0] +
                  "'s is " + manifests[0]["spec_hash"].get<std::string>() + "): refusing to merge");
    if (m.value("moesim_version", std::string()) != sweep::version_string())
      warn(d + " was run by moesim " + m.value("moesim_version", std::string("?")) + "; this is " +
           sweep::version_string());
    if (m.value("state", std::string()) != "finished")
      warn(d + ": its sweep has not finished (killed, or still running): merging the points it has");
  }
  const Json& first = manifests[0];
  const sweep::Spec spec =
      sweep::spec_from_json(first["spec"], a.dirs[0] + "/manifest.json", fs::path(a.dirs[0]));
  if (spec.hash != first["spec_hash"])
    throw Error(a.dirs[0] + "/manifest.json: its spec does not hash to its spec_hash (edited by hand?)");
  const fs::path out = a.out;
  std::error_code ec;
  if (fs::exists(out / "manifest.json") && sweep::read_manifest(out)["spec_hash"] != spec.hash)
    throw Error(a.out + " holds the results of another spec: use another folder");

  // Everything read from the shards is read and checked before the output folder is made.
  std::vector<fs::path> dirs(a.dirs.begin(), a.dirs.end());
  size_t found = 0;
  const std::string csv = sweep::merged_csv(spec, dirs, &found);
  std::vector<fs::path> sources;
  for (const auto& d : dirs) {
    fs::directory_iterator it(d / "points", ec);
    if (ec) throw Error((d / "points").string() + ": cannot list the shard's point files: " + ec.message());
    for (const auto& e : it)
      if (sweep::is_point_file(e.path())) sources.push_back(e.path());
  }

  CreatedFolder created(out);
  fs::create_directories(out / "points", ec);
  if (ec) throw Error(a.out + ": cannot create the output folder: " + ec.message());
  for (const auto& from : sources) {
    const fs::path to = out / "points" / from.filename();
    if (fs::exists(to)) continue;
    fs::copy_file(from, to, ec);
    if (ec) throw Error(from.string() + ": cannot copy to " + to.string() + ": " + ec.message());
  }
  write_file_atomic((out / "results.csv").string(), csv);

  // Failed points that no shard finished after all; their errors as the shards recorded them.
  Json failed = Json::array();
  std::set<std::string> seen;
  for (const auto& m : manifests)
    for (const auto& f : m.value("failed", Json::array()))
      if (!fs::exists(sweep::point_file(out, f.value("id", std::string()))) && seen.insert(f.dump()).second)
        failed.push_back(f);
  Json man = sweep::manifest_base(spec);
  man["spec_file"] = first.value("spec_file", std::string());
  man["merged_from"] = a.dirs;
  man["state"] = found == spec.points.size() ? "finished" : "incomplete";
  man["points_done"] = found;
  man["failed"] = failed;
  write_json_file((out / "manifest.json").string(), man);
  created.keep();
  MergeResult r;
  r.spec_hash = spec.hash;
  r.points_total = spec.points.size();
  r.points_done = found;
  r.state = man["state"].get<std::string>();
  r.results_csv = (out / "results.csv").string();
  r.manifest = (out / "manifest.json").string();
  r.failed = failed;
  if (found < spec.points.size())
    warn(std::to_string(spec.points.size() - found) + " of the spec's " + std::to_string(spec.points.size()) +
         " points are in none of the folders (" + std::to_string(failed.size()) +
         " failed, see the manifest; the others not run: a shard missing or unfinished?)");
  Json& j = r.doc;
  j["header"] = run_header("merge", {{"dirs", a.dirs}, {"output", a.out}});
  j["warnings"] = warnings_json();
  j["spec_hash"] = r.spec_hash;
  j["points_total"] = r.points_total;
  j["points_done"] = r.points_done;
  j["points_missing"] = r.points_total - r.points_done;
  j["state"] = r.state;
  j["results_csv"] = r.results_csv;
  j["manifest"] = r.manifest;
  j["failed"] = r.failed;
  return r;
}

}  // namespace moesim::harness
