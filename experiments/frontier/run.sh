#!/usr/bin/env bash
# The lossless-vs-lossy frontier (issue: lossy routing): every system and routing policy of SPEC.json (one
# `moesim sweep`) as mean TPOT against routing deviation (the fraction of (token, layer) selections the
# routing changed), with the Pareto-optimal points marked. The bundled REAL Qwen3-30B-A3B routing with
# SYNTHETIC logits (`trace synth --logits-for`); the transition predictor trained on a SYNTHETIC trace fitted
# to the real one (never the evaluated trace). Writes OUT/results.csv, OUT/frontier.csv (sorted, with the
# Pareto flag), OUT/frontier.md (the README's table) and OUT/frontier.{png,pdf}.
# Usage: experiments/frontier/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv frontier.csv frontier.md
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
log="$out/run.log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
cd "$root" && mkdir -p "$out" && rm -rf "$out/sweep" && : > "$log"
trace="$root/data/traces/qwen3-30b-a3b.route.csv"
# The spec's relative trace paths resolve in OUT, where both traces are written.
cp "$here/SPEC.json" "$out/SPEC.json"
q "$M" -q trace synth --logits-for "$trace" --seed 1 -o "$out/qwen3-logits.mtr"
q "$M" -q trace synth --fit "$trace" --tokens 512 --prompt-tokens 28 --seed 11 -o "$out/train.mtr"
"$M" -q sweep "$out/SPEC.json" --jobs 2 -o "$out/sweep" > "$out/sweep.log" 2>&1 || { cat "$out/sweep.log"; exit 1; }
cp "$out/sweep/results.csv" "$out/results.csv"
$py "$here/plot.py" "$out"
