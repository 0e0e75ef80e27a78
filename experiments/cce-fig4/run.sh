#!/usr/bin/env bash
# Fig. 4 of "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference", the miss-rate side:
# each routing method's trade-off curve at half the experts cached per layer (LRU underneath), sweeping its
# hyperparameter -- Pruning (h = 2..k), Max-Rank (M = k+1 .. 4k), Cumsum-Threshold (p = 0 .. 1), Cache-Prior
# (lambda = 0 .. 1); J = 2 for granular models (k >= 4), 1 otherwise, as the paper's §4.2. The paper's y axis is
# Wikitext perplexity, which needs the model; ours is the routing deviation moesim measures: the mean share of
# each token's top-k router weight moved off the experts the routing removed.
#   (a) SYNTHETIC traces with logits for the four models of its Table 1 (Zipf 1.0 per layer, 1,024 tokens);
#   (b) the bundled REAL traces with SYNTHETIC logits (`trace synth --logits-for`).
# Writes OUT/cce-fig4.csv and OUT/cce-fig4.{png,pdf}.
# Usage: experiments/cce-fig4/run.sh [BUILD_DIR] [OUT_DIR]
# CCE_CACHE_DIVISOR=D (default 2) caches 1/D of the experts instead, and CCE_FIGURE=NAME (default cce-fig4) names
# the outputs NAME.csv, NAME-halving.csv, NAME.{png,pdf}: experiments/cce-fig14 (a quarter) is this run with 4.
# Results: cce-fig4.csv cce-fig4-halving.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
div=${CCE_CACHE_DIVISOR:-2} fig=${CCE_FIGURE:-cce-fig4}
cd "$root" && mkdir -p "$out"
log="$out/run.log" && : > "$log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
# routings K E J: every method's hyperparameter sweep, ';'-separated.
routings() {
  local k=$1 e=$2 j=$3 r="identity" h m i
  for ((h = 2; h <= k; h++)); do r+=";prune:h=$h"; done
  for m in $((k + 1)) $((k + 2)) $((3 * k / 2)) $((2 * k)) $((3 * k)) $((4 * k)); do
    if ((m > k && m <= e)) && [[ $r != *"max-rank:M=$m,"* ]]; then r+=";max-rank:M=$m,J=$j"; fi
  done
  for i in 0 1 2 3 4 5 6 7 8 9 10; do r+=";cumsum:p=$(awk "BEGIN{print $i/10}"),J=$j"; done
  for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    r+=";cache-prior:lambda=$(awk "BEGIN{print $i/20}"),J=$j"
  done
  echo "$r"
}
for name in qwen1.5-moe-a2.7b deepseek-v2-lite phi-3.5-moe mixtral-8x7b; do
  read -r k e < <($py -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['top_k']['value'], d['routed_experts']['value'])" "data/models/$name.json")
  q "$M" -q trace synth --model "$name" --zipf 1.0 --logits --tokens 1024 --seed 1 -o "$out/$name.mtr"
  q "$M" -q replay "$out/$name.mtr" --scope layer --budget $((e / div)) --policy lru \
    --routing "$(routings "$k" "$e" $((k >= 4 ? 2 : 1)))" --threads 2 --json -o "$out/$name.json"
done
for t in qwen3-30b-a3b gemma-4-26b-a4b gpt-oss-120b; do
  q "$M" -q trace synth --logits-for "data/traces/$t.route.csv" --seed 1 -o "$out/$t.mtr"
  read -r k e < <("$M" trace info "$out/$t.mtr" --json | $py -c "import json,sys; d=json.load(sys.stdin); print(d['top_k'], d['experts'])")
  q "$M" -q replay "$out/$t.mtr" --scope layer --budget $((e / div)) --policy lru \
    --routing "$(routings "$k" "$e" $((k >= 4 ? 2 : 1)))" --threads 2 --json -o "$out/$t.json"
done
$py "$here/plot.py" "$out" "$fig" "$div"
