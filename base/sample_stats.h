// The mean and the median of a sample, one definition for every caller that summarises measured times
// (the cluster's calibration and validation, exec's microbenchmarks): 0 for an empty sample, so that a
// summary of no measurements reads as none rather than as NaN in a JSON report.
#pragma once

#include <vector>

namespace moesim {

double mean_of(const std::vector<double>& v);

// The middle value; for an even count the mean of the two middle values.
double median_of(std::vector<double> v);

}  // namespace moesim
