#!/bin/bash
# One interleaved pair per system: calibrate at b1 on trace A, validate trace B at batch BV (--calibrate-on,
# --repeat 2, timelines), then B at each batch of $MORE (default 1) with that profile (one run each, timeline).
# usage: [MORE="4 1"] pair.sh MOESIM MODEL(ds|sm) SYS A B BV OUTDIR  (W=/tmp/btc: ds/, sm/ stores, seqN.mtr or dsN.mtr)
# With BV=0 no pair runs: only the $MORE validations, with OUTDIR/prof-MODEL-SYS-A-B.json from an earlier call.
set -e
M=$1; mod=$2; sys=$3; A=$4; B=$5; BV=$6; O=$7; W=/tmp/btc/$mod; mkdir -p $O
tr() { if [ -f $W/seq$1.mtr ]; then echo $W/seq$1.mtr; else echo /tmp/btc/$mod$1.mtr; fi; }
if [ $mod = ds ]; then common="--model /tmp/batch-transfer-cells/ds.json --budget 256MiB --workers 2 --gpu off"
else common="--model ${SM_MODEL:-$(dirname $0)/../../../tests/data/models/small-moe.json} --budget 64MiB --workers 2 --gpu off"; fi
case $sys in offload) opts="--system offload --store $W/r.store";; zipmoe) opts="--system zipmoe --store $W/z.store --recover-on cpu";; esac
t=$mod-$sys-$A-$B
echo "$t start $(date -u +%T) load $(cat /proc/loadavg)"
[ $BV = 0 ] || $M validate $(tr $B) --calibrate-on $(tr $A) --calibrate-batch 1 --batch $BV --repeat 2 $opts $common \
  --timeline $O/$t-b$BV --profile-out $O/prof-$t.json --json -o $O/val-$t-b$BV.json 2> $O/val-$t-b$BV.log
echo "$t b$BV done $(date -u +%T) load $(cat /proc/loadavg)"
for b in ${MORE-1}; do
  $M validate $(tr $B) --hw $O/prof-$t.json --batch $b --repeat 1 $opts $common \
    --timeline $O/$t-b$b --json -o $O/val-$t-b$b.json 2> $O/val-$t-b$b.log
  echo "$t b$b done $(date -u +%T) load $(cat /proc/loadavg)"
done
