#!/bin/bash
# Batched decode (4 sequences, --batch 4): experts of 2-4 tokens in decode steps, where the GEMM fixed cost is on TPOT's path.
set -e
# Run from a directory holding z.store and r.store as scripts/validate-machine packs them:
#   bash run.sh /path/to/moesim/checkout
root="${1:?the moesim checkout}"
M="$root/build/moesim"
T="$root/data/traces/qwen3-30b-a3b.route.csv"
$M trace synth --fit $T --sequences 4 --tokens 32 --prompt-tokens 28 --seed 7 -o cal4.mtr
$M trace synth --fit $T --sequences 4 --tokens 32 --prompt-tokens 28 --seed 11 -o val4.mtr
for sys in offload zipmoe; do
  store=z.store; extra=(--recover-on cpu)
  if [ $sys = offload ]; then store=r.store; extra=(); fi
  $M validate val4.mtr --model qwen3-30b-a3b-w4 --store $store --system $sys "${extra[@]}" --budget 1GiB --workers 2 --batch 4 \
    --calibrate-on cal4.mtr --repeat 3 --name b4-$sys --profile-out profile-$sys.json --csv errors-$sys.csv --json -o validate-$sys.json 2> stderr-$sys.txt
  echo "$sys done $(date -u +%H:%M:%S)"
done
