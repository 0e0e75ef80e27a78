#!/usr/bin/env bash
# ZipMoE Fig. 8: throughput against the batch size (SPEC.json, one `moesim sweep`) at the paper's budgets, 20 GiB
# on a simulated Jetson AGX Orin 64GB and 10 GiB on the 32GB, for ZipMoE, expert-level LRU offloading and
# whole-layer offloading with a one-layer window (without it: within 0.1%, Fig. 7). Batches need several
# sequences, and the bundled real trace has one, so all three traces are SYNTHETIC, 16 sequences each:
#   * Qwen3-30B-A3B fitted to the bundled real trace (trace synth --fit: its per-layer popularity,
#     co-activations and reuse), 28 prompt + 32 decode tokens per sequence, BF16 sizes;
#   * DeepSeek-V2-Lite, Zipf 1.0 per layer, 32 prompt + 32 decode tokens per sequence.
#   * Qwen1.5-MoE-A2.7B (the paper's other decoder-only model), Zipf 1.0 per layer, 32 prompt + 32 decode tokens.
# Usage: experiments/zipmoe-fig8/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv speedups.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -rf "$out/sweep" "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
cp "$here/SPEC.json" "$out/SPEC.json"
q "$M" -q trace synth --fit data/traces/qwen3-30b-a3b.route.csv --sequences 16 --prompt-tokens 28 --tokens 32 \
  --seed 11 -o "$out/qwen3-30b-a3b.fit16.mtr"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 16 --prompt-tokens 32 --tokens 32 --seed 7 \
  -o "$out/deepseek-v2-lite.zipf1.seq16.mtr"
q "$M" -q trace synth --model qwen1.5-moe-a2.7b --zipf 1.0 --sequences 16 --prompt-tokens 32 --tokens 32 --seed 7 \
  -o "$out/qwen1.5-moe-a2.7b.zipf1.seq16.mtr"
q "$M" -q sweep "$out/SPEC.json" -o "$out/sweep"
cp "$out/sweep/results.csv" "$out/results.csv"
$py "$here/plot.py" "$out"
