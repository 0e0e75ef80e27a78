#include "kernels/expert_ffn.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace moesim::kernels {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapConst = Eigen::Map<const RowMat>;
using Map = Eigen::Map<RowMat>;

// Rows widened per block: small enough that the FP32 tile stays in L2 for typical widths.
constexpr uint64_t kTileBytes = 96 * 1024;

struct Scratch {
  std::vector<float> tile;
  std::vector<float> g, u;
};
thread_local Scratch scratch;

inline void widen(const uint16_t* in, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(out + i, &bits, sizeof(float));
  }
}

// y (tokens x rows, row stride ldy) = x (tokens x cols) * W^T, W rows widened block by block.
void gemm_rows(const uint16_t* w, uint64_t rows, uint64_t cols, const float* x, float* y, uint64_t ldy,
               uint32_t tokens) {
  if (rows == 0 || cols == 0 || tokens == 0) return;
  const uint64_t block = std::max<uint64_t>(1, kTileBytes / (cols * sizeof(float)));
  auto& tile = scratch.tile;
  tile.resize(block * cols);
  MapConst X(x, tokens, static_cast<Eigen::Index>(cols));
  Eigen::Map<RowMat, 0, Eigen::OuterStride<>> Y(y, tokens, static_cast<Eigen::Index>(rows),
                                                Eigen::OuterStride<>(static_cast<Eigen::Index>(ldy)));
  for (uint64_t r0 = 0; r0 < rows; r0 += block) {
    const uint64_t nr = std::min(block, rows - r0);
    widen(w + r0 * cols, nr * cols, tile.data());
    MapConst T(tile.data(), static_cast<Eigen::Index>(nr), static_cast<Eigen::Index>(cols));
    Y.middleCols(static_cast<Eigen::Index>(r0), static_cast<Eigen::Index>(nr)).noalias() = X * T.transpose();
  }
}

}  // namespace

void dense_gemm(const uint16_t* w, uint64_t rows, uint64_t cols, const float* x, float* y, uint32_t tokens) {
  gemm_rows(w, rows, cols, x, y, rows, tokens);
}

void expert_ffn(const uint16_t* gate, const uint16_t* up, const uint16_t* down, uint32_t hidden,
                uint32_t inter, const float* x, float* y, uint32_t tokens) {
  if (tokens == 0) return;
  auto& g = scratch.g;
  auto& u = scratch.u;
  g.resize(static_cast<size_t>(tokens) * inter);
  u.resize(static_cast<size_t>(tokens) * inter);
  gemm_rows(gate, inter, hidden, x, g.data(), inter, tokens);
  gemm_rows(up, inter, hidden, x, u.data(), inter, tokens);
  for (size_t i = 0; i < g.size(); ++i) {
    const float a = g[i];
    g[i] = a / (1.0f + std::exp(-a)) * u[i];  // SiLU(gate) * up
  }
  // gemm_rows reuses the tile scratch only; g is not touched by it.
  gemm_rows(down, hidden, inter, g.data(), y, hidden, tokens);
}

}  // namespace moesim::kernels
