#!/usr/bin/env bash
# "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference", Fig. 18 (Appendix G): does the
# initial cache state bias Cache-Prior routing? Phi-3.5-MoE (32 layers x 16 experts, top-2) with a per-layer LRU
# cache of 8 experts and J = 1, as in the paper, in six settings: the original routing from an empty cache,
# Cache-Prior lambda 0.5 from an empty cache, lambda 0.5 and 0.8 from one random cache (8 random experts per
# layer), and as controls the original routing from that random cache and lambda 0.8 from an empty one.
# Simulated (`moesim run --system offload`, the Jetson AGX Orin 64GB profile: the device does not change the
# selections, hits or misses). SYNTHETIC traces with logits (Zipf 1.0; the paper's GSM8K prompt and its router
# are not here): 1 prompt + 64 decode tokens, seeds 1-4, each token one step.
# The random cache: 4 tokens put before the trace (`random-cache.jsonl`, seed 18) select, per layer, 8 random
# experts two at a time with logits 100 and 99 against 0, a margin no cache bias here can overturn. So that those
# logits do not enter Eq. 10's running average, Cache-Prior runs with Delta fixed (`delta=`) at the traces' mean
# logit range (OUT/delta.txt); a control runs lambda 0.5 from an empty cache with the running average.
# Each run's timeline gives every (token, layer)'s selected experts and misses; plot.py rebuilds the LRU cache
# from them (checking it against the run's reads, and that the 4 tokens kept their selections).
# Usage: experiments/cce-fig18/run.sh [BUILD_DIR] [OUT_DIR]
# Results: per_token.csv summary.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
log="$out/run.log"
q() { "$@" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }; }
mkdir -p "$out" && rm -f "$out"/*.timeline.json "$out"/*.run.json && : > "$log"
for s in 1 2 3 4; do
  q "$M" -q trace synth --model phi-3.5-moe --zipf 1.0 --logits --prompt-tokens 1 --tokens 64 --seed $s \
    -o "$out/phi-s$s.mtr"
  q "$M" -q trace export "$out/phi-s$s.mtr" -o "$out/phi-s$s.jsonl"
done
# The random cache's 4 tokens, and each trace behind them (its steps shifted by 4: the prompt becomes decode 3).
delta=$(python3 - "$out" <<'PY'
import json, random, sys
out = sys.argv[1]
rng = random.Random(18)
warm = []
for layer in range(32):
    chosen = rng.sample(range(16), 8)
    for t in range(4):
        logits = [0.0] * 16
        logits[chosen[2 * t]], logits[chosen[2 * t + 1]] = 100.0, 99.0
        warm.append({"seq": 0, "phase": "prefill" if t == 0 else "decode", "token": max(t - 1, 0), "layer": layer,
                     "experts": chosen[2 * t:2 * t + 2], "weights": [0.5, 0.5], "logits": logits})
with open(f"{out}/random-cache.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in warm)
ranges = []
for s in (1, 2, 3, 4):
    rows = [json.loads(line) for line in open(f"{out}/phi-s{s}.jsonl")]
    ranges += [max(r["logits"]) - min(r["logits"]) for r in rows]
    with open(f"{out}/phi-s{s}-random.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in warm)
        for r in rows:
            r["token"] = r["token"] + 4 if r["phase"] == "decode" else 3
            r["phase"] = "decode"
            f.write(json.dumps(r) + "\n")
print("%.4f" % (sum(ranges) / len(ranges)))
PY
)
echo "$delta" > "$out/delta.txt"
settings=("original empty identity" "original random identity" "cp0.5 empty cache-prior:lambda=0.5,J=1,delta=$delta"
          "cp0.5 random cache-prior:lambda=0.5,J=1,delta=$delta" "cp0.8 random cache-prior:lambda=0.8,J=1,delta=$delta"
          "cp0.8 empty cache-prior:lambda=0.8,J=1,delta=$delta" "cp0.5running empty cache-prior:lambda=0.5,J=1")
for s in 1 2 3 4; do
  for setting in "${settings[@]}"; do
    read -r name init routing <<<"$setting"
    trace="$out/phi-s$s.jsonl"; [ "$init" = empty ] || trace="$out/phi-s$s-random.jsonl"
    q "$M" -q run "$trace" --model phi-3.5-moe --system offload --policy lru --scope layer --budget 8 \
      --hw jetson-agx-orin-64gb --routing "$routing" --json -o "$out/$name-$init.s$s.run.json" \
      --timeline "$out/$name-$init.s$s.timeline.json"
  done
done
$py "$here/plot.py" "$out"
