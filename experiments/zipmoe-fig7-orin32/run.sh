#!/usr/bin/env bash
# ZipMoE Fig. 7 on the paper's second device and second model: mean TPOT and TTFT against the memory budget
# (SPEC.json, one `moesim sweep`) for the systems of experiments/zipmoe-fig7, simulated on a Jetson AGX Orin 32GB
# (the paper's Hardware 2):
#   * a SYNTHETIC Qwen1.5-MoE-A2.7B trace (the paper's second decoder-only model; no real trace of it is bundled):
#     Zipf 1.0 per layer, 4 sequences x 32 prompt + 64 decode tokens, seed 7;
#   * a SYNTHETIC DeepSeek-V2-Lite trace, the same shape and seed (zipmoe-fig7's, on the smaller device).
# Plotted by zipmoe-fig7's plot.py. Usage: experiments/zipmoe-fig7-orin32/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv reductions.csv against-paper.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -rf "$out/sweep"
cp "$here/SPEC.json" "$out/SPEC.json"
for model in qwen1.5-moe-a2.7b deepseek-v2-lite; do
  "$M" -q trace synth --model "$model" --zipf 1.0 --sequences 4 --prompt-tokens 32 --tokens 64 --seed 7 \
    -o "$out/$model.zipf1.mtr"
done
"$M" -q sweep "$out/SPEC.json" -o "$out/sweep" > "$out/sweep.log" 2>&1 || { cat "$out/sweep.log"; exit 1; }
cp "$out/sweep/results.csv" "$out/results.csv"
$py "$root/experiments/zipmoe-fig7/plot.py" "$out" zipmoe-fig7-orin32 "Jetson AGX Orin 32GB" \
  "qwen1.5-moe-a2.7b.zipf1.mtr=Qwen1.5-MoE-A2.7B, SYNTHETIC Zipf-1.0 routing" \
  "deepseek-v2-lite.zipf1.mtr=DeepSeek-V2-Lite, SYNTHETIC Zipf-1.0 routing (26.8 GiB)"
