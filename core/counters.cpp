#include "core/counters.h"

namespace moesim {

Json prefetch_counters_json(const PrefetchCounters& p, uint64_t lookups, bool timed) {
  Json pj;
  pj["proposed"] = p.proposed;
  pj["already_resident"] = p.already_resident;
  pj["declined"] = p.declined;
  pj["issued"] = p.issued;
  pj["useful"] = p.useful;
  pj["late"] = timed ? Json(p.late) : Json(nullptr);
  pj["useless"] = p.useless;
  pj["accuracy"] = fraction_or_null(p.useful, p.issued);  // issued loads that their expert's next lookup used
  pj["coverage"] = fraction_or_null(p.useful, lookups);   // the run's lookups that a prefetch had loaded for them
  pj["bytes"] = p.bytes;
  pj["useless_bytes"] = p.useless_bytes;
  return pj;
}

Json cache_counters_json(const CacheCounters& c, bool read_bytes_known) {
  Json j;
  j["invocations"] = c.invocations;
  j["lookups"] = c.lookups;
  j["hits"] = c.hits;
  j["misses"] = c.lookups - c.hits;
  j["hit_rate"] = fraction_or_null(c.hits, c.lookups);
  j["decode_lookups"] = c.decode_lookups;
  j["decode_hits"] = c.decode_hits;
  j["decode_hit_rate"] = fraction_or_null(c.decode_hits, c.decode_lookups);
  j["read_bytes"] = read_bytes_known ? Json(c.read_bytes) : Json(nullptr);
  j["evictions"] = c.evictions;
  j["over_capacity_invocations"] = c.over_capacity_invocations;
  j["max_over_capacity"] = c.max_over_capacity;
  return j;
}

}  // namespace moesim
