#!/usr/bin/env bash
# Fig. 9 of "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference", the miss-rate side:
# parameters loaded from flash per generated token for LRU and Belady's optimal eviction ("Optimal", lossless)
# against Cache-Prior over LRU swept over lambda = 0 .. 1 (J = 2 for top-4/6 models, 1 for top-2), at half the
# experts cached per layer. The paper's other axis is Wikitext perplexity (needs the model); ours is the
# routing deviation: the mean share of each token's top-k router weight moved off removed experts.
#   (a) SYNTHETIC traces with logits for the four models of its Table 1 (Zipf 1.0 per layer, 1,024 tokens);
#   (b) the bundled REAL Qwen3-30B-A3B and gpt-oss-120b routing with SYNTHETIC logits (`--logits-for`);
#       parameters per expert from the models' presets (data/models; Table 1's for (a)).
# Writes OUT/cce-fig9.csv and OUT/cce-fig9.{png,pdf}.
# Usage: experiments/cce-fig9/run.sh [BUILD_DIR] [OUT_DIR]
# Results: cce-fig9.csv cce-fig9.md
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out"
log="$out/run.log" && : > "$log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
lambdas() {  # lambdas J: Cache-Prior at lambda = 0, 0.05, ..., 1
  local r="identity" i
  for i in $(seq 0 20); do r+=";cache-prior:lambda=$(awk "BEGIN{print $i/20}"),J=$1"; done
  echo "$r"
}
sweep() {  # sweep TRACE BUDGET J OUT_STEM
  q "$M" -q replay "$1" --scope layer --budget "$2" --policy lru --routing "$(lambdas "$3")" --threads 2 --json \
    -o "$4.lru.json"
  q "$M" -q replay "$1" --scope layer --budget "$2" --policy belady --routing identity --json -o "$4.belady.json"
}
for m in qwen1.5-moe-a2.7b:60:2 deepseek-v2-lite:64:2 phi-3.5-moe:16:1 mixtral-8x7b:8:1; do
  IFS=: read -r name e J <<< "$m"
  q "$M" -q trace synth --model "$name" --zipf 1.0 --logits --tokens 1024 --seed 1 -o "$out/$name.mtr"
  sweep "$out/$name.mtr" $((e / 2)) "$J" "$out/$name"
done
for m in qwen3-30b-a3b:2 gpt-oss-120b:1; do  # 128 experts; top-6, top-2
  IFS=: read -r t J <<< "$m"
  q "$M" -q trace synth --logits-for "data/traces/$t.route.csv" --seed 1 -o "$out/$t.mtr"
  sweep "$out/$t.mtr" 64 "$J" "$out/$t"
done
$py "$here/plot.py" "$out"
