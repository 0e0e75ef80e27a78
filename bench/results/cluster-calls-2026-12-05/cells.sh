#!/usr/bin/env bash
# The call overhead of `validate --cluster`: the calibration before (free least-squares line of calls made
# from threads of their own) and after (calls made through the run's own ExecClusterPlatform, the line anchored
# at the lone call), each binary's validate run back to back on the same cell, cell after cell.
#   cells.sh OLD_MOESIM NEW_MOESIM WORKDIR
# Cells: tiny/prism (the cell the change was designed on: the most call-bound of bench/results/
# cluster-exec-2026-11-28), tiny/uniform, line/eplb (network-bound; from the same folder) and a new cell never
# run before, pair/prism and pair/uniform (two one-GPU servers of tiny-moe, 1 Gbit/s and 0.5 ms, Zipf 1.2
# traces of seeds 8 and 9, Poisson arrivals every second). CELLS (SPEC:PLACEMENT ...) picks others: star (four
# one-GPU servers of tiny-moe every pair linked at 1 Gbit/s and 1 ms, Zipf 0.9 traces of seeds 10-13,
# Poisson every 1.5 s), trio (three servers of 1, 2 and 1 GPUs, 500 Mbit/s and 1 ms, Zipf 1.1 traces of seeds
# 20-22, Poisson every 0.8 s) and qwen3 (bench/results/cluster-exec-2026-11-28's real-trace cell, 1 s of arrivals).
set -uo pipefail
OLD=$1 NEW=$2 W=$3
here=$(cd "$(dirname "$0")" && pwd); src=$here/../cluster-exec-2026-11-28; models=$here/../../../tests/data/models
mkdir -p "$W" && cd "$W"
cp "$models/tiny-moe.json" .
for s in 1 2 3; do $NEW -q trace synth --model tiny-moe.json --zipf 1.0 --sequences 20 --prompt-tokens 16 --tokens 8 --seed $s -o t$s.mtr; done
for s in 4 5 6 7; do $NEW -q trace synth --model tiny-moe.json --zipf 0.8 --sequences 20 --prompt-tokens 24 --tokens 12 --seed $s -o t$s.mtr; done
for s in 10 11 12 13; do $NEW -q trace synth --model tiny-moe.json --zipf 0.9 --sequences 20 --prompt-tokens 20 --tokens 10 --seed $s -o t$s.mtr; done
for s in 20 21 22; do $NEW -q trace synth --model tiny-moe.json --zipf 1.1 --sequences 20 --prompt-tokens 16 --tokens 12 --seed $s -o t$s.mtr; done
for s in 8 9; do $NEW -q trace synth --model tiny-moe.json --zipf 1.2 --sequences 20 --prompt-tokens 12 --tokens 10 --seed $s -o t$s.mtr; done
for c in tiny line; do sed 's#"../../../tests/data/models/tiny-moe.json"#"tiny-moe.json"#' "$src/$c.servers.json" > $c.servers.json; done
cp "$here/pair.servers.json" "$here/star.servers.json" "$here/trio.servers.json" .
sed 's#"../../../tests/data/models/#"'"$models"'/#; s#"../../../data/traces/#"'"$here"'/../../../data/traces/#' \
  "$src/qwen3.servers.json" > qwen3.servers.json
cp "$src"/at?.txt .
for cell in ${CELLS:-tiny:prism tiny:uniform pair:prism pair:uniform line:eplb}; do
  spec=${cell%%:*}; p=${cell#*:}
  duration=20s; [ $spec = qwen3 ] && duration=1s
  for which in ${WHICH:-old new}; do
    bin=$OLD; [ $which = new ] && bin=$NEW
    echo "$spec $p $which: load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)"
    timeout 400 $bin -q validate --cluster $spec.servers.json --placement $p --duration $duration --repeat 3 --json \
      -o $spec.$p.$which.json > $spec.$p.$which.log 2>&1 || echo "rc=$?"
    python3 -c "
import json; j = json.load(open('$spec.$p.$which.json')); c = j['calibration']; e = j['errors']
print('  cost', [round(100 * x, 2) for x in e['cost']['runs']], 'structure', [round(100 * x, 2) for x in e['structure']['runs']],
      'call us %.0f + %.0f/inflight, invoke us %.0f' % (1e6 * c['call_overhead_s'], 1e6 * c['call_overhead_per_inflight_s'], 1e6 * c['invoke_overhead_s']),
      'compared', j['compared'])"
  done
done
