#!/usr/bin/env bash
# Fig. 14 of "Mixture of Cache-Conditional Experts for Efficient Mobile Device Inference" (Appendix D), the
# miss-rate side: Fig. 4's trade-off curves -- Pruning, Max-Rank, Cumsum-Threshold and Cache-Prior, each swept over
# its hyperparameter, LRU underneath -- with a quarter of the experts cached per layer instead of half. It is
# experiments/cce-fig4/run.sh with CCE_CACHE_DIVISOR=4: the same SYNTHETIC traces with logits for the paper's four
# models (Zipf 1.0, 1,024 tokens) and the bundled REAL traces with SYNTHETIC logits.
# Writes OUT/cce-fig14.csv, OUT/cce-fig14-halving.csv and OUT/cce-fig14.{png,pdf}.
# Usage: experiments/cce-fig14/run.sh [BUILD_DIR] [OUT_DIR]
# Results: cce-fig14.csv cce-fig14-halving.csv
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
CCE_CACHE_DIVISOR=4 CCE_FIGURE=cce-fig14 exec "$root/experiments/cce-fig4/run.sh" "${1:-$root/build}" \
  "${2:-$root/out/figures/cce-fig14}"
