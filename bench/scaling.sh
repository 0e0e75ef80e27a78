#!/usr/bin/env bash
# How cost grows with the work: wall time, CPU time and peak memory (GNU time's maximum resident set) of
# `moesim replay` (LRU, cache only), `moesim run --system offload` and `--system zipmoe`, against trace length,
# experts per layer (model shapes: OLMoE 16 x 64, Qwen3 48 x 128, DeepSeek-V3 58 x 256) and batch. Traces are
# synthetic (Zipf 0.9, seed 1) of `--sequences S` sequences of T/S decode tokens; the trace synthesis is not
# timed. Prints a Markdown table on stdout.
#   bench/scaling.sh [BUILD_DIR] [--quick]
# --quick: the smallest sizes only (a check that the script runs). Needs GNU time (/usr/bin/time, Debian `time`).
set -euo pipefail
build="$(cd "${1:-build}" && pwd)"
quick=0
[ "${2:-}" = --quick ] && quick=1
[ -x /usr/bin/time ] || { echo "scaling.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 77; }
m="$build/moesim"
repo="$(cd "$(dirname "$0")/.." && pwd)"
d="$(mktemp -d /tmp/moesim-scaling.XXXXXX)"
trap 'rm -rf "$d"' EXIT

# trace MODEL TOKENS SEQUENCES -> path (made once)
trace() {
  local f="$d/$(basename "$1" .json)-$2-$3.mtr"
  [ -f "$f" ] || "$m" -q trace synth --model "$1" --tokens $(($2 / $3)) --sequences "$3" --zipf 0.9 --seed 1 \
    -o "$f" 2> /dev/null
  echo "$f"
}
# row WHAT MODEL TOKENS SEQUENCES BATCH -- moesim args...
row() {
  local what="$1" model="$2" tokens="$3" seqs="$4" batch="$5"
  shift 6
  local t
  t="$(trace "$model" "$tokens" "$seqs")"
  local out
  if ! out="$( { /usr/bin/time -f "%e %U %S %M" "$m" -q "$@" "$t" --batch "$batch" > /dev/null; } 2>&1)"; then
    echo "scaling.sh: $what on $model ($tokens tokens) failed: $out" >&2
    exit 1
  fi
  out="$(echo "$out" | tail -1)"
  read -r wall user sys rss <<< "$out"
  printf '| %s | %s | %s | %s | %s | %.2f | %.2f | %.0f |\n' "$what" "$(basename "$model" .json)" "$tokens" "$seqs" "$batch" "$wall" \
    "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
}

echo "| command | model | decode tokens | sequences | batch | wall s | CPU s | peak MiB |"
echo "|---|---|---|---|---|---|---|---|"
if [ "$quick" = 1 ]; then
  row "replay lru" qwen3-30b-a3b 1000 1 1 -- replay --policy lru --budget 16
  row "run offload" qwen3-30b-a3b 1000 1 1 -- run --model qwen3-30b-a3b --budget 8GiB --allow-overcommit
  exit 0
fi
# Trace length: the replay on OLMoE's shape (16 MoE layers x 64 experts, top-8) up to a million tokens, the
# timed runs on DeepSeek-V3's (58 x 256, top-8).
for n in 1000 10000 100000 1000000; do
  row "replay lru" olmoe-1b-7b "$n" 1 1 -- replay --policy lru --budget 16
done
for n in 1000 10000 100000; do
  row "run offload" deepseek-v3 "$n" 1 1 -- run --model deepseek-v3 --budget 64GiB --allow-overcommit --hw server-h100-nvme
done
# ZipMoE codes BF16 exponents: DeepSeek-V3 ships FP8 and is refused, so its rows are Qwen3's (48 x 128, BF16).
for n in 1000 10000 100000; do
  row "run zipmoe" qwen3-30b-a3b "$n" 1 1 -- run --model qwen3-30b-a3b --system zipmoe --budget 16GiB --hw jetson-agx-orin-64gb
done
# variant EXPERTS TOPK [bf16] -> a model JSON of DeepSeek-V3's shape (58 MoE layers) with that many routed experts
# per layer and that top-k, all else as the preset (made once); with bf16, its weights in BF16 (the checkpoint's
# dtype before FP8: ZipMoE codes BF16 exponents and refuses the FP8 preset).
variant() {
  local f="$d/deepseek-v3-e$1-k$2${3:+-$3}.json"
  [ -f "$f" ] || python3 - "$repo/data/models/deepseek-v3.json" "$f" "$1" "$2" "${3:-}" << 'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = "deepseek-v3-e%s-k%s" % (sys.argv[3], sys.argv[4]) + ("-bf16" if sys.argv[5] else "")
j["routed_experts"]["value"] = int(sys.argv[3])
j["top_k"]["value"] = int(sys.argv[4])
if sys.argv[5]:
    j.pop("quantization", None)
    j.pop("weight_types", None)
json.dump(j, open(sys.argv[2], "w"))
PY
  echo "$f"
}
# One factor at a time on DeepSeek-V3's 58 layers, 10,000 tokens: experts per layer at top-8, then top-k at
# 256 experts (the preset is 256, top-8); ZipMoE on the same shapes in BF16. No bundled preset has 384
# experts per layer; the variants do.
# shape_rows EXPERTS TOPK: replay, offload and ZipMoE rows of that variant at 10,000 tokens.
shape_rows() {
  local v
  v="$(variant "$1" "$2")"
  row "replay lru" "$v" 10000 1 1 -- replay --policy lru --budget 16
  row "run offload" "$v" 10000 1 1 -- run --model "$v" --budget 25% --allow-overcommit --hw server-h100-nvme
  v="$(variant "$1" "$2" bf16)"
  row "run zipmoe" "$v" 10000 1 1 -- run --model "$v" --system zipmoe --budget 25% --allow-overcommit \
    --hw server-h100-nvme
}
for e in 64 128 256 384; do shape_rows "$e" 8; done
for k in 1 2 4 16; do shape_rows 256 "$k"; done
# Experts per layer across the bundled shapes, at 10,000 tokens.
for model in olmoe-1b-7b qwen3-30b-a3b deepseek-v3; do
  row "replay lru" "$model" 10000 1 1 -- replay --policy lru --budget 16
  row "run offload" "$model" 10000 1 1 -- run --model "$model" --budget 25% --allow-overcommit --hw server-h100-nvme
done
# Batch, at 16,000 tokens over 64 sequences (DeepSeek-V3 at batch 16 is the issue's case).
for b in 1 4 16 64; do
  row "run offload" deepseek-v3 16000 64 "$b" -- run --model deepseek-v3 --budget 64GiB --allow-overcommit --hw server-h100-nvme
done
# The issue's case: a DeepSeek-V3-shaped trace of 100,032 decode tokens (64 sequences of 1,563) at batch 16.
row "run offload" deepseek-v3 100032 64 16 -- run --model deepseek-v3 --budget 64GiB --allow-overcommit --hw server-h100-nvme
