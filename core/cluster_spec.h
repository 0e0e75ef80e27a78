// SERVERS.json: the edge cluster of `moesim cluster` (docs/cluster.md), as in Prism (Accelerating Edge
// Inference for Distributed MoE Models with Latency-Optimized Expert Placement, §III-B and §IV-A): N servers,
// each with its own hardware profile, G GPUs with a memory for experts, its own traces and request arrivals,
// joined by a network of links.
//
//   {"model": "deepseek-v2-lite",
//    "network": {"bandwidth": "500Mbit/s", "latency": "1ms"},  // the full mesh's default link; null: none
//    "servers": [{"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "6GiB",
//                 "traces": ["a.mtr"], "arrival": "poisson:10s",   // or "timestamps:FILE"
//                 "nic": "1Gbit/s"}],                              // optional
//    "links": [{"from": "a", "to": "b", "bandwidth": "100Mbit/s", "latency": "5ms"}]}
//
// A link is undirected (each direction queues on its own in the simulation). With a `network`, every pair
// of servers is linked by it and `links` override pairs; with "network": null (or no "network"), `links`
// are the topology.
// Trace and timestamp paths resolve against the JSON file's folder. This file parses and checks the shape
// only: the hardware profiles, the model and the traces are loaded by serving/cluster_serving.h,
// and whether the network connects every server is checked there too (sim/network.h).
//
// Every error is a moesim::Error "FILE: PATH: what" naming the JSON path ("servers[1].gpu_memory"): unknown
// keys (with the closest known one), a bad unit, duplicate server names, a link to an unknown server or to
// itself, a pair linked twice, no traces, a bad arrival, an unreadable or unsorted timestamps file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_io.h"

namespace moesim {

struct LinkParams {
  double bandwidth = 0;  // bytes per second, > 0
  double latency = 0;    // seconds, >= 0
};

struct ClusterLinkSpec {
  uint32_t a = 0, b = 0;  // server indices, a != b (the JSON's "from" and "to")
  LinkParams params;
};

struct ArrivalSpec {
  enum class Kind : uint8_t { kPoisson, kTimestamps };
  Kind kind = Kind::kPoisson;
  double mean_interval_s = 0;   // kPoisson: > 0
  std::vector<double> times_s;  // kTimestamps: non-decreasing, >= 0
  std::string source;           // the text of "arrival" (for outputs)
  std::string file;             // kTimestamps: the file they were read from (resolved)
};

struct ClusterServerSpec {
  std::string name;
  std::string hw;  // a hardware preset name or a path (resolved against the JSON's folder when relative)
  uint32_t gpus = 1;
  uint64_t gpu_memory = 0;          // bytes for experts per GPU, > 0
  std::vector<std::string> traces;  // resolved paths, >= 1
  ArrivalSpec arrival;
  double nic_bandwidth = 0;  // bytes/s of the server's network interface, each direction; 0: not a bottleneck
};

struct ClusterSpec {
  std::string origin;  // the file (for messages)
  std::string model;   // preset name or path; empty: the preset the first trace's model name names
  std::optional<LinkParams> network;
  std::vector<ClusterServerSpec> servers;  // >= 1, distinct names
  std::vector<ClusterLinkSpec> links;      // distinct pairs

  // Every undirected link of the topology: the mesh of `network` with `links` overriding, or `links` alone;
  // sorted by (a, b) with a < b, so the order never depends on the JSON's.
  std::vector<ClusterLinkSpec> topology() const;
};

// "500Mbit/s", "1Gbit/s", "100kbit/s", "64bit/s" (powers of 1000, bits) or a byte rate of base/units.h
// ("62.5MB/s"). Bytes per second; throws moesim::Error naming the text.
double parse_bandwidth(std::string_view text);

// A time of base/units.h ("10s", "250ms", "3min") or with the short suffixes "m" (minutes) and "h" (hours),
// as durations are written on command lines ("30m"). Seconds; throws moesim::Error naming the text.
double parse_duration(std::string_view text);

// `base_dir` is where relative paths resolve ("" = as given).
ClusterSpec cluster_spec_from_json(const Json& j, const std::string& origin, const std::string& base_dir);
ClusterSpec load_cluster_spec(const std::string& path);

// Every file a spec reads besides itself -- the model and hardware profiles named by path, the traces, the
// timestamps files -- with where it names them ("servers.json: servers[0].traces[1]"), so that a command's
// outputs can be refused when they are one of them (base/output_guard.h). A preset name is listed as the file
// it resolves to through the data folder ("servers.json: servers[0].hw, preset NAME").
struct NamedFile {
  std::string path, where;
};
std::vector<NamedFile> files_named(const ClusterSpec& spec);

}  // namespace moesim
