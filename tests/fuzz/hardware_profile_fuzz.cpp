// libFuzzer target: the hardware profile reader (JSON text -> schema checks -> HardwareProfile), with and
// without the provenance rule. moesim::Error is expected for bad input; anything else (an nlohmann exception,
// a crash) is a bug. A profile that loads must give positive bandwidths and at least one core.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "core/hardware_profile.h"
#include "base/json_io.h"
#include "base/warnings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  moesim::set_warnings_printed(false);
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (bool strict : {true, false}) {
    try {
      const moesim::HardwareProfile h = moesim::hardware_from_json(moesim::parse_json_text(text, "fuzz.json"),
                                                                   "fuzz.json", strict);
      if (!(h.ssd_read_bandwidth > 0) || !(h.memory_bandwidth > 0) || h.cpu_cores < 1 || h.ssd_queue_depth < 1)
        std::abort();
    } catch (const moesim::Error&) {
    }
  }
  moesim::clear_warnings();
  return 0;
}
