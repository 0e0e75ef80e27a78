#include "core/residency.h"

namespace moesim {

const char* memory_tier_name(MemoryTier t) {
  switch (t) {
    case MemoryTier::kUnified:
      return "unified";
    case MemoryTier::kDevice:
      return "device";
    case MemoryTier::kHost:
      return "host";
  }
  return "?";
}

}  // namespace moesim
