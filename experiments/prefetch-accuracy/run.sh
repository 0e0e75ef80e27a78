#!/usr/bin/env bash
# Our own figure: how accurate must an expert prefetcher be before it pays? Mean TPOT against measured
# prefetch accuracy (SPEC.json, one `moesim sweep`): the oracle predictor at nominal accuracy P = 0, 0.1, ..., 1
# (`--prefetch oracle:accuracy=P`) as a curve, the learned predictors (transition, temporal, popularity) placed
# at the accuracy they reach, no prefetch as the reference line; offload (LRU) and ZipMoE. The bundled REAL
# Qwen3-30B-A3B routing, BF16 sizes, 4 GiB, a simulated Jetson AGX Orin 64GB; the learned predictors are trained
# on a SYNTHETIC trace fitted to the real one (512 decode tokens, seed 11).
# Writes OUT/results.csv, OUT/prefetch-accuracy.csv and OUT/prefetch-accuracy.{png,pdf}.
# Usage: experiments/prefetch-accuracy/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv prefetch-accuracy.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
log="$out/run.log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
cd "$root" && mkdir -p "$out" && rm -rf "$out/sweep" && : > "$log"
cp "$here/SPEC.json" "$out/SPEC.json"
ln -sf "$root/data/traces/qwen3-30b-a3b.route.csv" "$out/qwen3-30b-a3b.route.csv"
q "$M" -q trace synth --fit "$out/qwen3-30b-a3b.route.csv" --tokens 512 --prompt-tokens 28 --seed 11 -o "$out/train.mtr"
"$M" -q sweep "$out/SPEC.json" --jobs 2 -o "$out/sweep" > "$out/sweep.log" 2>&1 || { cat "$out/sweep.log"; exit 1; }
cp "$out/sweep/results.csv" "$out/results.csv"
$py "$here/plot.py" "$out"
