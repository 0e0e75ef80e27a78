#!/bin/bash
# step 1: one interleaved pair per system (cal b1 seq7, val b8 seq8, --calibrate-on), then b1 on seq8 with that profile
# usage: m1.sh MOESIM SYS OUTDIR
set -e
M=$1; sys=$2; O=$3; W=/tmp/batch8/ds; mkdir -p $O
common="--model /tmp/batch8/ds.json --budget 256MiB --workers 2 --gpu off"
case $sys in offload) opts="--system offload --store $W/r.store";; zipmoe) opts="--system zipmoe --store $W/z.store --recover-on cpu";; esac
echo "$sys start $(date -u +%T) load $(cat /proc/loadavg)"
$M validate $W/seq8.mtr --calibrate-on $W/seq7.mtr --calibrate-batch 1 --batch 8 --repeat 2 $opts $common \
  --timeline $O/$sys-b8 --profile-out $O/prof-$sys.json --json -o $O/val-$sys-b8.json 2> $O/val-$sys-b8.log
echo "$sys b8 done $(date -u +%T) load $(cat /proc/loadavg)"
$M validate $W/seq8.mtr --hw $O/prof-$sys.json --batch 1 --repeat 1 $opts $common \
  --timeline $O/$sys-b1 --json -o $O/val-$sys-b1.json 2> $O/val-$sys-b1.log
echo "$sys b1 done $(date -u +%T) load $(cat /proc/loadavg)"
