// TEMPORARY stand-in: replaced by the full implementation.
#include "serving/zipmoe_residency.h"

#include "core/error.h"

namespace moesim::serving {
std::unique_ptr<Residency> make_zipmoe_residency(const ZipMoePoolsConfig&) {
  throw Error("--system zipmoe: the pool residency is not built yet");
}
}  // namespace moesim::serving
