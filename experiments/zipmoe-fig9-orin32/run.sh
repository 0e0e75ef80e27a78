#!/usr/bin/env bash
# ZipMoE Fig. 9 on the paper's second device (Hardware 2): end-to-end latency against the output length for the
# systems and traces of experiments/zipmoe-fig9 (whose run.sh this runs with SPEC.json here), simulated on a
# Jetson AGX Orin 32GB at 10 GiB (the paper's budget on that device in its Fig. 8; Fig. 9's text names none):
#   * REAL: prefixes of the bundled Qwen3-30B-A3B trace (its 28-token prompt and the first 16-128 decode tokens);
#   * SYNTHETIC: DeepSeek-V2-Lite and Qwen1.5-MoE-A2.7B, Zipf 1.0, 8 sequences of 32 prompt + 32-256 decode
#     tokens each (seed 7).
# Usage: experiments/zipmoe-fig9-orin32/run.sh [BUILD_DIR] [OUT_DIR]
# Results: results.csv latency.csv speedups.csv
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd) && root=$(cd "$here/../.." && pwd)
ZIPMOE_FIG9_SPEC="$here/SPEC.json" ZIPMOE_FIG9_PLOT="zipmoe-fig9-orin32|simulated Jetson AGX Orin 32GB, 10 GiB" \
  exec "$root/experiments/zipmoe-fig9/run.sh" "${1:-$root/build}" "${2:-$root/out/figures/zipmoe-fig9-orin32}"
