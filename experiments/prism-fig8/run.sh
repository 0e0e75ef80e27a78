#!/usr/bin/env bash
# Prism Fig. 8 in moesim (simulated): the cluster at scale. Edge servers of 2 GPUs each (8 GiB per GPU for experts:
# a server holds 60% of DeepSeek-V2-Lite's experts; the desktop-rtx4090 profile's compute), 4 to 256 GPUs (2 to 128
# servers), a full mesh, 10 simulated minutes of Poisson arrivals per server, prism placement. Each server serves one
# of 8 SYNTHETIC "tasks" (Zipf 1.0, each its own popularity order; server i gets task i mod 8), 20 sequences of
# 128 prompt + 64 decode tokens each.
#   (a) mean latency against the GPU count, Poisson 8 s and 15 s, 500 Mbit/s;
#   (b) mean latency against the link bandwidth (100, 500, 1000 Mbit/s), Poisson 8 s.
# Usage: experiments/prism-fig8/run.sh [BUILD_DIR] [OUT_DIR]
# Results: fig8.csv changes.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -f "$out"/*.json "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
for t in $(seq 0 7); do
  q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 20 --prompt-tokens 128 --tokens 64 \
    --seed $((100 + t)) -o "$out/task$t.mtr"
done
cluster() {  # GPUS ARRIVAL BANDWIDTH
  local n=$(($1 / 2)) gpus="" traces="" name="g$1-${2#poisson:}-${3%bit/s}"
  for i in $(seq 0 $((n - 1))); do
    gpus+="${gpus:+,}2"; traces+="${traces:+,}$out/task$((i % 8)).mtr"
  done
  q $py "$root/experiments/prism_cluster.py" "$out/$name.servers.json" --model deepseek-v2-lite \
    --hw desktop-rtx4090 --gpus "$gpus" --gpu-memory 8GiB --traces "$traces" --arrival "$2" --bandwidth "$3"
  q "$M" -q cluster "$out/$name.servers.json" --placement prism --duration 10m --seed 1 --json -o "$out/$name.json"
}
for g in 4 16 64 256; do
  for a in poisson:8s poisson:15s; do cluster $g $a 500Mbit/s; done
  for b in 100Mbit/s 1000Mbit/s; do cluster $g poisson:8s $b; done
done
$py "$here/plot.py" "$out"
