#!/bin/bash
# Quiet call 2 (branch h-drift7's binary): zipmoe ds 11 -> 12 (b8 pair, b4; b1 where the call has time), every
# run x3: 06e's call 2 cells, with the drift probes.
d=$(dirname $0); M=${M:-/tmp/drift7/moesim}; O=${O:-/tmp/drift7/q2}
[ "$(date -u +%H%M)" -lt 2230 ] || { echo "too late: $(date -u +%T)"; exit 0; }
s0=$(date -u +%s)
MORE=4 $d/pair3.sh $M ds zipmoe 11 12 8 $O
# b1 x3 takes about 1:45: only where the call is still under 5:30 (the call then ends before 8 minutes)
[ $(( $(date -u +%s) - s0 )) -lt 330 ] && MORE=1 $d/pair3.sh $M ds zipmoe 11 12 0 $O || echo "b1 skipped"
