#include "core/run_info.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "moesim_build_info.h"

namespace moesim {

bool build_is_optimized() {
  std::string t = MOESIM_BUILD_TYPE;
#ifdef NDEBUG
  return t == "Release" || t == "RelWithDebInfo" || t == "MinSizeRel";
#else
  return false;
#endif
}

void warn_if_unoptimized() {
  static std::atomic<bool> warned{false};  // sweep points call it from several threads
  if (build_is_optimized() || warned.exchange(true)) return;
  std::fprintf(stderr, "moesim: warning: this is a %s build, not optimized: throughput and timings are not "
                       "representative (configure with -DCMAKE_BUILD_TYPE=Release)\n", MOESIM_BUILD_TYPE);
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    // x86: "model name"; many ARM kernels: "Model" or "Hardware" (a board name); others print "CPU part"
    // codes only, and the architecture stands in.
    for (const char* key : {"model name", "Model", "Hardware"}) {
      if (line.rfind(key, 0) != 0) continue;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t b = line.find_first_not_of(" \t", colon + 1);
      if (b != std::string::npos) return line.substr(b);
    }
  }
#if defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

std::string gpu_name() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    std::ifstream in(e.path() / "information");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("Model:", 0) == 0) {
        auto p = line.find_first_not_of(" \t", 6);
        return p == std::string::npos ? "NVIDIA GPU" : line.substr(p);
      }
  }
  return "none";
}

Json run_header(const std::string& command, const Json& config, std::optional<uint64_t> seed) {
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  std::time_t now = std::time(nullptr);
  char date[32];
  std::tm utc{};
  ::gmtime_r(&now, &utc);  // not gmtime: sweep points write their headers from several threads at once
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  Json h;
  h["moesim"] = {{"version", MOESIM_VERSION}, {"commit", MOESIM_GIT_DESCRIBE},
                 {"build_type", MOESIM_BUILD_TYPE}, {"optimized", build_is_optimized()},
                 {"compiler", MOESIM_CXX_COMPILER}};
  h["command"] = command;
  h["date"] = date;
  h["host"] = {{"name", host}, {"cpu", cpu_model_name()},
               {"cores", std::thread::hardware_concurrency()}, {"gpu", gpu_name()}};
  h["seed"] = seed ? Json(*seed) : Json(nullptr);
  h["config"] = config;
  return h;
}

}  // namespace moesim
