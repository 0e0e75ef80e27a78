#!/usr/bin/env bash
# Load transfer on the emulated cluster: the tiny cell (bench/results/cluster-exec-2026-11-28) with prism and
# uniform placement, Poisson arrivals every 2 s and every 0.5 s per server.
set -uo pipefail
M=/work/main/build/moesim; D=${1:-/tmp/load44/s1}; mkdir -p $D; cd $D
model=/work/main/tests/data/models/tiny-moe.json
for s in 1 2 3; do $M -q trace synth --model $model --zipf 1.0 --sequences 20 --prompt-tokens 16 --tokens 8 --seed $s -o t$s.mtr; done
for rate in 2s 0.5s; do
  sed "s#\"../../../tests/data/models/tiny-moe.json\"#\"$model\"#; s#poisson:2s#poisson:$rate#g" /work/main/bench/results/cluster-exec-2026-11-28/tiny.servers.json > tiny-$rate.servers.json
  for p in prism uniform; do
    echo "rate $rate $p: load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)"
    timeout 300 $M -q validate --cluster tiny-$rate.servers.json --placement $p --duration 20s --repeat 3 --json -o tiny-$rate.$p.json > tiny-$rate.$p.log 2>&1
    echo "rc=$?"
    python3 -c "
import json;j=json.load(open('tiny-$rate.$p.json'));e=j['errors'];print({k:(e[k].get('latency_mean') if isinstance(e[k],dict) else e[k]) for k in e}, j.get('compared'))" 2>&1 | cut -c1-400
  done
done
