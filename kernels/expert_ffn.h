// Expert compute on the CPU (exec's real compute when no GPU runs it, and `moesim calibrate`'s compute
// microbenchmark): one routed expert's SwiGLU FFN over its tokens, with BF16 weights widened to FP32 and
// FP32 accumulation, and a plain BF16-weight GEMM for the dense part of a layer.
//
//   expert_ffn:  y_t = W_down (silu(W_gate x_t) * (W_up x_t))   for t < tokens
//                W_gate, W_up: [inter, hidden] row-major BF16 (the checkpoint's layout, as stored by
//                `moesim pack`); W_down: [hidden, inter]; x, y: tokens x hidden FP32, token-major.
//   dense_gemm:  y_t = W x_t, W: [rows, cols] BF16 row-major; x: tokens x cols, y: tokens x rows (FP32).
//
// The weights are widened a block of rows at a time into a per-thread scratch tile and multiplied with
// Eigen, so each weight is read from memory once per call whatever the token count: a decode token (one
// token) is memory-bound, a prefill batch compute-bound, as the simulator's roofline assumes
// (core/cost_model.h). Single-threaded: exec runs one op per worker. Portable C++ (the widening loop is
// vectorized by the compiler on x86-64 and aarch64).
//
// Thread safety: the functions may run concurrently on different threads (scratch is thread-local).
#pragma once

#include <cstdint>

namespace moesim::kernels {

void expert_ffn(const uint16_t* gate, const uint16_t* up, const uint16_t* down, uint32_t hidden,
                uint32_t inter, const float* x, float* y, uint32_t tokens);

void dense_gemm(const uint16_t* w, uint64_t rows, uint64_t cols, const float* x, float* y, uint32_t tokens);

// FLOPs of expert_ffn (2 per weight per token; the activation is not counted).
inline double expert_ffn_flops(uint32_t hidden, uint32_t inter, uint32_t tokens) {
  return 2.0 * 3.0 * static_cast<double>(hidden) * inter * tokens;
}

}  // namespace moesim::kernels
