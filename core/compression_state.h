// Compression states of one expert (ZipMoE §3.2 and Definition B.2).
//
// ZipMoE splits each BF16 tensor into sign-mantissa bits (the SM-chunk, incompressible, about half of
// the tensor) and exponent bits compressed into K shards (the E-chunks). Each component of an expert may
// be cached separately, which gives the expert its state:
//   F  full tensors resident in the GPU-visible pool (a cache hit: compute only)
//   C  compressed-expert: both E-chunks and SM-chunks cached (decompress + recover, no I/O)
//   S  SM-expert: SM-chunks cached (read E-chunks, decompress, recover)
//   E  E-expert: E-chunks cached (read SM-chunks; decompress in parallel; recover)
//   M  missed: nothing cached (read everything)
// The full-tensor offloading baseline stores experts uncompressed and only ever sees F and M.
#pragma once

#include <cstdint>

namespace moesim {

enum class ExpertState : uint8_t { kMissed = 0, kFull, kCompressed, kSM, kE };

inline const char* expert_state_name(ExpertState s) {
  switch (s) {
    case ExpertState::kMissed:
      return "M";
    case ExpertState::kFull:
      return "F";
    case ExpertState::kCompressed:
      return "C";
    case ExpertState::kSM:
      return "S";
    case ExpertState::kE:
      return "E";
  }
  return "?";
}

// Which components of an expert are resident; state() names the combination (F wins over the rest).
struct ResidentComponents {
  bool full = false;
  bool sm_chunks = false;
  bool e_chunks = false;

  ExpertState state() const {
    if (full) return ExpertState::kFull;
    if (sm_chunks && e_chunks) return ExpertState::kCompressed;
    if (sm_chunks) return ExpertState::kSM;
    if (e_chunks) return ExpertState::kE;
    return ExpertState::kMissed;
  }
};

// How experts are stored on the SSD: whole tensors (the offloading baseline) or ZipMoE's split.
struct TensorLayout {
  bool compressed = false;   // false: one read of the whole tensor
  uint32_t shards = 1;       // K: E-chunk shards per tensor (decompressed in parallel)
  double sm_fraction = 0.5;  // SM-chunk bytes / tensor bytes (sign + 7 mantissa bits of BF16)
  double e_ratio = 1.0;      // rho: compressed exponent bytes / raw exponent bytes
};

}  // namespace moesim
