#!/usr/bin/env bash
# ZipMoE Fig. 9: end-to-end latency against the output length (SPEC.json, one `moesim sweep`) at 20 GiB on a
# simulated Jetson AGX Orin 64GB, for ZipMoE, expert-level LRU offloading and whole-layer offloading with a
# one-layer window (DeepSpeed-like; without the window it is within 0.1%, Fig. 7 and 8):
#   * REAL: prefixes of the bundled Qwen3-30B-A3B trace -- its 28-token prompt and the first 16, 32, 64 and 128
#     of its 128 decode tokens (trace export, then the decode records cut) -- with BF16 sizes;
#   * SYNTHETIC: DeepSeek-V2-Lite, Zipf 1.0, 8 sequences of 32 prompt + 32, 64, 128 and 256 decode tokens
#     (seed 7), served one after another (batch 1): the band is over the 8 sequences.
#   * SYNTHETIC: Qwen1.5-MoE-A2.7B (the paper's other decoder-only model), the same shapes and seed.
# Usage: experiments/zipmoe-fig9/run.sh [BUILD_DIR] [OUT_DIR]
# (experiments/zipmoe-fig9-orin32 runs it with ZIPMOE_FIG9_SPEC, its own spec of other points on the same traces,
# and ZIPMOE_FIG9_PLOT, the NAME and SETTING plot.py names its figure and title with.)
# Results: results.csv latency.csv speedups.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -rf "$out/sweep" "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
cp "${ZIPMOE_FIG9_SPEC:-$here/SPEC.json}" "$out/SPEC.json"
q "$M" -q trace export data/traces/qwen3-30b-a3b.route.csv -o "$out/qwen3-real.jsonl"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
lines = open(os.path.join(out, "qwen3-real.jsonl")).read().splitlines()
for n in (16, 32, 64, 128):
    with open(os.path.join(out, f"qwen3-real-decode{n}.jsonl"), "w") as f:
        for line in lines:
            r = json.loads(line)
            if r["phase"] == "prefill" or r["token"] < n:
                f.write(line + "\n")
PY
for n in 32 64 128 256; do
  q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 8 --prompt-tokens 32 --tokens "$n" --seed 7 \
    -o "$out/deepseek-zipf1-decode$n.mtr"
  q "$M" -q trace synth --model qwen1.5-moe-a2.7b --zipf 1.0 --sequences 8 --prompt-tokens 32 --tokens "$n" --seed 7 \
    -o "$out/qwen15-zipf1-decode$n.mtr"
done
q "$M" -q sweep "$out/SPEC.json" -o "$out/sweep"
cp "$out/sweep/results.csv" "$out/results.csv"
plot=(); [ -z "${ZIPMOE_FIG9_PLOT:-}" ] || IFS='|' read -r -a plot <<<"$ZIPMOE_FIG9_PLOT"
$py "$here/plot.py" "$out" "${plot[@]}"
