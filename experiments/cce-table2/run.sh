#!/bin/sh
# Table 2 of "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference" in moesim: LRU,
# Belady and Cache-Prior (lambda = 0.5, LRU underneath, J = 1) miss rates and cache lifetimes at half the
# experts cached per layer,
#   (a) on SYNTHETIC traces with logits for the four models of its Table 1 (Zipf 1.0 per layer: no real
#       trace of these models is bundled, and the fitted generator needs a real trace of the same shape);
#   (b) on the bundled REAL traces with SYNTHETIC logits attached (`trace synth --logits-for`).
# Usage: experiments/cache-conditional-table2/run.sh [BUILD_DIR] [OUT_DIR]
set -eu
B=${1:-build}
O=${2:-/tmp/moesim-table2}
mkdir -p "$O"
M="$B/moesim"
for m in qwen1.5-moe-a2.7b deepseek-v2-lite phi-3.5-moe mixtral-8x7b; do
  "$M" trace synth --model "$m" --zipf 1.0 --logits --tokens 1024 --seed 1 -o "$O/$m.mtr" 2>/dev/null
  e=$(python3 -c "import json;print(json.load(open('data/models/$m.json'))['routed_experts']['value'])")
  "$M" replay "$O/$m.mtr" --scope layer --budget $((e / 2)) --policy lru,belady \
    --routing "identity;cache-prior:lambda=0.5,J=1" --oracle-passes 8
done
for t in qwen3-30b-a3b gemma-4-26b-a4b gpt-oss-120b; do
  "$M" trace synth --logits-for "data/traces/$t.route.csv" --seed 1 -o "$O/$t.mtr" 2>/dev/null
  "$M" replay "$O/$t.mtr" --scope layer --budget 64 --policy lru,belady \
    --routing "identity;cache-prior:lambda=0.5,J=1" --oracle-passes 8
done
