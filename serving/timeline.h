// Timelines in the Chrome trace event format (docs/architecture.md §7) that Perfetto (ui.perfetto.dev) and
// chrome://tracing open: a JSON array, one event per line, timestamps in microseconds with nanosecond
// precision (integer nanoseconds in the simulation's clock, so an op's end is exactly the next one's start).
// docs/timeline.md describes every track; in short (the resources' processes and threads are named by
// core/op_graph.h's resource vocabulary):
//
//   process "steps"         thread "steps": one slice per workload step ("step 12 decode (4 tokens)");
//                           thread "layers": one slice per layer invocation ("L5 decode")
//   process "expert cache"  one counter per memory pool: bytes in use
//   process "I/O thread"    counter: reads waiting to be issued
//   process "SSD"           one thread per SSD slot (ssd_read slices); counter: requests waiting for a slot
//   process "CPU workers"   one thread per worker (decompress); counter: ops waiting
//   process "link"          one thread per link (transfer); counter: ops waiting
//   process "GPU"           one thread per stream (dense_compute, expert_compute, recover); counter
//
// Op slices are named "KIND L<layer> E<expert> <tensor>[.sm|.e<shard>]" ("ssd_read L0 E8 gate_proj"), the
// tensor named by ModelCosts::tensor_names; args repeat the labels and add step, bytes and tokens.
//
// Size: about 170 bytes per op (docs/timeline.md has measurements). A window of steps
// (PipelineOptions::timeline_first_step/last_step, from
// --timeline-steps A:B) keeps the rest out of memory and out of the file; estimate_timeline_size() and
// warn_if_timeline_large() tell the user before a file above 100 MB is written.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/workload.h"
#include "serving/pipeline.h"

namespace moesim {

// Workload steps first..last, inclusive, 0-based (the pipeline's step indices).
struct TimelineWindow {
  uint32_t first = 0, last = UINT32_MAX;
};

// --timeline-steps: "A:B" = steps A..B, "A:" = from A to the end, ":B" = steps 0..B. Throws
// moesim::UsageError("--timeline-steps: ...") for anything else (empty, no colon, not a number, B < A).
TimelineWindow parse_timeline_steps(const std::string& text);
// Throws moesim::UsageError("--timeline-steps: ...") when the window starts past the workload's last step
// (it would record nothing). A window that ends past it is fine: it records to the end.
void check_timeline_window(const TimelineWindow& window, size_t workload_steps);

inline constexpr uint64_t kTimelineWarnBytes = 100'000'000;  // 100 MB

struct TimelineSize {
  uint64_t events = 0;
  uint64_t bytes = 0;
  uint32_t first_step = 0;           // the window, clipped to the workload's steps
  uint32_t steps = 0;                // steps in it (0: the window lies past the workload's end)
  bool lower_bound = false;          // estimated with no misses: the file will be at least this large
  std::vector<uint64_t> step_bytes;  // [steps] of the window, what each adds (a prefill step adds most)
};

// Before a run: events and bytes of the timeline of `window` if a fraction `miss_rate` of the lookups
// miss. miss_rate 0 gives a lower bound (every lookup hits: no reads), 1 an upper bound; with the run's
// real miss rate it comes within ~10% of the file on the bundled traces. label_args: as
// TimelineWriteOptions::label_args.
TimelineSize estimate_timeline_size(const WorkloadView& w, const ModelCosts& costs,
                                    const TimelineWindow& window, const TensorLayout& layout = {},
                                    double miss_rate = 0.0, bool label_args = true);
// After a run: from what was recorded (exact event counts, average bytes per event kind).
TimelineSize estimate_timeline_size(const PipelineResult& r, bool label_args = true);

// moesim::warn("timeline PATH will be ~N MB (M events); cut it with --timeline-steps A:B (e.g. ...)") when
// size.bytes > threshold ("at least ~N MB" for a lower bound), suggesting a window of about `threshold`
// bytes. Returns whether it warned.
bool warn_if_timeline_large(const std::string& path, const TimelineSize& size,
                            uint64_t threshold = kTimelineWarnBytes);

struct TimelineWriteOptions {
  uint64_t warn_above_bytes = kTimelineWarnBytes;  // 0: no check (the caller warned before the run)
  // Op args repeat the labels of the name (layer, expert, tensor) so that they can be filtered on; false
  // leaves them in the name only (about 15% smaller files).
  bool label_args = true;
};

// Writes the timeline of a run recorded with PipelineOptions::record_timeline, streaming, atomically
// (base/atomic_file.h); warns first when it will be large (see warn_if_timeline_large). The same
// inputs give byte-identical files.
void write_chrome_trace(const std::string& path, const PipelineResult& r, const ModelCosts& costs,
                        const TimelineWriteOptions& opt = {});
// The same document, handed to `sink` in pieces of about 1 MiB.
void write_chrome_trace(const std::function<void(std::string_view)>& sink, const PipelineResult& r,
                        const ModelCosts& costs, const TimelineWriteOptions& opt = {});

}  // namespace moesim
