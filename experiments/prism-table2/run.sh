#!/usr/bin/env bash
# Prism Table II and Fig. 6 in moesim (simulated): mean serve latency per server and the local compute ratio over
# time for the five placements, on the paper's layout (three servers with 1, 1 and 2 GPUs, 500 Mbit/s between them,
# DeepSeek-V2-Lite with 30% of a 40 GB GPU for experts, 30 simulated minutes). The paper's two workloads become:
#   * "BigBench" (each server its own task, Poisson 10 s): three SYNTHETIC Zipf-1.0 traces with distinct
#     popularity (seeds 1-3), 60 sequences of 32 prompt + 20 decode tokens each;
#   * "MultiData" (each server its own dataset, Poisson 20 s): three SYNTHETIC Zipf-0.8 traces (seeds 4-6),
#     60 sequences of 64 prompt + 20 decode tokens;
#   * a control without task skew: the bundled REAL Qwen3-30B-A3B trace on all three servers (Poisson 10 s).
# As in the paper, smartmoe, eplb and prism re-plan every 5 minutes (Eq. 4 decides), uniform and redundance never;
# smartmoe, eplb and prism also run without migration (-static), to separate the placement from its migrations.
# Usage: experiments/prism-table2/run.sh [BUILD_DIR] [OUT_DIR]
# Results: table2.csv comparisons.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -f "$out"/*.json "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
for s in 1 2 3; do
  q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --sequences 60 --prompt-tokens 32 --tokens 20 --seed $s \
    -o "$out/bigbench-task$s.mtr"
done
for s in 4 5 6; do
  q "$M" -q trace synth --model deepseek-v2-lite --zipf 0.8 --sequences 60 --prompt-tokens 64 --tokens 20 --seed $s \
    -o "$out/multidata-set$s.mtr"
done
mk() { q $py "$root/experiments/prism_cluster.py" "$@"; }
mk "$out/bigbench.servers.json" --model deepseek-v2-lite --hw server-a100-40gb --gpus 1,1,2 --gpu-memory 12GiB \
  --traces "$out/bigbench-task1.mtr,$out/bigbench-task2.mtr,$out/bigbench-task3.mtr" --arrival poisson:10s
mk "$out/multidata.servers.json" --model deepseek-v2-lite --hw server-a100-40gb --gpus 1,1,2 --gpu-memory 12GiB \
  --traces "$out/multidata-set4.mtr,$out/multidata-set5.mtr,$out/multidata-set6.mtr" --arrival poisson:20s
# Qwen3-30B-A3B's BF16 experts are 54 GiB: 30% of a 40 GB GPU (12 GiB) x 4 GPUs does not hold one copy; 18 GiB does.
mk "$out/real-qwen3.servers.json" --model qwen3-30b-a3b --hw server-a100-40gb --gpus 1,1,2 --gpu-memory 18GiB \
  --traces "$root/data/traces/qwen3-30b-a3b.route.csv,$root/data/traces/qwen3-30b-a3b.route.csv,$root/data/traces/qwen3-30b-a3b.route.csv" --arrival poisson:10s
. "$root/experiments/prism-table2/placements.sh"
placement_runs bigbench multidata real-qwen3
$py "$here/plot.py" "$out"
