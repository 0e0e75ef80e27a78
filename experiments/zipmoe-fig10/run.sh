#!/usr/bin/env bash
# ZipMoE Fig. 10: the cache-management ablation as a latency-throughput trade-off (mean TPOT against tokens/s over
# batch sizes) at 8 GiB on a simulated Jetson AGX Orin 64GB: ZipMoE (SPEC.json: planned pools, its
# in-pool frequency eviction), then without the planner (SPEC-no-planner.json: even pools F=C=S=E=0.25) with its
# own eviction and with FIFO, Marking and LRU. Two `moesim sweep`s; both traces SYNTHETIC:
#   * Qwen3-30B-A3B fitted to the bundled real trace (trace synth --fit), 4 x (8 prompt + 32 decode), BF16, batch 1-4;
#   * DeepSeek-V2-Lite, Zipf 1.0 per layer, 8 x (32 prompt + 32 decode), batch 1-8.
# Usage: experiments/zipmoe-fig10/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv ablation.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -rf "$out"/sweep-* "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
cp "$here/SPEC.json" "$here/SPEC-no-planner.json" "$out/"
q "$M" -q trace synth --fit data/traces/qwen3-30b-a3b.route.csv --sequences 4 --prompt-tokens 8 --tokens 32 \
  --seed 11 -o "$out/qwen3-30b-a3b.fit4.mtr"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 8 --prompt-tokens 32 --tokens 32 --seed 7 \
  -o "$out/deepseek-v2-lite.zipf1.seq8.mtr"
q "$M" -q sweep "$out/SPEC.json" -o "$out/sweep-planned"
q "$M" -q sweep "$out/SPEC-no-planner.json" -o "$out/sweep-no-planner"
{ sed 's/^/planned,/;1s/^planned,/pools,/' "$out/sweep-planned/results.csv"
  tail -n +2 "$out/sweep-no-planner/results.csv" | sed 's/^/even,/'; } > "$out/results.csv"
$py "$here/plot.py" "$out"
