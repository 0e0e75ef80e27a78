#!/usr/bin/env bash
# judge.sh OUTDIR CELL... : per cell, main's binary and h-calls3's back to back (order alternating by cell).
# MINE: commit a752d9c (the paired chain's lead call as the cost), copied to /tmp/calls3/bin2. MAIN, MINE and
# CELLS (the cells' folder) may be given in the environment (../cluster-calls-2026-12-06b/judge.sh does).
O=$1; shift; MAIN=${MAIN:-/tmp/main-b6652e1/moesim}; MINE=${MINE:-/tmp/calls3/bin2/moesim}
mkdir -p $O; O=$(cd $O && pwd); cd ${CELLS:-/tmp/calls3/w}
n=0
for cell in "$@"; do
  spec=${cell%%:*}; p=${cell#*:}
  if [ $((n % 2)) = 0 ]; then order="main mine"; else order="mine main"; fi; n=$((n+1))
  for who in $order; do
    B=$MAIN; [ $who = mine ] && B=$MINE
    echo "$spec/$p $who start $(date -u +%T) load $(cut -d' ' -f1-4 /proc/loadavg)"
    timeout 200 $B -q validate --cluster $spec.servers.json --placement $p --duration 20s --repeat 3 --json -o $O/$spec.$p.$who.json > $O/$spec.$p.$who.log 2>&1 || echo rc=$?
  done
done
echo "end $(date -u +%T)"
