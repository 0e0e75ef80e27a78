#include "traces/trace_summary.h"

#include <vector>

namespace moesim::traces {

Json trace_summary_json(const Trace& t, const std::string& path, const LookupStream& batch1) {
  const TraceInfo& info = t.info();
  std::vector<std::string> optional;
  if (t.has_weights()) optional.push_back("weights");
  if (t.has_logits()) optional.push_back("logits");
  Json j = Json::object();
  j["path"] = path;
  j["model"] = info.model;
  j["synthetic"] = info.synthetic;
  j["layers"] = info.layers;
  j["experts"] = info.experts;
  j["top_k"] = info.top_k;
  j["sequences"] = t.sequence_ids().size();
  j["prefill_tokens"] = t.tokens(Phase::kPrefill);
  j["decode_tokens"] = t.tokens(Phase::kDecode);
  j["records"] = t.records();
  j["missing_cells"] = info.missing_cells;
  j["invocations"] = batch1.invocations();
  j["lookups"] = batch1.lookups();
  j["decode_lookups"] = batch1.decode_lookups();
  j["optional_columns"] = optional;
  j["expert_bytes"] = info.expert_bytes.empty() ? Json(nullptr) : Json(info.expert_bytes);
  j["provenance"] = info.provenance;
  return j;
}

}  // namespace moesim::traces
