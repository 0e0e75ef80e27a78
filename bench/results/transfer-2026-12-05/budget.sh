#!/usr/bin/env bash
# Budget transfer on small-moe: calibrated at one budget, validated at another (batch 1), offload and zipmoe.
set -euo pipefail
M=/work/main/build/moesim; D=${1:-/tmp/budget44/s1}; mkdir -p $D; cd $D
model=/work/main/tests/data/models/small-moe.json; real=/work/main/data/traces/qwen3-30b-a3b.route.csv
if [ ! -f z.store ]; then
  $M -q weights synth --model $model --seed 1 -o w.safetensors
  $M -q pack --weights w.safetensors --codec zstd:3 --shards 4 -o z.store
  $M -q pack --weights w.safetensors --codec raw --shards 1 -o r.store; rm -f w.safetensors
fi
for s in 7 8; do $M -q trace synth --fit $real --model $model --sequences 8 --tokens 32 --prompt-tokens 16 --seed $s -o seq$s.mtr 2>/dev/null; done
cat > matrix.json <<SPEC
{"description": "budget transfer on small-moe: calibrated at 64 or 96 MiB on seq7, validated at the other on seq8, batch 1",
 "models": [{"name": "small-moe", "model": "$model", "stores": {"zipmoe": "z.store", "offload": "r.store"}}],
 "traces": [{"name": "seq8-on-seq7", "validate": "seq8.mtr", "calibrate": "seq7.mtr"}],
 "systems": ["offload", {"system": "zipmoe", "options": ["--recover-on", "cpu"]}],
 "budgets": [{"calibrate": "64MiB", "validate": "96MiB"}, {"calibrate": "96MiB", "validate": "64MiB"}, {"calibrate": "64MiB", "validate": "128MiB"}],
 "batch": [1],
 "repeat": 3,
 "options": ["--workers", "2", "--gpu", "off"]}
SPEC
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)"
$M -q validate --matrix matrix.json --csv matrix.csv -o matrix.txt 2>run.log || true
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)"
head -12 matrix.txt
