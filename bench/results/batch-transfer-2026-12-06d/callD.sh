#!/bin/bash
# Quiet call D (main 164d660's binary): the held-out scaled DeepSeek offload cell, seeds 11 -> 12, calibrated
# at b1 on seed 11; validated at b8 (--repeat 2, pair.sh) and at b4 (--repeat 2) with that profile.
d=$(dirname $0); M=/tmp/main-164d660/moesim; O=/tmp/btc/q4; W=/tmp/btc/ds
MORE= $d/pair.sh $M ds offload 11 12 8 $O
$M validate /tmp/btc/ds12.mtr --hw $O/prof-ds-offload-11-12.json --batch 4 --repeat 2 --system offload \
  --store $W/r.store --model /tmp/batch-transfer-cells/ds.json --budget 256MiB --workers 2 --gpu off \
  --timeline $O/ds-offload-11-12-b4 --json -o $O/val-ds-offload-11-12-b4.json 2> $O/val-ds-offload-11-12-b4.log
echo "b4 done $(date -u +%T) load $(cat /proc/loadavg)"
