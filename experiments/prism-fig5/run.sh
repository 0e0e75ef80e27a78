#!/usr/bin/env bash
# Prism ("Accelerating Edge Inference for Distributed MoE Models with Latency-Optimized Expert Placement") Fig. 5:
# the latency of a layer against the share of its experts executed on other servers. The paper measures it to
# motivate its proxy objective (Eq. 2, remote invocations); here `moesim cluster` (simulated) runs two servers of
# 8 GPUs in all, split k : 8 - k for k = 1..7, under the Uniform placement (each layer's experts spread at random
# over every GPU), so server 1 executes about 1 - k/8 of its experts remotely and server 2 about k/8; and one
# server with all 8 GPUs (nothing remote). DeepSeek-V2-Lite on SYNTHETIC Zipf-1.0 traces (a different seed per
# server, 60 sequences of 32 prompt + 20 decode tokens), Poisson arrivals every 20 s, 500 Mbit/s between servers,
# 12 GiB of each A100 40GB (server-a100-40gb) for experts (prism-table2's layout), 30 simulated minutes.
# Writes OUT/fig5.csv and OUT/prism-fig5.{png,pdf}.
# Usage: experiments/prism-fig5/run.sh [BUILD_DIR] [OUT_DIR]
# Results: fig5.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
mkdir -p "$out" && rm -f "$out"/*.json && : > "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
for s in 1 2; do
  q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 60 --prompt-tokens 32 --tokens 20 --seed $s \
    -o "$out/task$s.mtr"
done
mk() { q $py "$root/experiments/prism_cluster.py" "$@" --model deepseek-v2-lite --hw server-a100-40gb --gpu-memory 12GiB \
  --arrival poisson:20s; }
mk "$out/gpus8.servers.json" --gpus 8 --traces "$out/task1.mtr"
for k in 1 2 3 4 5 6 7; do mk "$out/gpus$k-$((8 - k)).servers.json" --gpus "$k,$((8 - k))" --traces "$out/task1.mtr,$out/task2.mtr"; done
for s in "$out"/*.servers.json; do
  q "$M" -q cluster "$s" --placement uniform --duration 30m --seed 1 --json -o "${s%.servers.json}.json"
done
$py "$here/plot.py" "$out"
