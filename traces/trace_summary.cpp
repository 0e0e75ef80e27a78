#include "traces/trace_summary.h"

#include <vector>

namespace moesim::traces {

Json trace_summary_json(const Trace& t, const std::string& path, const LookupStream& batch1) {
  TraceCounts n;
  n.sequences = t.sequence_ids().size();
  n.prefill_tokens = t.tokens(Phase::kPrefill);
  n.decode_tokens = t.tokens(Phase::kDecode);
  n.records = t.records();
  n.invocations = batch1.invocations();
  n.lookups = batch1.lookups();
  n.decode_lookups = batch1.decode_lookups();
  n.has_weights = t.has_weights();
  n.has_logits = t.has_logits();
  return trace_summary_json(t.info(), path, n);
}

Json trace_summary_json(const TraceInfo& info, const std::string& path, const TraceCounts& n) {
  std::vector<std::string> optional;
  if (n.has_weights) optional.push_back("weights");
  if (n.has_logits) optional.push_back("logits");
  Json j = Json::object();
  j["path"] = path;
  j["model"] = info.model;
  j["synthetic"] = info.synthetic;
  j["layers"] = info.layers;
  j["experts"] = info.experts;
  j["top_k"] = info.top_k;
  j["sequences"] = n.sequences;
  j["prefill_tokens"] = n.prefill_tokens;
  j["decode_tokens"] = n.decode_tokens;
  j["records"] = n.records;
  j["missing_cells"] = info.missing_cells;
  j["invocations"] = n.invocations;
  j["lookups"] = n.lookups;
  j["decode_lookups"] = n.decode_lookups;
  j["optional_columns"] = optional;
  j["expert_bytes"] = info.expert_bytes.empty() ? Json(nullptr) : Json(info.expert_bytes);
  j["provenance"] = info.provenance;
  return j;
}

}  // namespace moesim::traces
