#include "serving/timeline.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/warnings.h"

namespace moesim {

TimelineWindow parse_timeline_steps(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError("--timeline-steps: " + why + " in '" + text +
                      "' (expected A:B, A: or :B with 0-based step numbers, B >= A)");
  };
  const auto colon = text.find(':');
  if (text.empty() || colon == std::string::npos) throw bad(text.empty() ? "empty" : "no ':'");
  auto number = [&](std::string_view s, uint32_t fallback) {
    if (s.empty()) return fallback;
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v >= UINT32_MAX)
      throw bad("'" + std::string(s) + "' is not a step number");
    return static_cast<uint32_t>(v);
  };
  const std::string_view a(text.data(), colon), b(text.data() + colon + 1, text.size() - colon - 1);
  if (a.empty() && b.empty()) throw bad("no step given");
  TimelineWindow w{number(a, 0), number(b, UINT32_MAX)};
  if (w.last < w.first) throw bad("B < A");
  return w;
}

void check_timeline_window(const TimelineWindow& window, size_t workload_steps) {
  if (window.first < workload_steps) return;
  throw UsageError("--timeline-steps: step " + std::to_string(window.first) + " is past the end (" +
                   (workload_steps == 0 ? std::string("the workload has no steps")
                                        : "the workload has " + std::to_string(workload_steps) +
                                              " steps, 0.." + std::to_string(workload_steps - 1)) +
                   ")");
}

namespace {

// Bytes of one event of each kind as written below, averages measured on a 2,000-token trace fitted to the
// bundled Qwen3 one (docs/timeline.md); timestamps of long runs take a few more digits.
constexpr uint64_t kOpBytes = 165, kOpBytesNoLabels = 135, kCounterBytes = 75, kStepBytes = 150,
                   kLayerBytes = 115, kMetaBytes = 80;
// Ops that became ready together wait for the one GPU stream: about 3 queue-length samples per 4 GPU ops.
constexpr double kGpuQueueSamplesPerOp = 0.75;

// ---- the processes and threads of the file ----

struct Process {
  const char* key;     // a resource or queue name (ResourceStats / Platform::queue_names)
  const char* name;    // shown
  const char* thread;  // prefix of its op threads' names ("slot 0"), nullptr: no op threads
};
constexpr Process pool_process(ResourceClass r) {
  return {resource_pool_name(r), resource_names(r).label, resource_names(r).unit};
}
constexpr Process kProcesses[] = {
    {"steps", "steps", nullptr},
    {"pools", "expert cache", nullptr},
    {kIoThreadPool, "I/O thread", nullptr},
    pool_process(ResourceClass::kSsd),
    pool_process(ResourceClass::kCpu),
    pool_process(ResourceClass::kLink),
    pool_process(ResourceClass::kGpu),
};
constexpr uint32_t kKnownProcesses = sizeof(kProcesses) / sizeof(kProcesses[0]);
constexpr uint32_t kStepsPid = 1, kPoolsPid = 2;
// Thread ids are unique over the whole file (Perfetto keys threads by tid): pid * 1000 + unit.
constexpr uint32_t kStepsTid = kStepsPid * 1000 + 1, kLayersTid = kStepsPid * 1000 + 2;

uint32_t known_pid(std::string_view key) {
  for (uint32_t i = 0; i < kKnownProcesses; ++i)
    if (key == kProcesses[i].key) return i + 1;
  return 0;
}

int64_t to_ns(double seconds) {
  return std::max<int64_t>(0, std::llround(seconds * 1e9));
}

// ---- a streaming writer of one JSON array ----

class Out {
 public:
  explicit Out(const std::function<void(std::string_view)>& sink) : sink_(sink) {
    buf_.reserve(kChunk + 4096);
  }
  void begin_event() {
    buf_ += first_ ? "[\n{" : ",\n{";
    first_ = false;
    if (buf_.size() >= kChunk) flush();
  }
  void end_array() {
    buf_ += first_ ? "[]\n" : "\n]\n";
    flush();
  }
  void raw(std::string_view s) { buf_ += s; }
  void num(uint64_t v) {
    char t[24];
    const auto r = std::to_chars(t, t + sizeof t, v);
    buf_.append(t, r.ptr);
  }
  // Nanoseconds (>= 0) as microseconds, trailing zeros of the fraction dropped: 1130500 -> 1130.5.
  // Some Perfetto versions read a number as (int64)(double * 1000), which truncates 0.7% of 3-decimal
  // values to one nanosecond less (451.991 -> 451990.99..) and makes an op overlap the one before it
  // on its thread; those get a fourth digit of half a nanosecond (451.9915), which every reader maps
  // back to the same nanosecond.
  void us(int64_t ns) {
    num(static_cast<uint64_t>(ns / 1000));
    const int rem = static_cast<int>(ns % 1000);
    const bool bias = static_cast<int64_t>(static_cast<double>(ns) / 1000.0 * 1000.0) != ns;
    if (rem == 0 && !bias) return;
    char frac[5] = {'.', static_cast<char>('0' + rem / 100), static_cast<char>('0' + rem / 10 % 10),
                    static_cast<char>('0' + rem % 10), '5'};
    int n = 4;
    if (bias)
      n = 5;
    else
      while (frac[n - 1] == '0') --n;
    buf_.append(frac, static_cast<size_t>(n));
  }
  void str(std::string_view s) {
    buf_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        buf_ += '\\';
        buf_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        static const char* hex = "0123456789abcdef";
        buf_ += "\\u00";
        buf_ += hex[(c >> 4) & 0xF];
        buf_ += hex[c & 0xF];
      } else {
        buf_ += c;
      }
    }
    buf_ += '"';
  }
  // ,"key":
  void key(const char* k) {
    buf_ += ",\"";
    buf_ += k;
    buf_ += "\":";
  }

 private:
  void flush() {
    sink_(buf_);
    buf_.clear();
  }
  static constexpr size_t kChunk = 1 << 20;
  const std::function<void(std::string_view)>& sink_;
  std::string buf_;
  bool first_ = true;
};

// tid 0: a process's metadata, without a tid (Perfetto then takes tid = pid, as for counters).
void metadata(Out& o, const char* what, uint32_t pid, uint32_t tid, const char* arg, std::string_view text,
              uint64_t value) {
  o.begin_event();
  o.raw("\"name\":");
  o.str(what);
  o.raw(",\"ph\":\"M\",\"pid\":");
  o.num(pid);
  if (tid != 0) {
    o.key("tid");
    o.num(tid);
  }
  o.raw(",\"args\":{\"");
  o.raw(arg);
  o.raw("\":");
  if (text.empty())
    o.num(value);
  else
    o.str(text);
  o.raw("}}");
}

void process(Out& o, uint32_t pid, std::string_view name) {
  metadata(o, "process_name", pid, 0, "name", name, 0);
  metadata(o, "process_sort_index", pid, 0, "sort_index", {}, pid);
}

void thread(Out& o, uint32_t pid, uint32_t tid, std::string_view name, uint32_t sort) {
  metadata(o, "thread_name", pid, tid, "name", name, 0);
  metadata(o, "thread_sort_index", pid, tid, "sort_index", {}, sort);
}

// {"name":NAME,"ph":"X","ts":..,"dur":..,"pid":..,"tid":..  (the caller adds args and the closing brace)
void slice(Out& o, std::string_view name, double start, double end, uint32_t pid, uint32_t tid) {
  const int64_t s = to_ns(start), e = to_ns(end);
  o.begin_event();
  o.raw("\"name\":");
  o.str(name);
  o.raw(",\"ph\":\"X\",\"ts\":");
  o.us(s);
  o.key("dur");
  o.us(e - s);
  o.key("pid");
  o.num(pid);
  o.key("tid");
  o.num(tid);
}

bool in_window(uint32_t step, const PipelineResult& r) {
  return step >= r.timeline_first_step && step <= r.timeline_last_step;
}

// The window's steps and invocations, as index ranges of r.steps / r.invocations.
struct Marked {
  size_t step_begin = 0, step_end = 0, inv_begin = 0, inv_end = 0;
};
Marked marked(const PipelineResult& r) {
  Marked m;
  m.step_begin = std::min<size_t>(r.timeline_first_step, r.steps.size());
  m.step_end = std::min<size_t>(uint64_t{r.timeline_last_step} + 1, r.steps.size());
  auto before = [](const InvocationTiming& i, uint32_t step) { return i.step < step; };
  m.inv_begin = static_cast<size_t>(
      std::lower_bound(r.invocations.begin(), r.invocations.end(), r.timeline_first_step, before) -
      r.invocations.begin());
  m.inv_end = m.inv_begin;
  while (m.inv_end < r.invocations.size() && in_window(r.invocations[m.inv_end].step, r)) ++m.inv_end;
  return m;
}

const char* phase_name(uint8_t phase) {
  return phase == 0 ? "prefill" : "decode";
}

std::string tensor_label(const ModelCosts& costs, uint16_t t) {
  return t < costs.tensor_names.size() ? costs.tensor_names[t] : "tensor" + std::to_string(t);
}

}  // namespace

// ---- size ----

TimelineSize estimate_timeline_size(const WorkloadView& w, const ModelCosts& costs,
                                    const TimelineWindow& window, const TensorLayout& layout,
                                    double miss_rate, bool label_args) {
  TimelineSize s;
  const size_t steps = w.steps();
  const size_t first = std::min<size_t>(window.first, steps);
  const size_t end = std::max(first, std::min<size_t>(uint64_t{window.last} + 1, steps));
  s.first_step = static_cast<uint32_t>(first);
  s.steps = static_cast<uint32_t>(end - first);
  s.lower_bound = miss_rate <= 0;
  const auto tensors = static_cast<double>(std::max<size_t>(costs.tensor_share.size(), 1));
  const uint64_t k = std::max(layout.shards, 1u);
  // Ops per missed tensor: read + transfer; split: K E-chunk reads and decompressions, the SM-chunk read,
  // the transfer and the recovery.
  const auto per_tensor = static_cast<double>(layout.compressed ? 2 * k + 3 : 2);
  const double miss = std::clamp(miss_rate, 0.0, 1.0);
  for (size_t st = first; st < end; ++st) {
    const uint32_t inv_begin = w.step_begin[st], inv_end = w.step_begin[st + 1];
    const auto invocations = static_cast<double>(inv_end - inv_begin);
    const auto lookups = static_cast<double>(w.lookups.inv_begin[inv_end] - w.lookups.inv_begin[inv_begin]);
    const double misses = miss * lookups, gpu_ops = invocations + lookups;
    const auto ops = static_cast<uint64_t>(gpu_ops + misses * tensors * per_tensor);
    // Counter samples: reads (and decompressions) queue one behind the other, GPU ops that become ready
    // together queue for the stream, and the pool changes in the invocations that miss.
    const auto counters =
        static_cast<uint64_t>(misses * tensors * (per_tensor - 1) + kGpuQueueSamplesPerOp * gpu_ops +
                              std::min(invocations, misses / 3));
    const auto layers = static_cast<uint64_t>(invocations);
    s.events += ops + counters + 1 + layers;
    s.step_bytes.push_back(ops * (label_args ? kOpBytes : kOpBytesNoLabels) + counters * kCounterBytes +
                           kStepBytes + layers * kLayerBytes);
    s.bytes += s.step_bytes.back();
  }
  return s;
}

TimelineSize estimate_timeline_size(const PipelineResult& r, bool label_args) {
  TimelineSize s;
  const Marked m = marked(r);
  s.first_step = static_cast<uint32_t>(m.step_begin);
  s.steps = static_cast<uint32_t>(m.step_end - m.step_begin);
  const uint64_t meta = 2 * (kKnownProcesses + r.counter_tracks.size()) + 4;
  s.events = r.timeline.size() + r.counter_samples.size() + s.steps + (m.inv_end - m.inv_begin) + meta;
  s.bytes = meta * kMetaBytes;
  if (s.steps == 0) return s;
  // Events per step of the window: ops by their step, invocations by theirs, counter samples by time.
  std::vector<uint64_t> ops(s.steps, 0), counters(s.steps, 0), layers(s.steps, 0);
  for (const auto& e : r.timeline) ++ops[std::min<size_t>(e.step - m.step_begin, s.steps - 1)];
  for (size_t i = m.inv_begin; i < m.inv_end; ++i) ++layers[r.invocations[i].step - m.step_begin];
  size_t st = 0;
  for (const auto& c : r.counter_samples) {
    while (st + 1 < s.steps && c.time >= r.steps[m.step_begin + st + 1].start) ++st;
    ++counters[st];
  }
  for (size_t i = 0; i < s.steps; ++i) {
    s.step_bytes.push_back(ops[i] * (label_args ? kOpBytes : kOpBytesNoLabels) + counters[i] * kCounterBytes +
                           kStepBytes + layers[i] * kLayerBytes);
    s.bytes += s.step_bytes.back();
  }
  return s;
}

bool warn_if_timeline_large(const std::string& path, const TimelineSize& size, uint64_t threshold) {
  if (threshold == 0 || size.bytes <= threshold) return false;
  auto mb = [](uint64_t b) { return std::to_string(std::llround(static_cast<double>(b) / 1e6)); };
  std::string msg = "timeline " + path + " will be " + (size.lower_bound ? "at least ~" : "~") +
                    mb(size.bytes) + " MB (" + std::to_string(size.events) +
                    " events); cut it with --timeline-steps A:B";
  // The longest run of steps from the window's first that stays under the threshold (at least one step).
  uint64_t fit = 0, bytes = 0;
  while (fit < size.step_bytes.size() && (fit == 0 || bytes + size.step_bytes[fit] <= threshold))
    bytes += size.step_bytes[fit++];
  if (fit > 0 && fit < size.step_bytes.size())
    msg += " (e.g. --timeline-steps " + std::to_string(size.first_step) + ":" +
           std::to_string(size.first_step + fit - 1) + " for ~" + mb(bytes) + " MB)";
  warn(msg);
  return true;
}

// ---- the document ----

namespace {

// Processes: the known ones in pipeline order, then any other queue the platform reported. Returns each
// counter track's pid.
std::vector<uint32_t> write_processes(Out& o, const PipelineResult& r, const Marked& m) {
  std::vector<std::string> extra;  // pid kKnownProcesses + 1 + i
  std::vector<uint32_t> track_pid(r.counter_tracks.size());
  std::vector<bool> used(kKnownProcesses + 1, false);
  for (size_t t = 0; t < r.counter_tracks.size(); ++t) {
    const CounterTrack& ct = r.counter_tracks[t];
    uint32_t pid = ct.kind == CounterTrack::Kind::kPoolBytes ? kPoolsPid : known_pid(ct.name);
    if (pid == 0) {
      auto it = std::find(extra.begin(), extra.end(), ct.name);
      pid = kKnownProcesses + 1 + static_cast<uint32_t>(it - extra.begin());
      if (it == extra.end()) extra.push_back(ct.name);
    } else {
      used[pid] = true;
    }
    track_pid[t] = pid;
  }
  std::set<std::pair<uint32_t, uint32_t>> threads;  // (pid, unit)
  for (const auto& e : r.timeline) {
    const uint32_t pid = known_pid(resource_pool_name(e.op.resource));
    used[pid] = true;
    threads.emplace(pid, e.timing.unit);
  }
  used[kStepsPid] = m.step_end > m.step_begin;
  for (uint32_t pid = 1; pid <= kKnownProcesses; ++pid)
    if (used[pid]) process(o, pid, kProcesses[pid - 1].name);
  for (size_t i = 0; i < extra.size(); ++i)
    process(o, kKnownProcesses + 1 + static_cast<uint32_t>(i), extra[i]);
  if (used[kStepsPid]) {
    thread(o, kStepsPid, kStepsTid, "steps", 0);
    thread(o, kStepsPid, kLayersTid, "layers", 1);
  }
  for (const auto& [pid, unit] : threads)
    thread(o, pid, pid * 1000 + unit, std::string(kProcesses[pid - 1].thread) + " " + std::to_string(unit),
           unit);
  return track_pid;
}

// Step and layer markers.
void write_markers(Out& o, const PipelineResult& r, const Marked& m) {
  std::string name;
  for (size_t s = m.step_begin; s < m.step_end; ++s) {
    const StepTiming& st = r.steps[s];
    name = "step " + std::to_string(s) + " " + phase_name(st.phase) + " (" + std::to_string(st.tokens) +
           (st.tokens == 1 ? " token)" : " tokens)");
    slice(o, name, st.start, st.end, kStepsPid, kStepsTid);
    o.raw(",\"args\":{\"step\":");
    o.num(s);
    o.key("phase");
    o.str(phase_name(st.phase));
    o.key("tokens");
    o.num(st.tokens);
    o.raw("}}");
  }
  for (size_t i = m.inv_begin; i < m.inv_end; ++i) {
    const InvocationTiming& inv = r.invocations[i];
    name = "L" + std::to_string(inv.layer) + " " + phase_name(inv.phase);
    slice(o, name, inv.start, inv.end, kStepsPid, kLayersTid);
    o.raw(",\"args\":{\"layer\":");
    o.num(inv.layer);
    o.key("step");
    o.num(inv.step);
    o.raw("}}");
  }
}

// An op's slice name ("prefetch read L3 E7 w1.e0"); `tensors` caches the labels by tensor index.
void op_name(std::string& name, const Op& op, const ModelCosts& costs, std::vector<std::string>& tensors) {
  name = op.prefetch ? "prefetch " : "";
  name += op_kind_name(op.kind);
  if (op.layer != kNoLabel) name += " L" + std::to_string(op.layer);
  if (op.expert != kNoLabel) name += " E" + std::to_string(op.expert);
  if (op.tensor != kNoLabel) {
    while (tensors.size() <= op.tensor)
      tensors.push_back(tensor_label(costs, static_cast<uint16_t>(tensors.size())));
    name += ' ';
    name += tensors[op.tensor];
    if (op.part == TensorPart::kSm) name += ".sm";
    if (op.part == TensorPart::kE) name += ".e" + std::to_string(op.shard);
  }
}

// The args naming what an op works on (TimelineWriteOptions::label_args).
void write_label_args(Out& o, const Op& op, const std::vector<std::string>& tensors) {
  if (op.layer != kNoLabel) {
    o.key("layer");
    o.num(op.layer);
  }
  if (op.expert != kNoLabel) {
    o.key("expert");
    o.num(op.expert);
  }
  if (op.tensor != kNoLabel) {
    o.key("tensor");
    o.str(tensors[op.tensor]);
  }
  if (op.part != TensorPart::kWhole) {
    o.key("part");
    o.str(tensor_part_name(op.part));
  }
  if (op.part == TensorPart::kE && op.shard != kNoLabel) {
    o.key("shard");
    o.num(op.shard);
  }
}

// Ops.
void write_ops(Out& o, const PipelineResult& r, const ModelCosts& costs, const TimelineWriteOptions& opt) {
  std::string name;
  std::vector<std::string> tensors;  // labels by tensor index
  for (const auto& e : r.timeline) {
    const Op& op = e.op;
    op_name(name, op, costs, tensors);
    const uint32_t pid = known_pid(resource_pool_name(op.resource));
    slice(o, name, e.timing.start, e.timing.end, pid, pid * 1000 + e.timing.unit);
    o.raw(",\"args\":{\"step\":");
    o.num(e.step);
    if (opt.label_args) write_label_args(o, op, tensors);
    o.key("bytes");
    o.num(op.bytes);
    if (op.read_bytes) {  // a fused read: what its worker read before decompressing (ZipMoE §4)
      o.key("read_bytes");
      o.num(op.read_bytes);
    }
    if (op.tokens) {
      o.key("tokens");
      o.num(op.tokens);
    }
    if (e.timing.submitted >= 0) {
      o.key("submitted");
      o.us(to_ns(e.timing.submitted));
    }
    if (e.timing.cpu >= 0) {  // a real run's: the CPU time of the thread that ran it, microseconds
      o.key("cpu");
      o.us(to_ns(e.timing.cpu));
    }
    if (op.prefetch) o.raw(",\"prefetch\":true");
    if (op.fresh) o.raw(",\"fresh\":true");
    o.raw("}}");
  }
}

// Counters: a sample that repeats its track's last written value is left out.
void write_counters(Out& o, const PipelineResult& r, const std::vector<uint32_t>& track_pid) {
  std::vector<uint64_t> last(r.counter_tracks.size(), UINT64_MAX);
  for (const auto& c : r.counter_samples) {
    if (last[c.track] == c.value) continue;
    last[c.track] = c.value;
    const CounterTrack& ct = r.counter_tracks[c.track];
    const bool pool = ct.kind == CounterTrack::Kind::kPoolBytes;
    o.begin_event();
    o.raw("\"name\":");
    o.str(pool ? std::string_view(ct.name) : std::string_view("ops"));
    o.raw(",\"ph\":\"C\",\"ts\":");
    o.us(to_ns(c.time));
    o.key("pid");
    o.num(track_pid[c.track]);
    o.raw(pool ? ",\"args\":{\"bytes\":" : ",\"args\":{\"waiting\":");
    o.num(c.value);
    o.raw("}}");
  }
}

}  // namespace

void write_chrome_trace(const std::function<void(std::string_view)>& sink, const PipelineResult& r,
                        const ModelCosts& costs, const TimelineWriteOptions& opt) {
  Out o(sink);
  const Marked m = marked(r);
  const std::vector<uint32_t> track_pid = write_processes(o, r, m);
  write_markers(o, r, m);
  write_ops(o, r, costs, opt);
  write_counters(o, r, track_pid);
  o.end_array();
}

void write_chrome_trace(const std::string& path, const PipelineResult& r, const ModelCosts& costs,
                        const TimelineWriteOptions& opt) {
  warn_if_timeline_large(path, estimate_timeline_size(r, opt.label_args), opt.warn_above_bytes);
  AtomicFile f(path);
  write_chrome_trace([&](std::string_view s) { f.write(s); }, r, costs, opt);
  f.commit();
}

}  // namespace moesim
