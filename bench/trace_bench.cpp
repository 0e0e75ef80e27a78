// Trace I/O throughput: importing the bundled qwen3 route_trace CSV (records/s), opening (mmap + full
// validation) a ~10-million-lookup .mtr, one pass over its experts column, and build_lookup_stream.
// The large trace is made in setup by tiling the real trace's decode records with step offsets (the
// same routing repeated; not a new distribution), written to a temporary .mtr and mmap'd.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "base/atomic_file.h"
#include "traces/lookup_stream.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

namespace {

using namespace moesim::traces;

const std::string kQwen = std::string(MOESIM_SOURCE_DIR) + "/data/traces/qwen3-30b-a3b.route.csv";
constexpr uint64_t kTargetLookups = 10'000'000;

struct Big {
  std::string path;
  Trace trace;  // mmap'd
  ~Big() { std::filesystem::remove(path); }
};

Big& big() {
  static Big b = [] {
    const Trace q = load_trace(kQwen);
    std::vector<size_t> decode;
    uint32_t steps = 0;
    for (size_t r = 0; r < q.records(); ++r)
      if (q.phase(r) == Phase::kDecode) {
        decode.push_back(r);
        steps = std::max(steps, q.step(r) + 1);
      }
    const uint64_t per_tile = decode.size() * q.info().top_k;
    const uint64_t tiles = (kTargetLookups + per_tile - 1) / per_tile;
    TraceInfo info = q.info();
    info.provenance = {{"format", "tiled"}, {"source", kQwen}, {"tiles", tiles}};
    TraceBuilder tb(info, true, false, "tiled");
    std::vector<uint32_t> ex(q.info().top_k);
    for (uint64_t t = 0; t < tiles; ++t)
      for (size_t r : decode) {
        for (uint32_t s = 0; s < q.info().top_k; ++s) ex[s] = q.experts(r)[s];
        tb.add(0, Phase::kDecode, static_cast<uint32_t>(t * steps + q.step(r)), q.layer(r), ex, q.weights(r), {}, r);
      }
    Big out;
    out.path = (std::filesystem::temp_directory_path() / ("moesim_trace_bench_" + std::to_string(::getpid()) + ".mtr")).string();
    write_mtr(std::move(tb).finish(), out.path);
    out.trace = read_mtr(out.path);
    return out;
  }();
  return b;
}

void BM_ImportQwenRouteCsv(benchmark::State& state) {
  const std::string text = moesim::read_file(kQwen);
  size_t records = 0;
  for (auto _ : state) {
    const Trace t = import_bigmoe(text, kQwen);
    records = t.records();
    benchmark::DoNotOptimize(t.columns().next_use.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["records"] = static_cast<double>(records);
}
BENCHMARK(BM_ImportQwenRouteCsv)->Unit(benchmark::kMillisecond);

// Opening the big .mtr: mmap, checksum, and every validation pass (order, ids, next-use, missing cells).
void BM_OpenMtrValidated(benchmark::State& state) {
  const Big& b = big();
  for (auto _ : state) {
    const Trace t = read_mtr(b.path);
    benchmark::DoNotOptimize(t.records());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * b.trace.slots()));
  state.counters["lookups"] = static_cast<double>(b.trace.slots());
}
BENCHMARK(BM_OpenMtrValidated)->Unit(benchmark::kMillisecond);

// One pass over the experts column (with the layer column), counting uses per (layer, expert).
void BM_ScanExpertsColumn(benchmark::State& state) {
  const Trace& t = big().trace;
  const uint32_t k = t.info().top_k, E = t.info().experts;
  std::vector<uint32_t> count(size_t{t.info().layers} * E);
  const auto& c = t.columns();
  for (auto _ : state) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t r = 0; r < t.records(); ++r) {
      const uint32_t base = uint32_t{c.layer[r]} * E;
      for (uint32_t s = 0; s < k; ++s) ++count[base + c.experts[r * k + s]];
    }
    benchmark::DoNotOptimize(count.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * t.slots()));
}
BENCHMARK(BM_ScanExpertsColumn)->Unit(benchmark::kMillisecond);

void BM_BuildLookupStream(benchmark::State& state) {
  const Trace& t = big().trace;
  size_t lookups = 0;
  for (auto _ : state) {
    const LookupStream ls = build_lookup_stream(t, 1);
    lookups = ls.lookups();
    benchmark::DoNotOptimize(ls.next_use.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * lookups));
  state.counters["lookups"] = static_cast<double>(lookups);
}
BENCHMARK(BM_BuildLookupStream)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
