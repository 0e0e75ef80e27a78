#!/usr/bin/env bash
# Prism Table I (§II-B, "Average inference latency across different methods") in moesim (simulated): mean latency
# per server and overall of three ways to serve Mixtral-8x7B on the paper's three edge servers (1, 1 and 2 A100
# 40GB GPUs, 70% of each for experts: 28 GiB; 500 Mbit/s between them), each server with its own request type:
#   * MoE-Infinity: each server alone with the whole model, experts in host RAM, an LFU expert cache per GPU,
#     misses loaded over PCIe (`--system moe-infinity`);
#   * MoE-Infinity (w/ LB): the same, each arriving request run by the server with the fewest requests in
#     flight per GPU (`--system moe-infinity:redirect=1`);
#   * Naive Collaboration: experts placed at random, one copy each (`--placement uniform`), remote expert calls;
#   * controls: the redundant random placement (`--placement redundance`), MoE-Infinity with an LRU cache, and
#     the three methods on requests with 4 generated tokens instead of 20 (BIG-bench's answers are short).
# The workload is SYNTHETIC (no Mixtral routing trace is bundled): experiments/prism-table2-mixtral's "BigBench"
# stand-ins, three Zipf-1.0 traces with distinct popularity (seeds 1-3), 60 sequences of 32 prompt + 20 decode
# tokens each, Poisson arrivals every 20 s per server (and 10 s), 30 simulated minutes, seed 1.
# Usage: experiments/prism-table1/run.sh [BUILD_DIR] [OUT_DIR]
# Results: table1.csv comparisons.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out" && rm -f "$out"/*.json "$out/run.log"
q() { "$@" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }; }
for s in 1 2 3; do
  q "$M" -q trace synth --model mixtral-8x7b --zipf 1.0 --sequences 60 --prompt-tokens 32 --tokens 20 --seed $s \
    -o "$out/bigbench-$s.mtr"
  # A control with BIG-bench-like short answers: the same prompts' experts, 4 generated tokens.
  q "$M" -q trace synth --model mixtral-8x7b --zipf 1.0 --sequences 60 --prompt-tokens 32 --tokens 4 --seed $s \
    -o "$out/short-$s.mtr"
done
q $py "$root/experiments/prism_cluster.py" "$out/servers-short-20.json" --model mixtral-8x7b --hw server-a100-40gb \
  --gpus 1,1,2 --gpu-memory 28GiB --traces "$out/short-1.mtr,$out/short-2.mtr,$out/short-3.mtr" --arrival poisson:20s
# The paper does not give Table I's arrival rate: Poisson 20 s per server, where every method keeps up, and
# prism-table2-mixtral's 10 s, where MoE-Infinity's one-GPU servers do not (without redirection).
for rate in 20 10; do
  q $py "$root/experiments/prism_cluster.py" "$out/servers-$rate.json" --model mixtral-8x7b --hw server-a100-40gb \
    --gpus 1,1,2 --gpu-memory 28GiB --traces "$out/bigbench-1.mtr,$out/bigbench-2.mtr,$out/bigbench-3.mtr" \
    --arrival poisson:${rate}s
done
run() { local name=$1 rate=$2; shift 2
  q "$M" -q cluster "$out/servers-$rate.json" "$@" --duration 30m --seed 1 --json -o "$out/$name.$rate.json"; }
for rate in 20 10; do
  run moe-infinity $rate --system moe-infinity
  run moe-infinity-lb $rate --system moe-infinity:redirect=1
  run naive $rate --placement uniform
done
# Controls, at 20 s: the redundant random placement, MoE-Infinity with an LRU expert cache, and the three
# methods on requests of 32 + 4 tokens.
run naive-redundance 20 --placement redundance
run moe-infinity-lru 20 --system moe-infinity:cache=lru
run moe-infinity-short short-20 --system moe-infinity
run moe-infinity-lb-short short-20 --system moe-infinity:redirect=1
run naive-short short-20 --placement uniform
$py "$here/plot.py" "$out"
