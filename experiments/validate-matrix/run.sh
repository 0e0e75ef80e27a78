#!/usr/bin/env bash
# The held-out validation matrix on a small model (docs/exec.md, "A held-out matrix"): offload and zipmoe x two
# budgets (64 and 96 MiB) x batch 1, 4, and 4 and 8 with the profile calibrated at batch 1 (transfer cells,
# "b1->4", "b1->8") on tests/data/models/small-moe.json (8 layers x 32 experts, top-4, 144 MiB of BF16
# experts, synthetic weights), each cell calibrated on one set of 8 sequences and validated on another: two
# traces of the model's shape fitted to the bundled Qwen3 trace with different seeds (a reshaped fit,
# docs/synth.md), neither derived from the other. Writes OUT/matrix.json (the spec), OUT/matrix.txt (the table),
# OUT/matrix.csv (a row per cell), OUT/run.log (calibration's notes, warnings) and the heat map
# OUT/validate-matrix.{png,pdf}. The stores and traces are
# reused when present. About 4 minutes on a 2-core VM.
# Usage: experiments/validate-matrix/run.sh [BUILD_DIR] [OUT_DIR]
# Results: matrix.csv matrix.txt
# Measured: matrix.csv matrix.txt
# Environment: MOESIM_MATRIX_REPEAT (calibration runs per cell, each followed by an exec run of the validated
# trace; default 3), MOESIM_MATRIX_BUDGETS (the budgets as a JSON list's items, default '"64MiB", "96MiB"'),
# MOESIM_MATRIX_TOKENS (decode tokens per sequence, default 32), MOESIM_MATRIX_OPTIONS (extra
# options of every cell, as a JSON list's items: '"--io", "uring"').
set -euo pipefail
. "$(dirname "$0")/../lib.sh"  # here, root, M, out, py
mkdir -p "$out" && cd "$out"
model="$root/tests/data/models/small-moe.json"
real="$root/data/traces/qwen3-30b-a3b.route.csv"
tokens="${MOESIM_MATRIX_TOKENS:-32}"
if [ ! -f z.store ] || [ ! -f r.store ]; then
  "$M" -q weights synth --model "$model" --seed 1 -o w.safetensors
  "$M" -q pack --weights w.safetensors --codec zstd:3 --shards 4 -o z.store
  "$M" -q pack --weights w.safetensors --codec raw --shards 1 -o r.store
  rm -f w.safetensors
fi
for s in 7 8; do
  "$M" -q trace synth --fit "$real" --model "$model" --sequences 8 --tokens "$tokens" --prompt-tokens 16 \
    --seed "$s" -o "seq$s.mtr" 2>/dev/null
done
extra="${MOESIM_MATRIX_OPTIONS:-}"
budgets="${MOESIM_MATRIX_BUDGETS:-\"64MiB\", \"96MiB\"}"
cat > matrix.json <<SPEC
{"description": "offload and zipmoe x two budgets x batch 1, 4, 1->4 and 1->8 on small-moe; calibrated on seq7, validated on seq8",
 "models": [{"name": "small-moe", "model": "$model", "stores": {"zipmoe": "z.store", "offload": "r.store"}}],
 "traces": [{"name": "seq8-on-seq7", "validate": "seq8.mtr", "calibrate": "seq7.mtr"}],
 "systems": ["offload", {"system": "zipmoe", "options": ["--recover-on", "cpu"]}],
 "budgets": [$budgets],
 "batch": [1, 4, {"calibrate": 1, "validate": 4}, {"calibrate": 1, "validate": 8}],
 "repeat": ${MOESIM_MATRIX_REPEAT:-3},
 "options": ["--workers", "2", "--gpu", "off"${extra:+, $extra}]}
SPEC
status=0  # a failed cell: the table and the CSV say which and why; the plot is still drawn
"$M" -q validate --matrix matrix.json --csv matrix.csv -o matrix.txt 2>run.log || status=$?
cat matrix.txt
if "$py" -c 'import matplotlib' 2>/dev/null; then "$py" "$here/plot.py" "$out"; else echo "no matplotlib: no heat map"; fi
exit "$status"
