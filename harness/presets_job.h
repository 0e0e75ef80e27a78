// `moesim presets [--json] [-o OUT]`: the bundled model presets and hardware profiles (data/models,
// data/hardware) with their key numbers. The job returns them as data; cli/presets.cpp prints the tables.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/json_io.h"

namespace moesim::harness {

// The storage types whose all-weights size each model lists, in the tables' column order.
const std::vector<std::string>& presets_storage_types();

struct PresetModel {
  std::string name, stored_as;  // stored_as: the preset's quantization, or its dtype
  uint32_t layers = 0, experts = 0, top_k = 0;
  uint64_t expert_bytes = 0, total_params = 0, active_params = 0, weight_bytes = 0, kv_bytes_per_token = 0;
  // All weights' bytes if every weight were stored as the type (rows that hold no whole block fall back as
  // llama.cpp does, core/model_spec.cpp), per presets_storage_types() entry.
  std::map<std::string, uint64_t> weight_bytes_as;
};

struct PresetHardware {
  std::string name, display_name;
  uint32_t cpu_cores = 0;
  double ssd_read_bandwidth = 0;  // bytes/s
  uint64_t memory_capacity = 0;
};

struct PresetsResult {
  std::string data_dir;
  std::vector<PresetModel> models;
  std::vector<PresetHardware> hardware;
  Json doc;  // the document `presets --json` prints: header, models, hardware
};

// Loads every bundled preset (moesim::Error naming a file that does not load).
PresetsResult list_presets_result();

}  // namespace moesim::harness
