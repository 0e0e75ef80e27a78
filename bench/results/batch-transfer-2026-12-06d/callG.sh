#!/bin/bash
# Quiet call G (this branch's binary): the two held-out b1 cells whose verdict call E/F lost, again with the
# same profiles (call E's and F's), three runs each (--repeat 3), to tell the cell from its run's minute.
d=$(dirname $0); M=/tmp/btc/moesim-b5; O=/tmp/btc/q6; mkdir -p $O
# (the session's stop: nothing starts after 16:28 UTC, when the lock came late)
[ "$(date -u +%H%M)" -lt 1628 ] || { echo "too late: $(date -u +%T)"; exit 0; }
for mod in ds sm; do
  cp /tmp/btc/q5/prof-$mod-zipmoe-11-12.json $O/
  if [ $mod = ds ]; then common="--model /tmp/batch-transfer-cells/ds.json --budget 256MiB"
  else common="--model ${SM_MODEL:-$d/../../../tests/data/models/small-moe.json} --budget 64MiB"; fi
  $M validate /tmp/btc/${mod}12.mtr --hw $O/prof-$mod-zipmoe-11-12.json --batch 1 --repeat 3 --system zipmoe \
    --store /tmp/btc/$mod/z.store --recover-on cpu $common --workers 2 --gpu off --json \
    -o $O/val-$mod-zipmoe-11-12-b1.json 2> $O/val-$mod-zipmoe-11-12-b1.log
  echo "$mod b1 x3 done $(date -u +%T) load $(cat /proc/loadavg)"
done
