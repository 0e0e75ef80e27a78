#!/usr/bin/env bash
# ZipMoE Fig. 1: the share of decode time the GPU waits for experts (I/O stall), server against edge, for
# expert-level offloading (`moesim run --system offload --policy lru --scope layer`), simulated:
#   server: `--hw server-h100-nvme --host-budget 64GiB`, every expert in host DRAM behind the PCIe-class link
#           (the paper's "offloaded to CPU");
#   edge:   `--hw jetson-agx-orin-64gb`, every miss an O_DIRECT read from the NVMe SSD (3.5 GB/s);
# at GPU caches of 25% and 50% of the experts, each run warmed by a first pass of its trace (`--warm`: the
# steady state the paper's break-down measures). Traces: the bundled REAL Qwen3-30B-A3B routing (28 prompt +
# 128 decode tokens, BF16 sizes) and a SYNTHETIC DeepSeek-V2-Lite one (Zipf 1.0, 32 prompt + 64 decode tokens,
# seed 7). plot.py reads each run's --timeline: stall share = 1 - (GPU busy time in decode steps) / (decode time).
# Usage: experiments/zipmoe-fig1/run.sh [BUILD_DIR] [OUT_DIR]
# Results: fig1.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -f "$out"/*.timeline.json "$out"/*.run.json && : > "$out/run.log"
q() { "$@" 2>> "$out/run.log" || { cat "$out/run.log"; exit 1; }; }
q "$M" -q trace synth --model deepseek-v2-lite --zipf 1.0 --prompt-tokens 32 --tokens 64 --seed 7 -o "$out/deepseek.mtr"
for t in qwen3:qwen3-30b-a3b:data/traces/qwen3-30b-a3b.route.csv deepseek:deepseek-v2-lite:"$out/deepseek.mtr"; do
  IFS=: read -r name model trace <<< "$t"
  for b in 25 50; do
    for env in server:"--hw server-h100-nvme --host-budget 64GiB" edge:"--hw jetson-agx-orin-64gb"; do
      # shellcheck disable=SC2086
      q "$M" -q run "$trace" --model "$model" --system offload --policy lru --scope layer --budget "$b%" ${env#*:} --warm \
        --timeline "$out/$name-$b-${env%%:*}.timeline.json" --json -o "$out/$name-$b-${env%%:*}.run.json"
    done
  done
done
$py "$here/plot.py" "$out"
rm -f "$out"/*.timeline.json
