#!/bin/bash
# Quiet call 3 (this branch's binary, copied to /tmp/batch6/moesim-b6: calibrate writes gpu.fresh_expert_overhead):
# call 1's cells again in another window (offload ds and small-moe 11 -> 12: b8 pair, b4; zipmoe small-moe
# 11 -> 12: b8 pair, b4, b1), every run x3. Not part of the pre-registered judgement (calls 1 and 2): a second
# window for the verdicts, and the branch's own calibrate on real runs.
d=$(dirname $0); M=/tmp/batch6/moesim-b6; O=/tmp/batch6/q3
[ "$(date -u +%H%M)" -lt 1920 ] || { echo "too late: $(date -u +%T)"; exit 0; }
TL=1 MORE=4 $d/pair3.sh $M ds offload 11 12 8 $O
MORE=4 $d/pair3.sh $M sm offload 11 12 8 $O
MORE="4 1" $d/pair3.sh $M sm zipmoe 11 12 8 $O
