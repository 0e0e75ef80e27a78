// A distribution of durations summarised the one way every output reports it: count, mean, p50, p90, p99 and
// max, percentiles by the nearest-rank method (the smallest value with at least p% of the values at or below
// it, so they are actual samples), the mean summed in sorted order (a fixed order: same values, same bits).
#pragma once

#include <cstdint>
#include <vector>

#include "base/json_io.h"

namespace moesim {

struct Distribution {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

Distribution summarize(std::vector<double> values);  // all zero when empty
double percentile_nearest_rank(const std::vector<double>& sorted, double p);
Json to_json(const Distribution& d);  // seconds; the statistics are null when count is 0

}  // namespace moesim
