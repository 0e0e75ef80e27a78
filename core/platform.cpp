#include "core/platform.h"

#include <algorithm>

namespace moesim {

std::vector<double> runtime_quantiles(std::vector<double> samples) {
  std::vector<double> q;
  if (samples.empty()) return q;
  std::sort(samples.begin(), samples.end());
  q.reserve(kRuntimeQuantiles);
  for (size_t k = 0; k < kRuntimeQuantiles; ++k) {
    const auto rank = static_cast<size_t>((static_cast<double>(k) + 0.5) / kRuntimeQuantiles * static_cast<double>(samples.size()));
    q.push_back(samples[std::min(samples.size() - 1, rank)]);
  }
  return q;
}

}  // namespace moesim
