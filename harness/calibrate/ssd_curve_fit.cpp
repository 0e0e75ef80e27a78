#include "harness/calibrate/ssd_curve_fit.h"

#include <map>

namespace moesim::harness {

DepthCurveFit fit_queue_depth_curve(const std::vector<DepthSample>& samples) {
  std::map<uint32_t, std::pair<std::vector<double>, std::vector<double>>> by_depth;
  for (const DepthSample& s : samples) {
    if (s.depth == 0 || !(s.time_s > 0)) continue;
    auto& [x, y] = by_depth[s.depth];
    x.push_back(static_cast<double>(s.depth) * static_cast<double>(s.bytes));
    y.push_back(s.time_s);
  }
  DepthCurveFit out;
  for (const auto& [depth, xy] : by_depth) {
    if (xy.first.size() < 2) continue;
    Fit f = fit_line(xy.first, xy.second, false, true);
    if (!(f.slope > 0)) continue;  // the time does not grow with size: noise, nothing to fit
    if (f.intercept < 0) f = fit_line(xy.first, xy.second, true, true);
    out.curve.push_back(SsdDepthPoint{static_cast<double>(depth), f.intercept, 1.0 / f.slope});
    out.fits.push_back(f);
  }
  return out;
}

Json depth_curve_json(const std::vector<SsdDepthPoint>& curve) {
  Json points = Json::array();
  for (const SsdDepthPoint& p : curve)
    points.push_back(
        {{"depth", static_cast<uint64_t>(p.depth)}, {"latency", p.latency}, {"bandwidth", p.bandwidth}});
  return points;
}

}  // namespace moesim::harness
