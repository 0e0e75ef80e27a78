// ZipMoE's split tensors (§3.1) as a load layout (serving/load_layout.h): each tensor is stored as its
// SM-chunk (sign and mantissa bits, sm_fraction of its bytes) and K compressed E-chunk shards (its exponents,
// rho of their raw bytes). The per-tensor DAG of Fig. 6:
//   to F:  E-chunk shard reads -> decompress each; SM-chunk read -> transfer -> recover (recover_on kGpu)
//          or -> recover -> transfer (recover_on kCpu; no transfer when experts compute on the CPU),
//          without the reads of the parts the cache holds (C: both, S: the SM-chunk, E: the E-chunks);
//          fused reads: each missing shard's read and decompression one kDecompress with Op::read_bytes
//          on a CPU worker (the prototype of §4), the SM-chunk read stays on the I/O thread;
//   to C, S or E (a prefetch that keeps parts compressed): only the SSD reads of the parts it will hold and
//          does not, never fused (nothing decompresses them).
// E-chunks are read before SM-chunks (§3.3). A shard's raw bytes are the exponent bytes split evenly (the
// first shards take the remainder), its read ceil(raw * rho), at least one byte when fused.
#pragma once

#include <memory>

#include "core/compression_state.h"
#include "serving/load_layout.h"

namespace moesim::serving {

// `layout.compressed` must be true; fused: ZipMoE's io=fused.
std::shared_ptr<const LoadLayout> zipmoe_loads(const TensorLayout& layout, bool fused_e_reads);

}  // namespace moesim::serving
