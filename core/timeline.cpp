#include "core/timeline.h"

#include <map>

#include "core/atomic_file.h"

namespace moesim {

uint32_t timeline_tid(ResourceClass r, uint32_t unit) {
  return 1000 * (static_cast<uint32_t>(r) + 1) + unit;
}

namespace {

std::string unit_name(ResourceClass r, uint32_t unit) {
  switch (r) {
    case ResourceClass::kSsd:
      return "ssd slot " + std::to_string(unit);
    case ResourceClass::kCpu:
      return "cpu worker " + std::to_string(unit);
    case ResourceClass::kGpu:
      return "gpu stream " + std::to_string(unit);
    case ResourceClass::kLink:
      return "link " + std::to_string(unit);
  }
  return "?";
}

std::string event_name(const Op& op) {
  std::string n = op_kind_name(op.kind);
  if (op.layer != kNoLabel) n += " L" + std::to_string(op.layer);
  if (op.expert != kNoLabel) n += " E" + std::to_string(op.expert);
  if (op.tensor != kNoLabel) n += " T" + std::to_string(op.tensor);
  if (op.shard != kNoLabel) n += " S" + std::to_string(op.shard);
  return n;
}

}  // namespace

Json chrome_trace_json(const std::vector<TimelineEvent>& events) {
  Json arr = Json::array();
  std::map<uint32_t, std::string> threads;
  for (const auto& e : events)
    threads.emplace(timeline_tid(e.op.resource, e.timing.unit), unit_name(e.op.resource, e.timing.unit));
  for (const auto& [tid, name] : threads) {
    Json m;
    m["name"] = "thread_name";
    m["ph"] = "M";
    m["pid"] = 1;
    m["tid"] = tid;
    m["args"] = Json{{"name", name}};
    arr.push_back(m);
  }
  for (const auto& e : events) {
    Json x;
    x["name"] = event_name(e.op);
    x["cat"] = op_kind_name(e.op.kind);
    x["ph"] = "X";
    x["ts"] = e.timing.start * 1e6;
    x["dur"] = (e.timing.end - e.timing.start) * 1e6;
    x["pid"] = 1;
    x["tid"] = timeline_tid(e.op.resource, e.timing.unit);
    Json args;
    args["step"] = e.step;
    args["bytes"] = e.op.bytes;
    if (e.op.tokens) args["tokens"] = e.op.tokens;
    x["args"] = args;
    arr.push_back(x);
  }
  return arr;
}

void write_chrome_trace(const std::string& path, const std::vector<TimelineEvent>& events) {
  write_file_atomic(path, chrome_trace_json(events).dump() + "\n");
}

}  // namespace moesim
