// libFuzzer target: the buddy profile reader (`moesim buddy profile`'s output, read by the buddy routing
// policy). moesim::Error is expected for bad input; anything else is a bug. A profile that loads must hold
// in-range buddy ids and 101 percentiles per layer, which the policy indexes without further checks.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/json_io.h"
#include "traces/buddy_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto p = moesim::traces::buddy_profile_from_json(moesim::parse_json_text(text, "fuzz.json"), "fuzz.json");
    if (p.layer.size() != p.layers) std::abort();
    for (const auto& l : p.layer) {
      if (l.buddies.size() != p.experts || l.tae_percentiles.size() != 101) std::abort();
      for (const auto& list : l.buddies)
        for (auto b : list)
          if (b >= p.experts) std::abort();
    }
  } catch (const moesim::Error&) {
  }
  return 0;
}
