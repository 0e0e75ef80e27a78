#!/usr/bin/env bash
# The lossless-vs-lossy frontier (issue: lossy routing): every system and routing policy of spec.json on one
# table of mean TPOT against routing deviation (the fraction of (token, layer) selections changed), sorted
# by deviation, with the Pareto-optimal rows marked.
#   experiments/frontier/run.sh [BUILD_DIR] [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
M="${1:-$root/build}/moesim"
out="${2:-$here/out}"
trace="$root/data/traces/qwen3-30b-a3b.route.csv"
# The inputs: the real routing with synthetic logits (labelled synthetic), and the transition predictor's
# training trace (a synthetic trace fitted to the real one: never the evaluated trace).
"$M" -q trace synth --logits-for "$trace" --seed 1 -o "$here/qwen3-logits.mtr"
"$M" -q trace synth --fit "$trace" --tokens 512 --prompt-tokens 28 --seed 11 -o "$here/train.mtr"
rm -rf "$out"
"$M" sweep "$here/spec.json" -o "$out"
python3 - "$out/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    r["tpot"] = float(r["tpot_mean_s"]) * 1e3
    r["dev"] = float(r["routing_changed_fraction"] or 0)
rows.sort(key=lambda r: (r["dev"], r["tpot"]))
best = float("inf")
print("| system | eviction | routing | prefetch | TPOT (ms) | selections changed | hit rate | Pareto |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    pareto = r["tpot"] < best
    best = min(best, r["tpot"])
    print(f"| {r['system']} | {r['policy'] or 'default'} | {r['routing'] or 'identity'} | {r['prefetch'] or 'none'} | "
          f"{r['tpot']:.1f} | {100 * r['dev']:.1f}% | {100 * float(r['hit_rate']):.1f}% | {'yes' if pareto else ''} |")
PY
