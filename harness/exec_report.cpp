// The parts of harness/exec_runner.h that read what an exec run recorded, built with and without exec: a
// run's "exec" report, the CPU work of a recorded timeline's ops (calibrate and validate's structure check
// fit and replay recorded runs, e.g. engine logs, without running exec), this machine's CPUs, and the refusal
// of what needs exec in a moesim built without it.
#include <algorithm>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

#include "base/error.h"
#include "base/units.h"
#include "harness/exec_runner.h"
#include "sim/cpu_cores.h"

namespace moesim::harness {

namespace {
// exec's unit threads by resource: the key of exec.thread_cpu_s and the label of the "CPU time by thread"
// line.
struct ThreadKind {
  ResourceClass resource;
  const char* key;
  const char* label;
};
constexpr ThreadKind kThreadKinds[] = {{ResourceClass::kSsd, "io_threads", "I/O"},
                                       {ResourceClass::kCpu, "cpu_workers", "CPU workers"},
                                       {ResourceClass::kGpu, "gpu_streams", "GPU stream"},
                                       {ResourceClass::kLink, "links", "link"}};
}  // namespace

Json exec_report_json(const ExecReport& r) {
  Json j;
  j["platform"] = r.platform;
  j["direct_io"] = r.direct_io;
  j["io"] = r.io;
  if (!r.io_fallback.empty()) j["io_fallback"] = r.io_fallback;
  j["chunks_read"] = r.counters.chunks_read;
  j["bytes_read"] = r.counters.bytes_read;
  j["chunks_verified"] = r.counters.chunks_verified;
  j["frames_decoded"] = r.counters.frames_decoded;
  j["tensors_recovered"] = r.counters.tensors_recovered;
  j["expert_computes"] = r.counters.expert_computes;
  j["dense_computes"] = r.counters.dense_computes;
  j["buffers_freed"] = r.counters.buffers_freed;
  j["memory_peak_bytes"] = r.counters.memory_peak_bytes;
  j["gpu"] = r.gpu;
  if (r.gpu) {
    j["device_peak_bytes"] = r.counters.device_peak_bytes;
    j["transfers"] = r.counters.transfers;
    j["transfer_bytes"] = r.counters.transfer_bytes;
    j["gpu_recoveries"] = r.counters.gpu_recoveries;
    j["gpu_recoveries_verified"] = r.counters.gpu_recoveries_verified;
  }
  j["handoff_latency_s"] = r.counters.handoff_latency;
  j["completion_latency_s"] = r.counters.completion_latency;
  j["pipeline_latency_s"] = r.counters.pipeline_latency;
  j["plan_latency_per_op_s"] = r.counters.plan_latency_per_op;
  j["plan_latency_fixed_s"] = r.counters.plan_latency_fixed;
  j["plan_tail_per_op_s"] = r.counters.plan_tail_per_op;
  j["plan_tail_fixed_s"] = r.counters.plan_tail_fixed;
  j["lossless"] = r.counters.chunks_verified == r.counters.chunks_read;
  Json cpu = Json::object();
  for (const ThreadKind& k : kThreadKinds) {
    const double v = r.counters.thread_cpu[static_cast<size_t>(k.resource)];
    cpu[k.key] = v >= 0 ? Json(v) : Json(nullptr);
  }
  cpu["pipeline"] = r.counters.pipeline_cpu >= 0 ? Json(r.counters.pipeline_cpu) : Json(nullptr);
  j["thread_cpu_s"] = cpu;
  return j;
}

std::string thread_cpu_text(const exec::ExecCounters& c) {
  std::string t;
  auto part = [&t](const char* who, double v) {
    if (v < 0) return;
    t += (t.empty() ? "" : ", ") + std::string(who) + " " + format_seconds(v);
  };
  for (const ThreadKind& k : kThreadKinds) {
    const double v = c.thread_cpu[static_cast<size_t>(k.resource)];
    if (k.resource != ResourceClass::kLink || v > 0) part(k.label, v);  // a link thread only where it worked
  }
  part("pipeline", c.pipeline_cpu);
  return t;
}

std::string exec_report_text(const ExecReport& r) {
  const auto& c = r.counters;
  std::string t = "exec:        " + r.platform + "\n";
  t += "             " + std::to_string(c.chunks_read) + " chunks read (" + format_bytes(c.bytes_read) +
       "), every checksum verified; " + std::to_string(c.frames_decoded) + " E-chunk frames decoded with " +
       "their content checksums; " + std::to_string(c.tensors_recovered) + " tensors recovered: lossless\n";
  t += "             " + std::to_string(c.expert_computes) + " expert FFNs and " +
       std::to_string(c.dense_computes) + " dense GEMMs computed; data buffers peak " +
       format_bytes(c.memory_peak_bytes) + "\n";
  if (const std::string cpu = thread_cpu_text(c); !cpu.empty())
    t += "             CPU time by thread: " + cpu + "\n";
  if (r.gpu)
    t += "             GPU: " + std::to_string(c.transfers) + " host-to-device copies (" +
         format_bytes(c.transfer_bytes) + "), " + std::to_string(c.gpu_recoveries) +
         " tensors recovered by the CUDA kernel" +
         (c.gpu_recoveries_verified
              ? " (" + std::to_string(c.gpu_recoveries_verified) + " compared with the CPU kernel: equal)"
              : std::string()) +
         "; device memory peak " + format_bytes(c.device_peak_bytes) + "\n";
  return t;
}

bool cpu_bound_op(const Op& op, bool gpu) {
  return op.resource == ResourceClass::kCpu || (!gpu && op.resource == ResourceClass::kGpu);
}

OpWork op_work(const std::vector<TimelineEvent>& timeline, uint32_t cores, bool gpu, bool split_reads) {
  // A fused read (Op::read_bytes) is split like an O_DIRECT read, whatever split_reads says: its worker waits
  // on the device, then decompresses (its CPU clock is the decompression and the page-cache copy).
  auto read_cpu = [split_reads](const TimelineEvent& e) {
    const bool split = (split_reads && e.op.kind == OpKind::kSsdRead) || e.op.fused_read();
    return split && e.timing.cpu > 0 ? std::min(e.timing.cpu, e.timing.end - e.timing.start) : 0.0;
  };
  std::vector<std::pair<double, double>> spans;
  for (const TimelineEvent& e : timeline) {
    if (const double c = read_cpu(e); c > 0) {
      spans.emplace_back(e.timing.end - c, e.timing.end);
    } else if (cpu_bound_op(e.op, gpu)) {
      spans.emplace_back(e.timing.start, e.timing.end);
    }
  }
  const std::vector<double> work = sim::cpu_work(spans, cores);
  OpWork out;
  out.work.reserve(timeline.size());
  out.read_cpu.reserve(timeline.size());
  size_t k = 0;
  for (const TimelineEvent& e : timeline) {
    const double wall = e.timing.end - e.timing.start;
    const double c = read_cpu(e);
    if (c <= 0 && cpu_bound_op(e.op, gpu)) {
      out.work.push_back(work[k++]);
      out.read_cpu.push_back(0);
    } else if (c > 0) {
      // The CPU phase had a share s = work / c of a core over its span: at that share c seconds of CPU take
      // c / s, the rest of the read was the device's.
      const double s = work[k++] / c;
      out.work.push_back(s > 0 ? std::max(0.0, wall - c / s) : wall - c);
      out.read_cpu.push_back(c);
    } else {
      out.work.push_back(wall);
      out.read_cpu.push_back(0);
    }
  }
  return out;
}

uint32_t machine_cores() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

bool exec_built() {
  return MOESIM_HAS_EXEC != 0;
}

void refuse_without_exec(const std::string& what) {
  throw UsageError("this moesim was built without exec (-DMOESIM_EXEC=OFF): " + what);
}

void require_exec(const std::string& what) {
  if (!exec_built()) refuse_without_exec(what);
}

}  // namespace moesim::harness
