#!/usr/bin/env bash
# "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference", Fig. 1 (right) and §4.5: the
# on-device speed-up of Cache-Prior routing over the original routing with an LRU expert cache, Qwen1.5-MoE-A2.7B
# in 4-bit on a 12 GB Snapdragon phone with llama.cpp on the CPU and 30 of 60 experts per layer cached. Simulated:
# one `moesim sweep` (SPEC.json) of `moesim run --system offload --hw phone-snapdragon-8gen3 --compute-on cpu
# --recover-on cpu --scope layer --budget 30 --policy lru`, the model's Q4_0 sizes from `moesim model import
# --quant q4_0` of its Hugging Face config (tests/data/hf-configs), SYNTHETIC Zipf-1.0 traces with logits: three
# short prompts (50 tokens, seeds 1-3) and one long (350 tokens), 128 decode tokens each.
# Writes OUT/results.csv, OUT/speedups.csv, OUT/table.md and OUT/cce-fig1.{png,pdf}.
# Usage: experiments/cce-fig1/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv speedups.csv table.md
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
log="$out/run.log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
mkdir -p "$out" && rm -rf "$out/sweep" && : > "$log"
cp "$here/SPEC.json" "$out/SPEC.json"
q "$M" -q model import "$root/tests/data/hf-configs/qwen1.5-moe-a2.7b.json" --quant q4_0 \
  -o "$out/qwen1.5-moe-a2.7b-q4_0.json"
for s in 1 2 3; do
  q "$M" -q trace synth --model "$out/qwen1.5-moe-a2.7b-q4_0.json" --zipf 1.0 --logits --prompt-tokens 50 \
    --tokens 128 --seed $s -o "$out/short-s$s.mtr"
done
q "$M" -q trace synth --model "$out/qwen1.5-moe-a2.7b-q4_0.json" --zipf 1.0 --logits --prompt-tokens 350 \
  --tokens 128 --seed 1 -o "$out/long-s1.mtr"
"$M" -q sweep "$out/SPEC.json" --jobs 2 -o "$out/sweep" > "$out/sweep.log" 2>&1 || { cat "$out/sweep.log"; exit 1; }
cp "$out/sweep/results.csv" "$out/results.csv"
$py "$here/plot.py" "$out"
