#!/usr/bin/env bash
# ZipMoE Fig. 3: the size ratio (stored / BF16) each lossless codec reaches on the split format (exponent
# bytes compressed in K = 4 independent frames per tensor, sign+mantissa bytes raw), from `moesim pack` and
# `moesim store info --json`, against the order-0 entropy bound (8 + H) / 16 of `moesim weights stats`:
#   * REAL trained weights: tests/data/weights/faceres-subset.safetensors (a CNN, MIT; not LLM experts);
#   * SYNTHETIC Gaussian weights N(0, 0.02^2), 4 MiB (moesim weights synth --size: 4 tensors of 512 x 1024;
#     DeepSeek-V2-Lite's 2048 x 1408 shapes give the same ratios to 4 digits but take 10x longer at zstd:19).
# Usage: experiments/zipmoe-fig3/run.sh [BUILD_DIR] [OUT_DIR]
# Results: ratios.csv
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
cd "$root" && mkdir -p "$out"
codecs="lz4 lz4hc:4 lz4hc:9 lz4hc:12 zstd:1 zstd:3 zstd:9 zstd:19"
real=tests/data/weights/faceres-subset.safetensors
synth="$out/synth.safetensors"
"$M" -q weights synth --size 4MiB --std 0.02 --seed 1 -o "$synth" > /dev/null
echo "weights,codec,bf16_bytes,stored_bytes,e_bytes,sm_bytes,ratio,entropy_bits,bound_ratio" > "$out/ratios.csv"
for w in real synth; do
  if [ "$w" = real ]; then src=$real; extra=--all-tensors; else src=$synth; extra=; fi
  "$M" -q weights stats "$src" --json -o "$out/$w-stats.json"
  for c in $codecs; do
    "$M" -q pack --weights "$src" $extra --codec "$c" --shards 4 -o "$out/$w.store" > /dev/null
    "$M" -q store info "$out/$w.store" --json > "$out/$w-$c.json"
    python3 - "$w" "$c" "$out/$w-$c.json" "$out/$w-stats.json" >> "$out/ratios.csv" <<'PY'
import json, sys
w, c, info, stats = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
print(",".join(str(x) for x in (w, c, info["bf16_bytes"], info["stored_bytes"], info["e_bytes"], info["sm_bytes"],
                                info["ratio"], stats["entropy_bits"], stats["bound_ratio"])))
PY
  done
done
rm -f "$synth" "$out"/*.store
$py "$here/plot.py" "$out"
