// libFuzzer target: the readers of a sweep folder's own JSON files, the manifest (read_manifest) and a finished
// point's file (read_point_file). Both take a path, so each input is written to a scratch folder first.
// moesim::Error is expected for bad input; anything else is a bug.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/sweep_spec.h"
#include "base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  // The scratch folder goes when the process ends (a static's destructor runs at exit).
  struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("moesim_fuzz_sweep_outputs_" + std::to_string(getpid()));
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  const fs::path& dir = scratch.dir;
  fs::create_directories(dir / "points");
  const std::string text(reinterpret_cast<const char*>(data), size);
  const fs::path point = dir / "points" / "0123456789abcdef.json";
  std::ofstream(dir / "manifest.json", std::ios::binary | std::ios::trunc) << text;
  std::ofstream(point, std::ios::binary | std::ios::trunc) << text;
  try {
    (void)moesim::harness::sweep::read_manifest(dir);
  } catch (const moesim::Error&) {
  }
  try {
    (void)moesim::harness::sweep::read_point_file(point);
  } catch (const moesim::Error&) {
  }
  return 0;
}
