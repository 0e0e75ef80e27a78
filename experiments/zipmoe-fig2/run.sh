#!/usr/bin/env bash
# ZipMoE Fig. 2: probability-mass heat maps of the BF16 exponent byte (256 symbols as a 16 x 16 grid) and its
# Shannon entropy, from `moesim weights stats --json`:
#   * REAL trained weights: tests/data/weights/faceres-subset.safetensors (a CNN, MIT; not LLM experts),
#     the whole file and each of its 8 tensors;
#   * SYNTHETIC Gaussian weights N(0, 0.02^2): moesim weights synth --size 4MiB (4 tensors of 512 x 1024).
# Usage: experiments/zipmoe-fig2/run.sh [BUILD_DIR] [OUT_DIR]
# Results: real.json synth.json exponents.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out"
"$M" -q weights stats tests/data/weights/faceres-subset.safetensors --json -o "$out/real.json"
"$M" -q weights synth --size 4MiB --std 0.02 --seed 1 -o "$out/synth.safetensors" > /dev/null
"$M" -q weights stats "$out/synth.safetensors" --json -o "$out/synth.json"
rm -f "$out/synth.safetensors"
$py "$here/plot.py" "$out"
