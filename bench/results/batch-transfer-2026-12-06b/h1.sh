#!/bin/bash
# held-out: calibrate at b1 on seqA, validate seqB at b8 (--calibrate-on, interleaved, 2 pairs), then seqB at b4 and b1
# with that profile (one run each). usage: h1.sh MOESIM MODEL(ds|sm) SYS A B OUTDIR
set -e
M=$1; mod=$2; sys=$3; A=$4; B=$5; O=$6; W=/tmp/batch8/$mod; mkdir -p $O
if [ $mod = ds ]; then common="--model /tmp/batch8/ds.json --budget 256MiB --workers 2 --gpu off"
else common="--model /work/wt/batch8/tests/data/models/small-moe.json --budget 64MiB --workers 2 --gpu off"; fi
case $sys in offload) opts="--system offload --store $W/r.store";; zipmoe) opts="--system zipmoe --store $W/z.store --recover-on cpu";; esac
t=$mod-$sys-$A-$B
echo "$t start $(date -u +%T) load $(cat /proc/loadavg)"
$M validate $W/seq$B.mtr --calibrate-on $W/seq$A.mtr --calibrate-batch 1 --batch 8 --repeat 2 $opts $common \
  --profile-out $O/prof-$t.json --json -o $O/val-$t-b8.json 2> $O/val-$t-b8.log
for b in 4 1; do
  $M validate $W/seq$B.mtr --hw $O/prof-$t.json --batch $b --repeat 1 $opts $common --json -o $O/val-$t-b$b.json 2> $O/val-$t-b$b.log
done
echo "$t done $(date -u +%T) load $(cat /proc/loadavg)"
