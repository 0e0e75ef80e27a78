// `moesim merge DIR... -o OUT [--json]`: the shards of one sweep (`moesim sweep --shard i/N`, run anywhere)
// into one folder: their point files, results.csv and a manifest. Shards of another spec are refused (the
// spec hash in each manifest); shards run by another moesim version are merged with a warning. The CSV is
// built from the spec (taken from the first manifest) and the point files exactly as `moesim sweep` builds
// it, so it equals the unsharded run's byte for byte. Points missing from every shard (not run yet, or
// failed) are reported, with the shards' errors for the failed ones. A merge that fails leaves no folder it
// created behind (nor its partial contents): OUT either holds a whole merge or is as it was.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/json_io.h"

namespace moesim::harness {

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out;
};

struct MergeResult {
  std::string spec_hash;
  size_t points_total = 0;
  size_t points_done = 0;             // points with a point file in some shard (now in OUT/points)
  std::string state;                  // "finished" when every point is done, else "incomplete"
  std::string results_csv, manifest;  // the files written
  Json failed = Json::array();        // the shards' failures that no shard finished after all
  Json doc;  // the document `merge --json` prints: header, warnings, the counts, the files, failed
};

// Merges a.dirs into a.out (the point files, results.csv, manifest.json) and returns what it merged; warns
// about shards of another moesim version, unfinished shards and points in none of the shards. Throws
// moesim::Error for a shard of another spec, an unreadable shard or an OUT holding another spec's results.
MergeResult merge_shards(const MergeArgs& a);

}  // namespace moesim::harness
