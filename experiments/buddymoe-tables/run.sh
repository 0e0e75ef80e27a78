#!/usr/bin/env bash
# BuddyMoE ("BuddyMoE: Exploiting Expert Redundancy to Accelerate Memory-Constrained MoE Inference") Tables 2-4,
# the throughput and substitution side (accuracy needs the model, which moesim does not run): Original,
# Random and BuddyMoE rows at cache rates c = 0.75 / 0.5 / 0.375, simulated with `moesim run --system
# offload` on the paper's A100 + llama.cpp platform at its measured costs (server-a100-pcie-llamacpp: 9.5 ms
# per on-demand expert load, every expert preloaded in host memory). Two sweeps:
#   SPEC.json:       the paper's model, DeepSeek-V2-Lite, on a SYNTHETIC trace (Zipf 1.0 with logits, 32 prompt
#                    + 1024 decode tokens, seed 1), buddy profiles from another SYNTHETIC trace (seed 2);
#   SPEC-qwen3.json: the bundled REAL Qwen3-30B-A3B routing, buddy profiles from a SYNTHETIC trace fitted to it.
# Writes OUT/buddymoe-tables.csv and OUT/buddymoe-tables.{png,pdf}.
# Usage: experiments/buddymoe-tables/run.sh [BUILD_DIR] [OUT_DIR]
# Results: buddymoe-tables.csv buddymoe-tables.md penalty.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
log="$out/run.log"
q() { "$@" 2>>"$log" || { cat "$log" >&2; exit 1; }; }  # quiet unless it fails
cd "$root" && mkdir -p "$out/deepseek" "$out/qwen3" && rm -rf "$out/deepseek/sweep" "$out/qwen3/sweep" && : > "$log"
# The paper's buddy configurations: CFT threshold ("tau" in its tables, alpha in its Eq. 5) and |B| (k_max).
profiles() {  # profiles TRACE DIR
  for p in 0.75:4 0.95:16 0.99:2; do
    q "$M" -q buddy profile "$1" --alpha "${p%%:*}" --k-max "${p##*:}" -o "$2/profile-a${p%%:*}-k${p##*:}.json"
  done
}
d="$out/deepseek"
cp "$here/SPEC.json" "$d/SPEC.json"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --logits --prompt-tokens 32 --tokens 1024 --seed 1 -o "$d/trace.mtr"
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --logits --prompt-tokens 32 --tokens 1024 --seed 2 \
  -o "$d/profile-trace.mtr"
profiles "$d/profile-trace.mtr" "$d"
q="$out/qwen3"
cp "$here/SPEC-qwen3.json" "$q/SPEC.json"
ln -sf "$root/data/traces/qwen3-30b-a3b.route.csv" "$q/qwen3-30b-a3b.route.csv"
q "$M" -q trace synth --fit "$q/qwen3-30b-a3b.route.csv" --tokens 1024 --prompt-tokens 28 --seed 11 -o "$q/profile-trace.mtr"
profiles "$q/profile-trace.mtr" "$q"
for s in "$d" "$q"; do
  "$M" -q sweep "$s/SPEC.json" --jobs 2 -o "$s/sweep" > "$s/sweep.log" 2>&1 || { cat "$s/sweep.log"; exit 1; }
done
$py "$here/plot.py" "$out"
