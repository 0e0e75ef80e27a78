#!/usr/bin/env bash
# BuddyMoE ("BuddyMoE: Exploiting Expert Redundancy to Accelerate Memory-Constrained MoE Inference") Table 1: the
# latency a missing expert costs on demand, behind a prefetcher, and replaced by a buddy. One `moesim sweep`
# (SPEC.json) of `moesim run --system offload` on the paper's A100 + llama.cpp at its measured costs
# (server-a100-pcie-llamacpp), DeepSeek-V2-Lite on a SYNTHETIC trace (Zipf 1.0 with logits, 32 prompt + 1024
# decode tokens, seed 1), the buddy profile from another SYNTHETIC trace (seed 2); plot.py splits each run's
# added time per token into a cost per on-demand miss, per prefetched expert and per substitution.
# Writes OUT/results.csv, OUT/table1.md and OUT/buddymoe-table1.{png,pdf}.
# Usage: experiments/buddymoe-table1/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv table1.md
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
log="$out/run.log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
cd "$root" && mkdir -p "$out" && rm -rf "$out/sweep" && : > "$log"
cp "$here/SPEC.json" "$out/SPEC.json"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --logits --prompt-tokens 32 --tokens 1024 --seed 1 \
  -o "$out/trace.mtr"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --logits --prompt-tokens 32 --tokens 1024 --seed 2 \
  -o "$out/profile-trace.mtr"
# The paper's best buddy configuration (Tables 2-4): CFT threshold tau = 0.95, |B| = 16.
q "$M" -q buddy profile "$out/profile-trace.mtr" --alpha 0.95 --k-max 16 -o "$out/profile-a0.95-k16.json"
"$M" -q sweep "$out/SPEC.json" --jobs 2 -o "$out/sweep" > "$out/sweep.log" 2>&1 || { cat "$out/sweep.log"; exit 1; }
$py "$here/plot.py" "$out"
