// The cluster run's inputs and outputs (serving/cluster_serving.h): loading what a SERVERS.json names, the
// JSON result and the timeline. The keys are documented in docs/cluster.md.
#include <cmath>
#include <cstdio>
#include <optional>

#include "base/atomic_file.h"
#include "base/distribution.h"
#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "serving/cluster_load.h"
#include "serving/cluster_serving.h"
#include "traces/trace_io.h"

namespace moesim::serving {

ModelSpec cluster_model(const ClusterSpec& spec) {
  // What the JSON names is an input file's content: its errors exit 1 and name the JSON path, even those
  // (an unknown preset) that the same name on a command line would make a usage error.
  if (!spec.model.empty()) try {
      return load_model(spec.model);
    } catch (const Error& e) {
      throw Error(spec.origin + ": model: " + e.what());
    }
  if (spec.servers.empty() || spec.servers[0].traces.empty())
    throw Error(spec.origin + ": model: not given, and no trace to take it from");
  const std::string& first = spec.servers[0].traces[0];
  std::string name;
  try {
    name = traces::load_trace(first).info().model;
  } catch (const Error& e) {
    throw Error(spec.origin + ": servers[0].traces[0]: " + e.what());
  }
  if (std::optional<ModelSpec> preset = preset_for_model_name(name)) return *preset;
  throw Error(spec.origin + ": model: not given, and no model preset matches servers[0].traces[0]'s model '" +
              name + "' (" + first +
              "): name one (`moesim presets`), or make one from the model's config.json with `moesim model "
              "import config.json -o MODEL.json` and give \"model\": \"MODEL.json\"");
}

ClusterInput load_cluster_input(const ClusterSpec& spec) {
  ClusterInput in;
  in.model = cluster_model(spec);
  for (size_t i = 0; i < spec.servers.size(); ++i) {
    const ClusterServerSpec& s = spec.servers[i];
    const std::string where = spec.origin + ": servers[" + std::to_string(i) + "]";
    ClusterServer out;
    out.name = s.name;
    out.gpus = s.gpus;
    out.gpu_memory = s.gpu_memory;
    out.arrival = s.arrival;
    out.nic_bandwidth = s.nic_bandwidth;
    try {
      out.hw = load_hardware(s.hw);
    } catch (const Error& e) {
      throw Error(where + ".hw: " + e.what());
    }
    if (!(out.hw.gpu_bf16_flops > 0) || !(out.hw.gpu_memory_bandwidth > 0))
      throw Error(where + ".hw: " + out.hw.origin + " has no GPU compute throughput or memory bandwidth");
    for (size_t t = 0; t < s.traces.size(); ++t) {
      traces::Trace tr;
      try {
        tr = traces::load_trace(s.traces[t]);
      } catch (const Error& e) {
        throw Error(where + ".traces[" + std::to_string(t) + "]: " + e.what());
      }
      const traces::TraceInfo& info = tr.info();
      if (info.layers != in.model.moe_layers || info.experts != in.model.routed_experts)
        throw Error(where + ".traces[" + std::to_string(t) + "]: " + s.traces[t] + " is a trace of " +
                    (info.model.empty() ? "an unnamed model" : info.model) + " (" +
                    std::to_string(info.layers) + " MoE layers x " + std::to_string(info.experts) +
                    " experts); the cluster's model " + in.model.name + " has " +
                    std::to_string(in.model.moe_layers) + " x " + std::to_string(in.model.routed_experts));
      if (tr.records() == 0)
        throw Error(where + ".traces[" + std::to_string(t) + "]: " + s.traces[t] + " holds no records");
      out.trace_paths.push_back(s.traces[t]);
      out.traces.push_back(std::move(tr));
    }
    in.servers.push_back(std::move(out));
  }
  in.links = spec.topology();
  return in;
}

namespace {

// latency, TTFT and TPOT distributions of the requests `keep` selects.
template <typename Keep>
void request_stats(const ClusterResult& r, Keep keep, Json& latency, Json& ttft, Json& tpot) {
  std::vector<double> lat, first, per_token;
  for (const RequestRecord& q : r.requests) {
    if (!keep(q)) continue;
    lat.push_back(q.end - q.arrival);
    first.push_back(q.first_token - q.arrival);
    if (q.tokens_after_first > 0) per_token.push_back((q.end - q.first_token) / q.tokens_after_first);
  }
  latency = to_json(summarize(lat));
  ttft = to_json(summarize(first));
  tpot = to_json(summarize(per_token));
}

// Mean latency of the requests arriving in each bucket (bucket_s wide; null where none arrived): how a data
// shift or a migration shows in the latency (Prism Fig. 7b).
Json latency_over_time(const ClusterResult& r) {
  std::vector<double> sum;
  std::vector<uint64_t> count;
  for (const RequestRecord& q : r.requests) {
    const auto b = static_cast<size_t>(q.arrival / r.bucket_s);
    if (sum.size() <= b) {
      sum.resize(b + 1, 0);
      count.resize(b + 1, 0);
    }
    sum[b] += q.end - q.arrival;
    ++count[b];
  }
  Json mean = Json::array();
  for (size_t b = 0; b < sum.size(); ++b)
    mean.push_back(count[b] ? Json(sum[b] / static_cast<double>(count[b])) : Json(nullptr));
  return {{"bucket_s", r.bucket_s}, {"mean_s", mean}};
}

// The links' traffic and utilisation, and where the requests' time went (serving/cluster_serving.h).
void add_links_and_passes(const ClusterInput& in, const ClusterResult& r, Json& j) {
  const auto N = static_cast<uint32_t>(in.servers.size());
  j["links"] = Json::array();
  double network_busy = 0;
  for (const auto& l : r.links) {
    network_busy += l.busy_s;
    j["links"].push_back({{"from", in.servers[l.from].name},
                          {"to", in.servers[l.to].name},
                          {"bytes", l.bytes},
                          {"messages", l.messages},
                          {"busy_s", l.busy_s},
                          {"utilisation", r.end_s > 0 ? Json(l.busy_s / r.end_s) : Json(nullptr)}});
  }
  // Where the requests' time went, and how often a pass needed another server (serving/cluster_serving.h).
  Json passes;
  uint64_t all_passes = 0, all_remote = 0;
  double compute = 0, round_trips = 0;
  for (uint32_t n = 0; n < N && n < r.passes.size(); ++n) {
    all_passes += r.passes[n];
    all_remote += r.remote_passes[n];
    compute += r.local_compute_s[n];
    round_trips += r.remote_round_trip_s[n];
    passes["per_server"][in.servers[n].name] = {
        {"passes", r.passes[n]},
        {"remote_pass_share", fraction_or_null(r.remote_passes[n], r.passes[n])},
        {"local_compute_s", r.local_compute_s[n]},
        {"remote_round_trip_s", r.remote_round_trip_s[n]}};
  }
  passes["overall"] = {{"passes", all_passes},
                       {"remote_pass_share", fraction_or_null(all_remote, all_passes)},
                       {"local_compute_s", compute},
                       {"remote_round_trip_s", round_trips},
                       {"network_busy_s", network_busy}};
  j["passes"] = passes;
}

// Each server's expert cache and redirections, by name (a system that offloads: ClusterResult::offload).
Json offload_json(const ClusterInput& in, const ClusterResult& r) {
  Json off = Json::object();
  for (size_t n = 0; n < in.servers.size(); ++n) {
    const ClusterResult::Offload& o = r.offload[n];
    off[in.servers[n].name] = {{"lookups", o.lookups},
                               {"hits", o.hits},
                               {"hit_rate", fraction_or_null(o.hits, o.lookups)},
                               {"loads", o.loads},
                               {"load_bytes", o.load_bytes},
                               {"served", o.served},
                               {"redirected", o.redirected}};
  }
  return off;
}

}  // namespace

Json cluster_result_json(const ClusterInput& in, const ClusterOptions& opt, const ClusterResult& r) {
  const auto N = static_cast<uint32_t>(in.servers.size());
  Json j;
  Json cfg;
  cfg["model"] = in.model.name;
  cfg["system"] = opt.system.text();
  cfg["placement"] =
      opt.placement.empty() ? Json(nullptr) : Json(opt.placement);  // null: a system that places none
  cfg["duration_s"] = opt.duration_s;
  cfg["migrate_every_s"] = opt.migrate_every_s > 0 ? Json(opt.migrate_every_s) : Json(nullptr);
  cfg["seed"] = opt.seed;
  cfg["profile_tokens"] = opt.profile_tokens;
  cfg["draw"] = opt.random_draw ? "random" : "round-robin";
  for (const ClusterServer& s : in.servers)
    cfg["servers"].push_back({{"name", s.name},
                              {"hw", s.hw.name},
                              {"gpus", s.gpus},
                              {"gpu_memory_bytes", s.gpu_memory},
                              {"arrival", s.arrival.source},
                              {"traces", s.trace_paths}});
  cfg["links"] = Json::array();
  for (const ClusterLinkSpec& l : in.links)
    cfg["links"].push_back({{"a", in.servers[l.a].name},
                            {"b", in.servers[l.b].name},
                            {"bandwidth_bytes_per_s", l.params.bandwidth},
                            {"latency_s", l.params.latency}});
  j["config"] = cfg;
  j["requests"] = r.requests.size();
  Json latency, ttft, tpot;
  request_stats(
      r, [](const RequestRecord&) { return true; }, latency, ttft, tpot);
  for (uint32_t n = 0; n < N; ++n) {
    Json l, f, t;
    request_stats(
        r, [n](const RequestRecord& q) { return q.server == n; }, l, f, t);
    latency["per_server"][in.servers[n].name] = l;
    ttft["per_server"][in.servers[n].name] = f;
    tpot["per_server"][in.servers[n].name] = t;
  }
  latency["over_time"] = latency_over_time(r);
  j["latency"] = latency;
  j["ttft"] = ttft;
  j["tpot"] = tpot;

  uint64_t local = 0, remote = 0;
  size_t buckets = 0;
  for (uint32_t n = 0; n < N; ++n) {
    local += r.local_invocations[n];
    remote += r.remote_invocations[n];
    buckets = std::max(buckets, r.bucket_total[n].size());
  }
  Json lcr;
  lcr["overall"] = fraction_or_null(local, local + remote);
  for (uint32_t n = 0; n < N; ++n)
    lcr["per_server"][in.servers[n].name] =
        fraction_or_null(r.local_invocations[n], r.local_invocations[n] + r.remote_invocations[n]);
  Json over_time;
  over_time["bucket_s"] = r.bucket_s;
  over_time["overall"] = Json::array();
  for (size_t b = 0; b < buckets; ++b) {
    uint64_t l = 0, t = 0;
    for (uint32_t n = 0; n < N; ++n)
      if (b < r.bucket_total[n].size()) {
        l += r.bucket_local[n][b];
        t += r.bucket_total[n][b];
      }
    over_time["overall"].push_back(fraction_or_null(l, t));
  }
  for (uint32_t n = 0; n < N; ++n) {
    Json& v = over_time["per_server"][in.servers[n].name] = Json::array();
    for (size_t b = 0; b < buckets; ++b)
      v.push_back(b < r.bucket_total[n].size() ? fraction_or_null(r.bucket_local[n][b], r.bucket_total[n][b])
                                               : Json(nullptr));
  }
  lcr["over_time"] = over_time;
  j["local_compute_ratio"] = lcr;
  j["local_invocations"] = local;
  j["remote_invocations"] = remote;
  j["proxy_cost"] = r.proxy_cost;
  j["proxy_cost_initial_placement"] = r.proxy_cost_initial;
  add_links_and_passes(in, r, j);
  if (!r.nics.empty()) {
    j["nics"] = Json::object();
    for (uint32_t n = 0; n < N; ++n) {
      const ClusterResult::Nic& c = r.nics[n];
      j["nics"][in.servers[n].name] = {
          {"bandwidth_bytes_per_s", c.bandwidth > 0 ? Json(c.bandwidth) : Json(nullptr)},
          {"out_bytes", c.out_bytes},
          {"in_bytes", c.in_bytes},
          {"out_busy_s", c.out_busy_s},
          {"in_busy_s", c.in_busy_s}};
    }
  }
  if (!r.offload.empty()) j["offload"] = offload_json(in, r);
  j["migration_checks"] = r.migration_checks;
  j["migrations"] = Json::array();
  for (const MigrationRecord& m : r.migrations)
    j["migrations"].push_back({{"time_s", m.time_s},
                               {"done_s", m.done_s},
                               {"experts_loaded", m.experts_loaded},
                               {"experts_dropped", m.experts_dropped},
                               {"bytes", m.bytes},
                               {"cost_current_s", m.cost_current_s},
                               {"cost_new_s", m.cost_new_s},
                               {"migration_s", m.migration_s}});
  j["simulated_s"] = r.end_s;
  j["events"] = r.events;
  j["load"] = load_json(in, r);
  return j;
}

void write_cluster_timeline(const std::string& path, const ClusterInput& in, const ClusterResult& r) {
  constexpr uint64_t kBytesPerSlice = 100, kWarnBytes = 100'000'000;
  if (r.timeline.size() * kBytesPerSlice > kWarnBytes)
    warn("--timeline: about " + format_bytes(r.timeline.size() * kBytesPerSlice) + " for " +
         std::to_string(r.timeline.size()) +
         " slices; --timeline-window A:B keeps the slices of a simulated window");
  const auto N = static_cast<uint32_t>(in.servers.size());
  AtomicFile out(path);
  std::string buf = "[\n";
  auto line = [&](const Json& e) { buf += (buf.size() > 2 ? ",\n" : "") + e.dump(); };
  for (uint32_t n = 0; n < N; ++n) {
    line({{"name", "process_name"},
          {"ph", "M"},
          {"pid", n},
          {"args", {{"name", "server " + in.servers[n].name}}}});
    for (uint32_t g = 0; g < in.servers[n].gpus; ++g)
      line({{"name", "thread_name"},
            {"ph", "M"},
            {"pid", n},
            {"tid", g},
            {"args", {{"name", "GPU " + std::to_string(g)}}}});
    // A system that offloads loads experts over each GPU's host link: threads after the GPUs'.
    for (uint32_t g = 0; g < in.servers[n].gpus && !r.offload.empty(); ++g)
      line({{"name", "thread_name"},
            {"ph", "M"},
            {"pid", n},
            {"tid", in.servers[n].gpus + g},
            {"args", {{"name", "host -> GPU " + std::to_string(g)}}}});
  }
  for (size_t l = 0; l < r.links.size(); l += 2) {
    const auto pid = static_cast<uint32_t>(N + l / 2);
    const std::string a = in.servers[r.links[l].from].name, b = in.servers[r.links[l].to].name;
    line(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", "link " + a + " - " + b}}}});
    line({{"name", "thread_name"},
          {"ph", "M"},
          {"pid", pid},
          {"tid", 0},
          {"args", {{"name", a + " -> " + b}}}});
    line({{"name", "thread_name"},
          {"ph", "M"},
          {"pid", pid},
          {"tid", 1},
          {"args", {{"name", b + " -> " + a}}}});
  }
  static const char* kNames[] = {"dense", "expert", "activations", "migration", "load"};
  char ev[256];
  for (const ClusterSlice& s : r.timeline) {
    // Integer nanoseconds, so that a slice's end is exactly the next one's start.
    const long long ts = std::llround(s.start * 1e9), dur = std::llround(s.end * 1e9) - ts;
    std::snprintf(
        ev, sizeof ev,
        ",\n{\"name\":\"%s L%u\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%lld.%03lld,\"dur\":%lld.%03lld}",
        kNames[s.kind], static_cast<unsigned>(s.layer), s.process, s.thread, ts / 1000, ts % 1000, dur / 1000,
        dur % 1000);
    buf += ev;
    if (buf.size() > (1u << 20)) {
      out.write(buf);
      buf.clear();
    }
  }
  out.write(buf + "\n]\n");
  out.commit();
}

}  // namespace moesim::serving
