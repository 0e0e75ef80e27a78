// libFuzzer target: the model reader (JSON text -> schema checks -> ModelSpec). moesim::Error is expected for
// bad input; anything else is a bug. A model that loads must keep its derived sizes in range: the loader's
// bounds exist so that bytes per expert and per layer cannot overflow.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/json_io.h"
#include "core/model_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const moesim::ModelSpec m = moesim::model_from_json(moesim::parse_json_text(text, "fuzz.json"), "fuzz.json");
    if (m.num_layers < 1 || m.moe_layers > m.num_layers || m.top_k > m.routed_experts || m.expert_tensors.empty())
      std::abort();
    if (m.bytes_per_expert() == 0 || m.bytes_per_expert() > (uint64_t{1} << 53)) std::abort();
    (void)m.dense_bytes_per_layer();
  } catch (const moesim::Error&) {
  }
  return 0;
}
