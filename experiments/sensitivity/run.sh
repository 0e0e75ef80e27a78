#!/usr/bin/env bash
# What the offload-LRU vs ZipMoE comparison rests on: `moesim sensitivity` on SPEC.json (the bundled REAL
# Qwen3-30B-A3B routing with BF16 sizes, a simulated Jetson AGX Orin 64GB, 16 GiB), every assumption-marked
# profile field the runs read scaled by 0.5 and 2 (and by 0.1 and 10, in sensitivity-0.1-10.txt), then the tornado plot.
# Usage: experiments/sensitivity/run.sh [BUILD_DIR] [OUT_DIR]
# Results: sensitivity.txt sensitivity-0.1-10.txt sensitivity.json
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out"
"$M" -q sensitivity "$here/SPEC.json" --jobs 2 --json -o "$out/sensitivity.json"
"$M" -q sensitivity "$here/SPEC.json" --jobs 2 -o "$out/sensitivity.txt"
"$M" -q sensitivity "$here/SPEC.json" --jobs 2 --factors 0.1,10 -o "$out/sensitivity-0.1-10.txt"
$py "$here/plot.py" "$out"
