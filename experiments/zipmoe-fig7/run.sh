#!/usr/bin/env bash
# ZipMoE Fig. 7: mean TPOT and TTFT against the memory budget (SPEC.json, one `moesim sweep`) for ZipMoE,
# expert-level LRU offloading and whole-layer offloading with and without a one-layer window, simulated on a
# Jetson AGX Orin 64GB:
#   * the bundled REAL Qwen3-30B-A3B routing (28 prompt + 128 decode tokens) with BF16 sizes (54 GiB of experts);
#   * a SYNTHETIC DeepSeek-V2-Lite trace (Zipf 1.0 per layer, 4 sequences x 32 prompt + 64 decode, seed 7).
# Usage: experiments/zipmoe-fig7/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv reductions.csv against-paper.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -rf "$out/sweep"
# The spec's relative trace paths resolve in OUT: the real trace linked there, the synthetic one written there.
cp "$here/SPEC.json" "$out/SPEC.json"
ln -sf "$root/data/traces/qwen3-30b-a3b.route.csv" "$out/qwen3-30b-a3b.route.csv"
"$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 4 --prompt-tokens 32 --tokens 64 --seed 7 \
  -o "$out/deepseek-v2-lite.zipf1.mtr"
"$M" -q sweep "$out/SPEC.json" -o "$out/sweep" > "$out/sweep.log" 2>&1 || { cat "$out/sweep.log"; exit 1; }
cp "$out/sweep/results.csv" "$out/results.csv"
$py "$here/plot.py" "$out"
