// libFuzzer target for the expert-store reader (exec/store_reader.h): any byte string, written to a file,
// must either open and recover every tensor or fail with moesim::Error -- never crash, hang, over-read or
// allocate more than the file size implies (the index validation bounds every shape by the file's bytes).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/error.h"
#include "exec/store_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/moesim_store_reader_fuzz." + std::to_string(::getpid());
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    const moesim::exec::StoreReader r(path);
    std::vector<uint16_t> out;
    for (const auto& e : r.entries()) {
      out.resize(e.elements);
      r.recover(e, out.data(), 2);
    }
  } catch (const moesim::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
