#!/usr/bin/env bash
# Table 2 of "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference" in moesim: LRU,
# Belady and Cache-Prior (lambda = 0.5; J = 2 for the granular top-4/6 models, J = 1 for the top-2 ones, as
# the paper's §4.2; LRU and Belady underneath) miss rates and cache lifetimes at half the experts cached per
# layer,
#   (a) on SYNTHETIC traces with logits for the four models of its Table 1, FITTED to the bundled real
#       Qwen3-30B-A3B trace and reshaped to each model's layers, experts and top-k (`trace synth --fit
#       --model`, docs/synth.md "Fitting a model of another shape"; 1,024 decode tokens). No trace of these
#       models is bundled; Qwen3's top-k / experts (6/128) is the closest of the bundled traces to theirs
#       (4/60 .. 2/8; gpt-oss is 2/128), tied with Gemma-4's, and its 48 layers are at least each model's
#       (24-32), so no real layer is used twice;
#   (b) on the bundled REAL traces with SYNTHETIC logits attached (`trace synth --logits-for`).
# Writes OUT/table2.csv and OUT/cce-table2.{png,pdf}.
# Usage: experiments/cce-table2/run.sh [BUILD_DIR] [OUT_DIR]
# Results: table2.csv table2.md
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out"
log="$out/run.log" && : > "$log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
routing() { echo "identity;cache-prior:lambda=0.5,J=$1"; }
for m in qwen1.5-moe-a2.7b:2 deepseek-v2-lite:2 phi-3.5-moe:1 mixtral-8x7b:1; do
  name=${m%%:*} J=${m##*:}
  q "$M" -q trace synth --fit data/traces/qwen3-30b-a3b.route.csv --model "$name" --logits --tokens 1024 --seed 1 \
    -o "$out/$name.mtr"
  e=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['routed_experts']['value'])" "data/models/$name.json")
  q "$M" -q replay "$out/$name.mtr" --scope layer --budget $((e / 2)) --policy lru,belady --routing "$(routing "$J")" \
    --oracle-passes 8 --threads 2 --json -o "$out/$name.json"
done
for m in qwen3-30b-a3b:2 gemma-4-26b-a4b:2 gpt-oss-120b:1; do  # top-6, top-6, top-2
  t=${m%%:*} J=${m##*:}
  q "$M" -q trace synth --logits-for "data/traces/$t.route.csv" --seed 1 -o "$out/$t.mtr"
  q "$M" -q replay "$out/$t.mtr" --scope layer --budget 64 --policy lru,belady --routing "$(routing "$J")" \
    --oracle-passes 8 --threads 2 --json -o "$out/$t.json"
done
$py "$here/plot.py" "$out"
