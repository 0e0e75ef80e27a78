#!/bin/bash
# Quiet call 5 (main f801bf3's binary): offload ds 11 -> 12 under call 1's profile (calibrated at b1 on seed 11,
# 17:47-17:49), more exec runs than three: b4 x5 and b8 x4, to see whether more runs decide the offload verdicts.
M=/tmp/main-f801bf3/moesim; O=/tmp/batch6/q5; mkdir -p $O; cp /tmp/batch6/q1/prof-ds-offload-11-12.json $O/
[ "$(date -u +%H%M)" -lt 1915 ] || { echo "too late: $(date -u +%T)"; exit 0; }
for br in "4 5" "8 4"; do set -- $br
  $M validate /tmp/btc/ds12.mtr --hw $O/prof-ds-offload-11-12.json --batch $1 --repeat $2 --system offload \
    --store /tmp/btc/ds/r.store --model /tmp/batch-transfer-cells/ds.json --budget 256MiB --workers 2 --gpu off \
    --json -o $O/val-ds-offload-11-12-b$1.json 2> $O/val-ds-offload-11-12-b$1.log
  echo "b$1 x$2 done $(date -u +%T) load $(cat /proc/loadavg)"
done
