#include "core/cluster_spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_schema.h"
#include "base/output_guard.h"
#include "base/units.h"
#include "core/data_dir.h"

namespace moesim {
namespace {

// A path as written, or resolved against the spec's folder when relative.
std::string resolve(const std::string& base_dir, const std::string& p) {
  if (base_dir.empty() || p.empty() || p.front() == '/') return p;
  return (std::filesystem::path(base_dir) / p).string();
}

// A preset name stays a name unless a file of that name lies next to the spec.
std::string resolve_preset_ref(const std::string& base_dir, const std::string& name_or_path) {
  const std::string near = resolve(base_dir, name_or_path);
  std::error_code ec;
  return std::filesystem::is_regular_file(near, ec) ? near : name_or_path;
}

template <typename F>
auto parsed(const JsonAt& at, F parse) {
  const std::string text = at.string();
  try {
    return parse(text);
  } catch (const Error& e) {
    at.fail(e.what());
  }
}

// A bandwidth within base/units.h's physical range: 0 ("no NIC"?) and 1e-300bit/s are refused alike, never
// read as an infinite transfer time.
double bandwidth_at(const JsonAt& at) {
  return parsed(at, [](const std::string& t) {
    const double b = parse_bandwidth(t);
    check_bandwidth_range(b);
    return b;
  });
}

LinkParams link_params(const JsonAt& at) {
  LinkParams p;
  p.bandwidth = bandwidth_at(at["bandwidth"]);
  p.latency = parsed(at["latency"], [](const std::string& t) {
    const double l = parse_duration(t);
    check_latency_range(l);
    return l;
  });
  return p;
}

std::vector<double> read_timestamps(const std::string& path) {
  InputFile in(path);
  std::istringstream text(in.read_all());
  std::vector<double> times;
  std::string line;
  for (uint64_t n = 1; std::getline(text, line); ++n) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    double t = 0;
    try {
      t = parse_duration(line);
    } catch (const Error& e) {
      throw input_error(path, n, "", e.what());
    }
    if (!times.empty() && t < times.back())
      throw input_error(path, n, "",
                        "arrival times must not decrease (" + format_seconds(t) + " after " +
                            format_seconds(times.back()) + ")");
    times.push_back(t);
  }
  if (times.empty()) throw input_error(path, 0, "", "no arrival times (one time per line, such as 12.5s)");
  return times;
}

ArrivalSpec arrival(const JsonAt& at, const std::string& base_dir) {
  ArrivalSpec a;
  a.source = at.string();
  const auto colon = a.source.find(':');
  const std::string kind = a.source.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : a.source.substr(colon + 1);
  if (kind == "poisson" && !arg.empty()) {
    a.kind = ArrivalSpec::Kind::kPoisson;
    try {
      a.mean_interval_s = parse_duration(arg);
    } catch (const Error& e) {
      at.fail(e.what());
    }
    if (!(a.mean_interval_s > 0)) at.fail("poisson: the mean interval must be positive");
  } else if (kind == "timestamps" && !arg.empty()) {
    a.kind = ArrivalSpec::Kind::kTimestamps;
    a.file = resolve(base_dir, arg);
    // An output of the running command (base/output_guard.h) is refused as the usage error it is, before the
    // read's errors become the spec's.
    check_not_an_output(a.file, at.file() + ": " + at.path());
    try {
      a.times_s = read_timestamps(a.file);
    } catch (const Error& e) {
      at.fail(e.what());
    }
  } else {
    at.fail("expected \"poisson:MEAN\" (a mean interval such as 10s) or \"timestamps:FILE\", found \"" +
            a.source + "\"");
  }
  return a;
}

}  // namespace

double parse_bandwidth(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  static const std::pair<std::string_view, double> kBits[] = {
      {"Tbit/s", 1e12}, {"Gbit/s", 1e9}, {"Mbit/s", 1e6}, {"kbit/s", 1e3}, {"Kbit/s", 1e3}, {"bit/s", 1}};
  for (const auto& [unit, scale] : kBits) {
    if (!s.ends_with(unit)) continue;
    // The number goes through the rate parser, which checks it is a finite, non-negative number.
    const std::string_view number = s.substr(0, s.size() - unit.size());
    double v = 0;
    try {
      v = parse_rate(std::string(number) + "B/s");
    } catch (const Error&) {
      throw Error("cannot parse '" + std::string(text) + "' as a bandwidth: expected a number before " +
                  std::string(unit));
    }
    return v * scale / 8;
  }
  try {
    return parse_rate(text);
  } catch (const Error&) {
    throw Error("cannot parse '" + std::string(text) +
                "' as a bandwidth: expected a unit such as Mbit/s, Gbit/s or MB/s");
  }
}

double parse_duration(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  const double scale = s.ends_with("h") ? 3600 : s.ends_with("m") ? 60 : 0;
  if (scale > 0) {
    try {
      return parse_seconds(s.substr(0, s.size() - 1)) * scale;
    } catch (const Error&) {
      throw Error("cannot parse '" + std::string(text) + "' as a time: expected a number before '" +
                  std::string(s.substr(s.size() - 1)) + "'");
    }
  }
  return parse_seconds(text);
}

std::vector<ClusterLinkSpec> ClusterSpec::topology() const {
  std::map<std::pair<uint32_t, uint32_t>, LinkParams> pairs;
  if (network) {
    const auto n = static_cast<uint32_t>(servers.size());
    for (uint32_t a = 0; a < n; ++a)
      for (uint32_t b = a + 1; b < n; ++b) pairs[{a, b}] = *network;
  }
  for (const auto& l : links) pairs[{std::min(l.a, l.b), std::max(l.a, l.b)}] = l.params;
  std::vector<ClusterLinkSpec> out;
  for (const auto& [ab, p] : pairs) out.push_back({ab.first, ab.second, p});
  return out;
}

ClusterSpec cluster_spec_from_json(const Json& j, const std::string& origin, const std::string& base_dir) {
  const JsonAt root(j, origin);
  root.only_keys({"model", "network", "servers", "links"});
  ClusterSpec spec;
  spec.origin = origin;
  // Without "model", the preset the traces' model name names (serving/cluster_serving.h cluster_model).
  if (root.has("model")) {
    spec.model = resolve_preset_ref(base_dir, root["model"].string());
    if (spec.model.empty()) root["model"].fail("expected a model preset name or path, found an empty string");
  }
  if (auto net = root.find("network"); net && !net->json().is_null()) {
    net->only_keys({"bandwidth", "latency"});
    spec.network = link_params(*net);
  }
  const JsonAt servers = root["servers"];
  if (servers.size() == 0) servers.fail("expected at least one server");
  std::map<std::string, uint32_t> index;
  for (size_t i = 0; i < servers.size(); ++i) {
    const JsonAt s = servers[i];
    s.only_keys({"name", "hw", "gpus", "gpu_memory", "traces", "arrival", "nic"});
    ClusterServerSpec out;
    out.name = s["name"].string();
    if (out.name.empty()) s["name"].fail("expected a server name, found an empty string");
    if (!index.emplace(out.name, static_cast<uint32_t>(i)).second)
      s["name"].fail("duplicate server name \"" + out.name + "\" (also servers[" +
                     std::to_string(index[out.name]) + "])");
    out.hw = resolve_preset_ref(base_dir, s["hw"].string());
    out.gpus = static_cast<uint32_t>(s["gpus"].integer(1, 4096));
    out.gpu_memory = parsed(s["gpu_memory"], [](const std::string& t) { return parse_bytes(t); });
    if (out.gpu_memory == 0) s["gpu_memory"].fail("must be a positive size (memory for experts per GPU)");
    const JsonAt traces = s["traces"];
    if (traces.size() == 0) traces.fail("expected at least one trace file");
    for (size_t t = 0; t < traces.size(); ++t) {
      const std::string p = traces[t].string();
      if (p.empty()) traces[t].fail("expected a trace path, found an empty string");
      out.traces.push_back(resolve(base_dir, p));
    }
    out.arrival = arrival(s["arrival"], base_dir);
    if (auto nic = s.find("nic")) out.nic_bandwidth = bandwidth_at(*nic);
    spec.servers.push_back(std::move(out));
  }
  if (auto links = root.find("links")) {
    std::map<std::pair<uint32_t, uint32_t>, size_t> seen;
    for (size_t i = 0; i < links->size(); ++i) {
      const JsonAt l = (*links)[i];
      l.only_keys({"from", "to", "bandwidth", "latency"});
      auto end = [&](const char* key) {
        const std::string name = l[key].string();
        const auto it = index.find(name);
        if (it == index.end()) {
          std::string known;
          for (const auto& s : spec.servers) known += (known.empty() ? "" : ", ") + s.name;
          l[key].fail("unknown server \"" + name + "\" (servers: " + known + ")");
        }
        return it->second;
      };
      ClusterLinkSpec link{end("from"), end("to"), link_params(l)};
      if (link.a == link.b) l.fail("a link from server \"" + spec.servers[link.a].name + "\" to itself");
      const auto key = std::make_pair(std::min(link.a, link.b), std::max(link.a, link.b));
      if (auto [it, fresh] = seen.emplace(key, i); !fresh)
        l.fail("links \"" + spec.servers[key.first].name + "\" and \"" + spec.servers[key.second].name +
               "\" again (also links[" + std::to_string(it->second) + "])");
      spec.links.push_back(link);
    }
  }
  if (!spec.network && spec.links.empty() && spec.servers.size() > 1)
    root.fail("no \"network\" (or null) and no \"links\": the servers are not connected");
  // Links that leave a server unreachable: refused here, naming the file, rather than by the network later.
  if (!spec.network) {
    std::vector<bool> reached(spec.servers.size(), false);
    std::vector<uint32_t> todo = {0};
    reached[0] = true;
    const std::vector<ClusterLinkSpec> topo = spec.topology();
    while (!todo.empty()) {
      const uint32_t a = todo.back();
      todo.pop_back();
      for (const ClusterLinkSpec& l : topo)
        for (const auto& [from, to] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}})
          if (from == a && !reached[to]) {
            reached[to] = true;
            todo.push_back(to);
          }
    }
    std::string unreachable;
    for (size_t i = 0; i < reached.size(); ++i)
      if (!reached[i]) unreachable += (unreachable.empty() ? "\"" : ", \"") + spec.servers[i].name + "\"";
    if (!unreachable.empty())
      (*root.find("links"))
          .fail("the links do not connect every server: \"" + spec.servers[0].name + "\" cannot reach " +
                unreachable);
  }
  return spec;
}

ClusterSpec load_cluster_spec(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return cluster_spec_from_json(load_json_file(path), path, dir);
}

std::vector<NamedFile> files_named(const ClusterSpec& spec) {
  // A preset name is the file it resolves to through the data folder.
  const auto preset = [](const char* option, const std::string& name, const std::string& where) -> NamedFile {
    const std::vector<NamedPath> f = files_named_by_value(option, name, false);
    if (f.empty() || f.front().path == name) return {name, where};
    return {f.front().path, where + ", preset " + name};
  };
  std::vector<NamedFile> out;
  if (!spec.model.empty()) out.push_back(preset("--model", spec.model, spec.origin + ": model"));
  for (size_t i = 0; i < spec.servers.size(); ++i) {
    const ClusterServerSpec& s = spec.servers[i];
    const std::string at = spec.origin + ": servers[" + std::to_string(i) + "]";
    out.push_back(preset("--hw", s.hw, at + ".hw"));
    for (size_t t = 0; t < s.traces.size(); ++t)
      out.push_back({s.traces[t], at + ".traces[" + std::to_string(t) + "]"});
    if (!s.arrival.file.empty()) out.push_back({s.arrival.file, at + ".arrival"});
  }
  return out;
}

}  // namespace moesim
