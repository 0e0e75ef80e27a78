// libFuzzer target for the safetensors parser (exec/safetensors.h): any byte string must parse or fail
// with moesim::Error; every tensor the parser accepts must lie inside the input, which casting it to BF16
// checks (an over-read would be reported by ASan).
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "exec/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto img = moesim::exec::parse_safetensors(data, size, "fuzz.safetensors");
    std::vector<uint16_t> out;
    for (const auto& t : img.tensors) {
      if (t.data < data || t.data + t.size_bytes > data + size) __builtin_trap();
      if (!t.dtype) continue;
      out.resize(t.elements);
      moesim::exec::tensor_to_bf16(t, out.data());
    }
  } catch (const moesim::Error&) {
  }
  return 0;
}
