#include "exec/weight_stats.h"

#include <atomic>

#include "base/parallel.h"
#include "kernels/bf16.h"
#include "kernels/codec.h"

namespace moesim::exec {

double WeightStats::codec_ratio(size_t codec) const {
  if (all.total == 0) return 0;
  return static_cast<double>(codec_e_bytes.at(codec) + all.total) / (2.0 * static_cast<double>(all.total));
}

WeightStats compute_weight_stats(const WeightSource& w, const std::vector<std::string>& codecs,
                                 unsigned threads, const std::function<void(uint64_t, uint64_t)>& progress) {
  WeightStats s;
  std::vector<std::unique_ptr<kernels::Codec>> impl;
  for (const auto& c : codecs) {
    impl.push_back(kernels::make_codec(c));
    s.codecs.push_back(impl.back()->name());
  }
  std::vector<const TensorView*> views;
  for (const auto& t : w.tensors()) {
    if (!t.dtype) {
      ++s.skipped;
      continue;
    }
    views.push_back(&t);
  }
  uint64_t total_bytes = 0;
  for (const TensorView* t : views) total_bytes += 2 * t->elements;
  std::atomic<uint64_t> done_bytes{0};
  s.tensors.resize(views.size());
  parallel_for(views.size(), threads, [&](size_t i) {
    const TensorView& t = *views[i];
    TensorExponentStats& ts = s.tensors[i];
    ts.name = t.name;
    ts.dtype = t.dtype_name;
    ts.shape = t.shape;
    const size_t n = static_cast<size_t>(t.elements);
    std::vector<uint16_t> bf16(n);
    tensor_to_bf16(t, bf16.data());
    std::vector<uint8_t> exps(n), sm(n);
    kernels::split_bf16(bf16.data(), n, exps.data(), sm.data());
    ts.hist.add_exponents(exps.data(), n);
    for (const auto& c : impl)
      ts.codec_e_bytes.push_back(n == 0 ? 0 : kernels::compress_to_vector(*c, exps.data(), n).size());
    const uint64_t done =
        done_bytes.fetch_add(2 * t.elements, std::memory_order_relaxed) + 2 * t.elements;
    if (progress) progress(done, total_bytes);
  });
  s.codec_e_bytes.assign(codecs.size(), 0);
  for (const auto& ts : s.tensors) {
    s.all.merge(ts.hist);
    for (size_t c = 0; c < codecs.size(); ++c) s.codec_e_bytes[c] += ts.codec_e_bytes[c];
  }
  return s;
}

}  // namespace moesim::exec
