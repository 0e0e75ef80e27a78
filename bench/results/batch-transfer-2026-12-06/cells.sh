#!/usr/bin/env bash
# The decisive batch-transfer cells of bench/results/batch-transfer-2026-12-06.md: a profile calibrated at
# batch 1 on one trace (seq7), validated at batch 1, 4 and 8 on another (seq8), for offload and zipmoe
# (--recover-on cpu), on the scaled DeepSeek-V2-Lite (hidden 512, expert width 352, 256 MiB) and on small-moe
# (tests/data/models/small-moe.json, 64 MiB); CPU only (--gpu off, --workers 2). Prints one line per cell with
# the cost and structure TPOT errors (validate JSON errors.*.tpot), and in brackets the cost error simulated
# with `moesim run` under the profile as calibrate makes it (the median of the runs' own fits) and under the
# fit over all calibration runs' ops (pooled.py), against the same exec runs.
#
#   bench/results/batch-transfer-2026-12-06/cells.sh BUILD_DIR [WORK_DIR]
#
# WORK_DIR (default /tmp/batch-transfer-cells) keeps the weights, stores and traces between invocations: the
# first one makes them (the scaled DeepSeek's zstd store takes a few minutes on 2 cores), later ones reuse
# them. Environment: CAL_REPEAT (calibrate --repeat, default 3), VAL_REPEAT (validate --repeat, default 2),
# MODELS ("ds sm" by default), SYSTEMS ("offload zipmoe"), DS_BATCHES (the scaled DeepSeek's validated batches,
# "1 8" by default: its runs wait on the disk, and b4 as well would take the script past 15 minutes) and
# SM_BATCHES (small-moe's, "1 4 8"). Run it on a quiet machine: the errors of a loaded one are the load's
# (bench/results/batch-transfer-2026-12-05.md).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [WORK_DIR]" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
M="$(cd "$1" && pwd)/moesim"
W="${2:-/tmp/batch-transfer-cells}"
[ -x "$M" ] || { echo "$M: no moesim binary there" >&2; exit 2; }
mkdir -p "$W"
real="$root/data/traces/qwen3-30b-a3b.route.csv"

# The scaled DeepSeek-V2-Lite: the preset with hidden 512, expert (and shared-expert) width 352 and 1 Mi
# attention parameters per layer.
python3 - "$root/data/models/deepseek-v2-lite.json" "$W/ds.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m['hidden_size']['value'] = 512
m['expert_intermediate_size']['value'] = 352
m['shared_expert_intermediate_size']['value'] = 352
m['attention_params_per_layer']['value'] = 1048576
m['expert_tensors'] = [{"name": "gate_proj", "shape": [352, 512]}, {"name": "up_proj", "shape": [352, 512]},
                       {"name": "down_proj", "shape": [512, 352]}]
json.dump(m, open(sys.argv[2], 'w'), indent=1)
PY

setup() {  # DIR MODEL
  local d=$1 model=$2
  mkdir -p "$d"
  if [ ! -f "$d/z.store" ] || [ ! -f "$d/r.store" ]; then
    "$M" -q weights synth --model "$model" --seed 1 -o "$d/w.safetensors"
    "$M" -q pack --weights "$d/w.safetensors" --codec zstd:3 --shards 4 -o "$d/z.store"
    "$M" -q pack --weights "$d/w.safetensors" --codec raw --shards 1 -o "$d/r.store"
    rm -f "$d/w.safetensors"
  fi
  for s in 7 8; do
    [ -f "$d/seq$s.mtr" ] || "$M" -q trace synth --fit "$real" --model "$model" --sequences 8 --tokens 32 \
      --prompt-tokens 16 --seed $s -o "$d/seq$s.mtr"
  done
}

start=$(date +%s)
for model in ${MODELS:-ds sm}; do
  case $model in
    ds) mfile="$W/ds.json"; budget=256MiB; batches=${DS_BATCHES:-1 8} ;;
    sm) mfile="$root/tests/data/models/small-moe.json"; budget=64MiB; batches=${SM_BATCHES:-1 4 8} ;;
    *) echo "unknown model $model (ds or sm)" >&2; exit 2 ;;
  esac
  d="$W/$model"
  setup "$d" "$mfile"
  common=(--model "$mfile" --budget "$budget" --workers 2 --gpu off)
  for sys in ${SYSTEMS:-offload zipmoe}; do
    case $sys in
      offload) opts=(--system offload --store "$d/r.store") ;;
      zipmoe) opts=(--system zipmoe --store "$d/z.store" --recover-on cpu) ;;
      *) echo "unknown system $sys" >&2; exit 2 ;;
    esac
    t0=$(date +%s)
    "$M" -q calibrate "$d/seq7.mtr" "${opts[@]}" "${common[@]}" --batch 1 --repeat "${CAL_REPEAT:-3}" \
      -o "$d/prof-$sys.json" 2> "$d/cal-$sys.log"
    for b in $batches; do
      "$M" -q validate "$d/seq8.mtr" "${opts[@]}" "${common[@]}" --batch "$b" --hw "$d/prof-$sys.json" \
        --repeat "${VAL_REPEAT:-2}" --json -o "$d/val-$sys-b$b.json" 2> "$d/val-$sys-b$b.log"
      line=$(python3 - "$d/val-$sys-b$b.json" "$model" "$sys" "$b" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
e = j['errors']
print('%-3s %-8s b1->%s  cost TPOT %+6.1f%%  structure TPOT %+6.1f%%' % (sys.argv[2], sys.argv[3], sys.argv[4],
      100 * e['cost']['tpot'], 100 * e['structure']['tpot']))
PY
)
      # The candidate estimator (the fit over all calibration runs' ops), simulated against the same exec runs.
      echo "$line   [$("$here/pooled.py" "$M" "$d/prof-$sys.json" "$d/val-$sys-b$b.json" "$b" -- "$d/seq8.mtr" \
        "${opts[@]}" "${common[@]}")]"
    done
    echo "    ($model $sys: $(( $(date +%s) - t0 )) s; load average $(cut -d' ' -f1-3 /proc/loadavg))"
  done
done
echo "all cells: $(( $(date +%s) - start )) s"
