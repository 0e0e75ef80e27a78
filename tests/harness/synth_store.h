// A small expert store for the tests of the store commands: synthetic weights of tiny-moe's shape (256 x 128
// SwiGLU experts; 1 layer x 2 experts x 3 tensors, BF16 Gaussian of std 0.02) packed with zstd:3 into 2
// E-chunk shards per tensor, through the same jobs as `moesim weights synth` and `moesim pack`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "harness/pack_job.h"
#include "harness/weights_synth_job.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"

namespace moesim::test {

inline constexpr uint64_t kSynthStoreTensors = 6;
inline constexpr uint64_t kSynthStoreElements = 128 * 256;  // per tensor

// Writes the weights `weights` (seed `seed`) and, unless `store` is empty, the store packed from them.
inline void make_synth_store(const std::string& weights, const std::string& store, uint64_t seed = 1) {
  harness::WeightsSynthArgs w;
  w.model = test_data("models/tiny-moe.json");
  w.layers = 1;
  w.experts = 2;
  w.seed = seed;
  w.out = weights;
  harness::weights_synth(w);
  if (store.empty()) return;
  harness::PackArgs p;
  p.weights = weights;
  p.codec = "zstd:3";
  p.shards = 2;
  p.threads = 1;
  p.out = store;
  harness::pack_store(p);
}

// A test folder holding w.safetensors and s.store, the store packed from those weights.
class SynthStoreTest : public TestDir {
 protected:
  void SetUp() override {
    TestDir::SetUp();
    make_synth_store(path("w.safetensors"), path("s.store"));
  }
};

}  // namespace moesim::test
