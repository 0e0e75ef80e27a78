#!/usr/bin/env bash
# BuddyMoE ("BuddyMoE: Exploiting Expert Redundancy to Accelerate Memory-Constrained MoE Inference") Fig. 8: the
# PCIe traffic of the base system (Original: every missed expert loaded on demand) against BuddyMoE (tau = 0.95,
# |B| = 16, rho = 3, the paper's best row), at c = 0.5 of the experts per layer on the GPU, with
# `moesim run --system offload --hw server-a100-pcie-llamacpp --timeline` (the paper's A100 + llama.cpp at its
# measured costs, the model preloaded in host memory); plot.py reads each timeline's link transfers. Traces:
#   deepseek: the paper's model on a SYNTHETIC trace (Zipf 1.0 with logits, 32 prompt + 256 decode tokens,
#             seed 1), the buddy profile from another SYNTHETIC trace (seed 2);
#   qwen3:    the bundled REAL Qwen3-30B-A3B routing, the buddy profile from a SYNTHETIC trace fitted to it.
# Writes OUT/traffic.csv, OUT/per-token.csv and OUT/buddymoe-fig8.{png,pdf}.
# Usage: experiments/buddymoe-fig8/run.sh [BUILD_DIR] [OUT_DIR]
# Results: traffic.csv per-token.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
log="$out/run.log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
mkdir -p "$out" && : > "$log"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --logits --prompt-tokens 32 --tokens 256 --seed 1 \
  -o "$out/deepseek.mtr"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --logits --prompt-tokens 32 --tokens 1024 --seed 2 \
  -o "$out/deepseek-profile.mtr"
q "$M" -q trace synth --fit "$root/data/traces/qwen3-30b-a3b.route.csv" --tokens 1024 --prompt-tokens 28 --seed 11 \
  -o "$out/qwen3-profile.mtr"
# trace:model:budget (c = 0.5 of 64 and of 128 experts per layer)
for t in "deepseek:$out/deepseek.mtr:deepseek-v2-lite:32" \
         "qwen3:$root/data/traces/qwen3-30b-a3b.route.csv:qwen3-30b-a3b:64"; do
  IFS=: read -r name trace model budget <<<"$t"
  q "$M" -q buddy profile "$out/$name-profile.mtr" --alpha 0.95 --k-max 16 -o "$out/$name-buddies.json"
  for r in "base:identity" "buddy:buddy:profile=$out/$name-buddies.json,H=16,tau=0,beta=1,rho=3"; do
    q "$M" -q run "$trace" --model "$model" --hw server-a100-pcie-llamacpp --system offload --policy lru \
      --scope layer --budget "$budget" --routing "${r#*:}" --json -o "$out/$name-${r%%:*}.json" \
      --timeline "$out/$name-${r%%:*}.timeline.json"
  done
done
$py "$here/plot.py" "$out"
