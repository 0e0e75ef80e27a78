#!/usr/bin/env bash
# run.sh BIN OUTDIR CELL... : one `validate --cluster` run (3 exec runs of 20 s) per cell with one binary, whose
# JSON holds main's cost (errors.cost) and the two candidates (errors.cost_bursts_slope, errors.cost_serve) on
# the same runs. Run it under /tmp/quiet-run.sh. CELLS: the cells' folder (../cluster-calls-2026-12-06/cells.sh
# makes it; only read).
BIN=$1 O=$2; shift 2
mkdir -p $O; O=$(cd $O && pwd); cd ${CELLS:-/tmp/calls5/w}
for cell in "$@"; do
  spec=${cell%%:*}; p=${cell#*:}
  echo "$spec/$p start $(date -u +%T) load $(cut -d' ' -f1-4 /proc/loadavg)"
  timeout 200 $BIN -q validate --cluster $spec.servers.json --placement $p --duration 20s --repeat 3 --json \
    -o $O/$spec.$p.json > $O/$spec.$p.log 2>&1 || echo rc=$?
done
echo "end $(date -u +%T)"
