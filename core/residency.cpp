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

const char* memory_event_name(MemoryEvent::Kind k) {
  switch (k) {
    case MemoryEvent::Kind::kAdmit:
      return "admit";
    case MemoryEvent::Kind::kEvict:
      return "evict";
    case MemoryEvent::Kind::kDemote:
      return "demote";
    case MemoryEvent::Kind::kPromote:
      return "promote";
  }
  return "?";
}

}  // namespace moesim
