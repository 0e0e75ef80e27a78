#!/bin/bash
# The offload cells of call 1 again in another window (06e: the minute
# moves them 9-14 points; does the drift-adjusted error move less?).
d=$(dirname $0); M=${M:-/tmp/drift7/moesim}; O=${O:-/tmp/drift7/q5}
[ "$(date -u +%H%M)" -lt 2230 ] || { echo "too late: $(date -u +%T)"; exit 0; }
MORE=4 $d/pair3.sh $M ds offload 11 12 8 $O
MORE=4 $d/pair3.sh $M sm offload 11 12 8 $O
