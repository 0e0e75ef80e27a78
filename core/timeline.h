// Timelines in the Chrome trace event format (ARCHITECTURE.md §7), which Perfetto and chrome://tracing
// open: a JSON array of complete events {"name","cat","ph":"X","ts","dur","pid","tid","args"} with
// timestamps in microseconds, one tid per resource unit (SSD slot, CPU worker, GPU stream, link), each
// named by a thread_name metadata event ("ph":"M"). Written atomically (core/atomic_file.h).
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/pipeline.h"

namespace moesim {

// The thread id of a resource unit: 1000 * (resource class + 1) + unit.
uint32_t timeline_tid(ResourceClass r, uint32_t unit);
Json chrome_trace_json(const std::vector<TimelineEvent>& events);
void write_chrome_trace(const std::string& path, const std::vector<TimelineEvent>& events);

}  // namespace moesim
