#!/usr/bin/env bash
# Prism Fig. 7 in moesim (simulated): migration after a data shift. Each of the three servers (1, 1, 2 GPUs,
# 500 Mbit/s, DeepSeek-V2-Lite, 12 GiB per GPU) serves 200 requests of one SYNTHETIC "dataset" (Zipf 0.8, its own
# seed) and then 200 of another (Zipf 1.0, another seed): the paper's "from 200 MultiData to 200 BIG-bench
# requests per server". Poisson 10 s, so the shift comes near minute 33; the run covers 70 minutes of arrivals.
# prism with migration every 5 minutes ("w") against the same placement never migrated ("w/o").
# Usage: experiments/prism-fig7/run.sh [BUILD_DIR] [OUT_DIR]
# Results: fig7.csv with-migration.json without-migration.json
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -f "$out"/*.json "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
for s in 1 2 3; do
  q "$M" -q trace synth --model deepseek-v2-lite --zipf 0.8 --sequences 200 --prompt-tokens 32 --tokens 20 \
    --seed $((10 + s)) -o "$out/before$s.mtr"
  q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 200 --prompt-tokens 32 --tokens 20 \
    --seed $((20 + s)) -o "$out/after$s.mtr"
done
q $py "$root/experiments/prism_cluster.py" "$out/shift.servers.json" --model deepseek-v2-lite --hw server-a100-40gb \
  --gpus 1,1,2 --gpu-memory 12GiB --arrival poisson:10s \
  --traces "$out/before1.mtr+$out/after1.mtr,$out/before2.mtr+$out/after2.mtr,$out/before3.mtr+$out/after3.mtr"
q "$M" -q cluster "$out/shift.servers.json" --placement prism --migrate-every 5m --duration 70m --seed 1 --json \
  -o "$out/with-migration.json"
q "$M" -q cluster "$out/shift.servers.json" --placement prism --duration 70m --seed 1 --json \
  -o "$out/without-migration.json"
$py "$here/plot.py" "$out"
