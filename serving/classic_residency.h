// TEMPORARY stand-in (integrator's local copy; replaced by the classic helper's version).
#pragma once
#include <memory>
#include <string>
#include "core/eviction.h"
#include "core/residency.h"
namespace moesim::serving {
std::unique_ptr<Residency> make_classic_residency(const std::string& eviction_spec, const CacheConfig& device_cfg,
                                                  MemoryTier tier, const CacheConfig* host_cfg);
}
