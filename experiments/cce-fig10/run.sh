#!/usr/bin/env bash
# Fig. 10 of "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference", the miss-rate side:
# miss rate against the cache size (experts per layer, from top-k to all of them) for LRU, Belady's optimal
# eviction and Cache-Prior over LRU (lambda = 0.01 .. 1; J = 2 for top-4/6 models, 1 for top-2). The paper
# picks, per model and size, the lambda of least miss rate whose perplexity rises by at most 1%, 5%, 10%;
# perplexity needs the model, so plot.py picks it under a cap on the routing deviation instead (mean share of
# each token's top-k router weight moved off removed experts <= 1%, 5%, 10%).
#   (a) SYNTHETIC traces with logits for the four models of its Table 1 (Zipf 1.0 per layer, 1,024 tokens);
#   (b) the bundled REAL traces with SYNTHETIC logits (`trace synth --logits-for`).
# Cache sizes start at top-k: moesim refuses a per-layer cache smaller than one token's experts (the paper goes
# down to one expert).
# Writes OUT/cce-fig10.csv and OUT/cce-fig10.{png,pdf}.
# Usage: experiments/cce-fig10/run.sh [BUILD_DIR] [OUT_DIR]
# Results: cce-fig10.csv cce-fig10-best.csv cce-fig10-counts.csv cce-fig10.md
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out"
log="$out/run.log" && : > "$log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
lambdas() {  # lambdas J: Cache-Prior from lambda = 0.01 to 1, finer near 0 where the deviation is small
  local r="identity" l
  for l in 0.01 0.02 0.03 0.05 0.075 0.1 0.15 0.2 0.3 0.5 0.75 1; do r+=";cache-prior:lambda=$l,J=$1"; done
  echo "$r"
}
sweep() {  # sweep TRACE SIZES J OUT_STEM
  q "$M" -q replay "$1" --scope layer --budget "$2" --policy lru --routing "$(lambdas "$3")" --threads 2 --json \
    -o "$4.lru.json"
  q "$M" -q replay "$1" --scope layer --budget "$2" --policy belady --routing identity --threads 2 --json \
    -o "$4.belady.json"
}
for m in qwen1.5-moe-a2.7b:4,6,8,12,16,24,30,36,45,60:2 deepseek-v2-lite:6,8,12,16,24,32,40,48,64:2 \
         phi-3.5-moe:2,3,4,6,8,10,12,16:1 mixtral-8x7b:2,3,4,5,6,7,8:1; do
  IFS=: read -r name sizes J <<< "$m"
  q "$M" -q trace synth --model "$name" --zipf 1.0 --logits --tokens 1024 --seed 1 -o "$out/$name.mtr"
  sweep "$out/$name.mtr" "$sizes" "$J" "$out/$name"
done
for m in qwen3-30b-a3b:6,8,16,32,64,96,128:2 gemma-4-26b-a4b:6,8,16,32,64,96,128:2 \
         gpt-oss-120b:2,4,8,16,32,64,96,128:1; do
  IFS=: read -r t sizes J <<< "$m"
  q "$M" -q trace synth --logits-for "data/traces/$t.route.csv" --seed 1 -o "$out/$t.mtr"
  sweep "$out/$t.mtr" "$sizes" "$J" "$out/$t"
done
$py "$here/plot.py" "$out"
