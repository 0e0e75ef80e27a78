#!/bin/bash
# One held-out cell with three runs everywhere: calibrate at b1 on trace A interleaved with B at batch BV
# (`validate --calibrate-on --calibrate-batch 1 --repeat 3`: three calibration runs, so the profile takes the
# median of the runs' own fits), then B at each batch of $MORE with that profile (--repeat 3 each).
# usage: [MORE="4 1"] [TL=1] pair3.sh MOESIM MODEL(ds|sm) SYS A B BV OUTDIR   (/tmp/btc: ds/, sm/ stores, dsN.mtr, smN.mtr)
# With BV=0 no pair runs: only the $MORE validations, with OUTDIR/prof-MODEL-SYS-A-B.json from an earlier call.
# TL=1 writes timelines (validate --timeline) for per-op analysis.
set -e
M=$1; mod=$2; sys=$3; A=$4; B=$5; BV=$6; O=$7; W=/tmp/btc/$mod; mkdir -p $O
if [ $mod = ds ]; then common="--model /tmp/batch-transfer-cells/ds.json --budget 256MiB --workers 2 --gpu off"
else common="--model ${SM_MODEL:-$(dirname $0)/../../../tests/data/models/small-moe.json} --budget 64MiB --workers 2 --gpu off"; fi
case $sys in offload) opts="--system offload --store $W/r.store";; zipmoe) opts="--system zipmoe --store $W/z.store --recover-on cpu";; esac
t=$mod-$sys-$A-$B
tl() { [ -z "${TL-}" ] || echo "--timeline $O/$t-b$1"; }
echo "$t start $(date -u +%T) load $(cat /proc/loadavg)"
[ $BV = 0 ] || $M validate /tmp/btc/$mod$B.mtr --calibrate-on /tmp/btc/$mod$A.mtr --calibrate-batch 1 --batch $BV --repeat 3 $opts $common \
  $(tl $BV) --profile-out $O/prof-$t.json --json -o $O/val-$t-b$BV.json 2> $O/val-$t-b$BV.log
echo "$t b$BV done $(date -u +%T) load $(cat /proc/loadavg)"
for b in ${MORE-4}; do
  $M validate /tmp/btc/$mod$B.mtr --hw $O/prof-$t.json --batch $b --repeat 3 $opts $common \
    $(tl $b) --json -o $O/val-$t-b$b.json 2> $O/val-$t-b$b.log
  echo "$t b$b done $(date -u +%T) load $(cat /proc/loadavg)"
done
