// End-to-end tensor recovery from an expert store file (exec/store_reader.h): pread of the SM-chunk and the
// K E-chunks + checksum verification + decompression + BF16 merge, reported as BF16 bytes recovered per
// second. threads:1 is the per-core rate that ZipMoE's cost model needs (§3.3: one worker thread per
// E-chunk); threads:2 shows the K-shard parallelism. The store is packed once per codec from a synthetic
// Gaussian expert tensor (std 0.02, the shape of a Qwen1.5-MoE / DeepSeek-V2-Lite expert's down_proj,
// 2048 x 1408) and read through the page cache (buffered pread), so this measures the CPU side only.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "core/run_info.h"
#include "exec/expert_naming.h"
#include "exec/store_reader.h"
#include "exec/store_writer.h"
#include "exec/weight_source.h"
#include "exec/weight_synth.h"

namespace {

using namespace moesim::exec;

const char* kCodecs[] = {"zstd:19", "lz4hc:12", "zstd:3", "lz4"};

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("moesim_store_bench_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// Packs (once) and opens the store for codec index `c`.
const StoreReader& store_for(int c) {
  static std::map<int, std::unique_ptr<StoreReader>> readers;
  auto& r = readers[c];
  if (!r) {
    const std::string src = tmp_path("w.safetensors");
    if (!std::filesystem::exists(src)) {
      SynthOptions so;
      so.std = 0.02;
      so.seed = 42;
      write_synth_weights(src, {{"model.layers.0.mlp.experts.0.down_proj.weight", "down_proj", {2048, 1408}}},
                          so, moesim::Json::object());
    }
    const WeightSource w = WeightSource::open(src);
    PackOptions po;
    po.codec = kCodecs[c];
    po.shards = 4;
    po.threads = 2;
    const std::string path = tmp_path(std::to_string(c) + ".store");
    write_store(path, select_experts(w, false), po);
    r = std::make_unique<StoreReader>(path);
  }
  return *r;
}

void BM_RecoverTensor(benchmark::State& state) {
  const StoreReader& r = store_for(static_cast<int>(state.range(0)));
  const unsigned threads = static_cast<unsigned>(state.range(1));
  const StoreEntry& e = r.entries().at(0);
  std::vector<uint16_t> out(e.elements);
  for (auto _ : state) {
    r.recover(e, out.data(), threads);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * e.bf16_bytes()));
  state.SetLabel(
      std::string(kCodecs[state.range(0)]) + " K=4 ratio " +
      std::to_string(static_cast<double>(e.e_bytes() + e.sm.size) / static_cast<double>(e.bf16_bytes())));
}
BENCHMARK(BM_RecoverTensor)
    ->ArgNames({"codec", "threads"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  moesim::warn_if_unoptimized();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (int c = 0; c < 4; ++c) std::filesystem::remove(tmp_path(std::to_string(c) + ".store"));
  std::filesystem::remove(tmp_path("w.safetensors"));
  return 0;
}
