#!/usr/bin/env bash
# Prism Table II, its Mixtral-8x7B columns, and Fig. 6 for that model, in moesim (simulated): mean serve latency per
# server for the five placements on the paper's layout (three servers with 1, 1 and 2 GPUs, 500 Mbit/s between
# them, 30 simulated minutes) with Mixtral-8x7B (BF16 sizes: 84 GiB of experts) and 70% of a 40 GB GPU for
# experts (28 GiB), the paper's setting. experiments/prism-table2 is the DeepSeek-V2-Lite half; the workloads are
# its stand-ins on Mixtral's 32 layers x 8 experts, top-2, all SYNTHETIC (no Mixtral routing trace is bundled):
#   * "BigBench" (each server its own task, Poisson 10 s): three Zipf-1.0 traces with distinct popularity
#     (seeds 1-3), 60 sequences of 32 prompt + 20 decode tokens each;
#   * "MultiData" (each server its own dataset, Poisson 20 s): three Zipf-0.8 traces (seeds 4-6), 64 + 20 tokens;
#   * a control without task skew: the seed-1 "BigBench" trace on all three servers (Poisson 10 s).
# As in the paper, smartmoe, eplb and prism re-plan every 5 minutes (Eq. 4 decides), uniform and redundance never;
# smartmoe, eplb and prism also run without migration (-static). Plotted by prism-table2's plot.py.
# Usage: experiments/prism-table2-mixtral/run.sh [BUILD_DIR] [OUT_DIR]
# Results: table2.csv comparisons.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -f "$out"/*.json "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
synth() { q "$M" -q trace synth --model mixtral-8x7b "$@"; }
for s in 1 2 3; do
  synth --zipf 1.0 --sequences 60 --prompt-tokens 32 --tokens 20 --seed $s -o "$out/bigbench-$s.mtr"
done
for s in 4 5 6; do
  synth --zipf 0.8 --sequences 60 --prompt-tokens 64 --tokens 20 --seed $s -o "$out/multidata-$s.mtr"
done
mk() { q $py "$root/experiments/prism_cluster.py" "$1.servers.json" --model mixtral-8x7b --hw server-a100-40gb \
  --gpus 1,1,2 --gpu-memory 28GiB --traces "$2" --arrival "$3"; }
mk "$out/bigbench" "$out/bigbench-1.mtr,$out/bigbench-2.mtr,$out/bigbench-3.mtr" poisson:10s
mk "$out/multidata" "$out/multidata-4.mtr,$out/multidata-5.mtr,$out/multidata-6.mtr" poisson:20s
mk "$out/noskew" "$out/bigbench-1.mtr,$out/bigbench-1.mtr,$out/bigbench-1.mtr" poisson:10s
. "$root/experiments/prism-table2/placements.sh"
placement_runs bigbench multidata noskew
$py "$root/experiments/prism-table2/plot.py" "$out" mixtral
