#!/usr/bin/env bash
# The call-bound end of `validate --cluster` (bench/results/cluster-calls-2026-12-06.md): one binary's
# validate run per cell, each under the machine's quiet lock (/tmp/quiet.lock) for that cell alone.
#   CELLS="tiny:prism trio:prism" cells.sh MOESIM WORKDIR
# Cells of bench/results/cluster-calls-2026-12-05/cells.sh (tiny, line, qwen3 from cluster-exec-2026-11-28;
# pair, star, trio), and two new ones fixed before any run of this change: quad (four servers of 1, 2, 1 and
# 1 GPUs, 500 Mbit/s and 1 ms, Zipf 1.0 traces of seeds 30-33, Poisson every second) and pair2 (pair with
# traces of seeds 40 and 41).
set -uo pipefail
BIN=$1 W=$2
here=$(cd "$(dirname "$0")" && pwd); src=$here/../cluster-exec-2026-11-28; models=$here/../../../tests/data/models
mkdir -p "$W" && cd "$W"
cp "$models/tiny-moe.json" .
syn() { [ -f t$2.mtr ] || nice -n 19 $BIN -q trace synth --model tiny-moe.json --zipf $1 --sequences 20 --prompt-tokens $3 --tokens $4 --seed $2 -o t$2.mtr; }
for s in 1 2 3; do syn 1.0 $s 16 8; done
for s in 4 5 6 7; do syn 0.8 $s 24 12; done
for s in 10 11 12 13; do syn 0.9 $s 20 10; done
for s in 20 21 22; do syn 1.1 $s 16 12; done
for s in 8 9 40 41; do syn 1.2 $s 12 10; done
for s in 30 31 32 33; do syn 1.0 $s 16 10; done
for c in tiny line; do sed 's#"../../../tests/data/models/tiny-moe.json"#"tiny-moe.json"#' "$src/$c.servers.json" > $c.servers.json; done
cp "$here"/{pair,pair2,star,trio,quad}.servers.json .
sed 's#"../../../tests/data/models/#"'"$models"'/#; s#"../../../data/traces/#"'"$here"'/../../../data/traces/#' \
  "$src/qwen3.servers.json" > qwen3.servers.json
cp "$src"/at?.txt .
for cell in $CELLS; do
  spec=${cell%%:*}; p=${cell#*:}
  duration=20s; [ $spec = qwen3 ] && duration=1s
  flock /tmp/quiet.lock bash -c "echo \"$spec $p: load \$(cut -d' ' -f1-4 /proc/loadavg) \$(date -u +%H:%M:%S)\";
    timeout 400 nice -n 0 $BIN -q validate --cluster $spec.servers.json --placement $p --duration $duration --repeat 3 \
      --json -o $spec.$p.json > $spec.$p.log 2>&1 || echo rc=\$?; echo \"  end \$(date -u +%H:%M:%S)\""
  python3 - "$spec.$p.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); c = j['calibration']; e = j['errors']
pc = lambda k: [round(100 * x, 1) for x in e[k]['runs']] if k in e else None
print('  cost', pc('cost'), 'line (before)', pc('cost_line'), 'structure', pc('structure'),
      'exec ms %.1f' % (1e3 * j['exec']['median']),
      'line us %.0f + %.0f' % (1e6 * c['call_overhead_s'], 1e6 * c['call_overhead_per_inflight_s']))
PY
done
