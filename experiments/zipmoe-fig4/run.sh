#!/usr/bin/env bash
# ZipMoE Fig. 4: decompression latency by number of CPU worker threads against the SSD I/O latency of the
# same bytes, MEASURED on this machine with `moesim exec` (real threads, O_DIRECT reads, zstd/lz4
# decompression, CPU recovery) on a small SYNTHETIC store: Gaussian BF16 weights in DeepSeek-V2-Lite's expert
# shapes (fig4-moe.json: 1 layer x 4 experts x 3 tensors of 2048 x 1408, 66 MiB), each tensor's exponents in
# K = FIG4_SHARDS (default 8) frames. From each run's --timeline:
#   decompression  zipmoe with every expert in pool C (E- and SM-chunks cached): no I/O, per layer the 3 tensors'
#                  K shards decoded by L workers; latency per tensor = the layer's decompression span / 3
#   I/O (D.)       zipmoe with every expert in pool E: the SM-chunk read (as many bytes as the tensor's
#                  decompressed exponents) while the workers decompress the E-chunks; O_DIRECT
#   I/O (D.+P.)    the same with --buffered (page cache, warm after the first read)
#   full tensor    offload of a raw store: the whole BF16 tensor (twice the bytes) read with O_DIRECT
# Usage: experiments/zipmoe-fig4/run.sh [BUILD_DIR] [OUT_DIR]; FIG4_THREADS="1 2 4 8" FIG4_SHARDS=8
# Results: latency.csv
# Measured: latency.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
threads=${FIG4_THREADS:-1 2 4 8} && K=${FIG4_SHARDS:-8}
cd "$root" && mkdir -p "$out" && rm -f "$out"/*.timeline.json "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
model="$here/fig4-moe.json" && w="$out/weights.safetensors"
q "$M" -q weights synth --model "$model" --std 0.02 --seed 1 -o "$w"
q "$M" -q pack --weights "$w" --codec zstd:3 --shards "$K" -o "$out/zstd.store"
q "$M" -q pack --weights "$w" --codec lz4hc:4 --shards "$K" -o "$out/lz4hc.store"
q "$M" -q pack --weights "$w" --codec raw --shards 1 -o "$out/raw.store"
rm -f "$w"
q "$M" -q trace synth --model "$model" --zipf 0.5 --tokens 16 --prompt-tokens 1 --seed 1 -o "$out/trace.mtr"
ex() {  # NAME STORE ARGS...: one exec run, CPU recovery and compute (no GPU here), its timeline kept
  local name=$1 store=$2 && shift 2
  q "$M" -q exec "$out/trace.mtr" --model "$model" --store "$out/$store" --recover-on cpu --compute-on cpu \
    --gpu off --timeline "$out/$name.timeline.json" -o /dev/null "$@"
}
for L in $threads; do
  ex "decompress-zstd-L$L" zstd.store --system zipmoe --pools C=1 --budget 64MiB --workers "$L"
  ex "decompress-lz4hc-L$L" lz4hc.store --system zipmoe --pools C=1 --budget 64MiB --workers "$L"
  ex "io-D-L$L" zstd.store --system zipmoe --pools E=1 --budget 32MiB --workers "$L"
done
L1=${threads%% *}
ex "io-DP-L$L1" zstd.store --system zipmoe --pools E=1 --budget 32MiB --workers "$L1" --buffered
ex "full-L$L1" raw.store --system offload --budget 1 --workers "$L1"
rm -f "$out"/*.store
$py "$here/plot.py" "$out" "$(nproc)"
