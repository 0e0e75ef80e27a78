#!/bin/bash
# Quiet call 1 (main f801bf3's binary): offload ds and small-moe 11 -> 12 (b8 pair, b4), zipmoe small-moe
# 11 -> 12 (b8 pair, b4, b1), every run x3.
d=$(dirname $0); M=/tmp/main-f801bf3/moesim; O=/tmp/batch6/q1
[ "$(date -u +%H%M)" -lt 1920 ] || { echo "too late: $(date -u +%T)"; exit 0; }
TL=1 MORE=4 $d/pair3.sh $M ds offload 11 12 8 $O
MORE=4 $d/pair3.sh $M sm offload 11 12 8 $O
MORE="4 1" $d/pair3.sh $M sm zipmoe 11 12 8 $O
