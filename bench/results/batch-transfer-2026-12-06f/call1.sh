#!/bin/bash
# Quiet call 1 (branch h-drift7's binary, /tmp/drift7/moesim): offload ds and small-moe 11 -> 12 (b8 pair, b4),
# zipmoe small-moe 11 -> 12 (b8 pair, b4, b1), every run x3: 06e's call 1 cells, with the drift probes.
d=$(dirname $0); M=${M:-/tmp/drift7/moesim}; O=${O:-/tmp/drift7/q1}
[ "$(date -u +%H%M)" -lt 2230 ] || { echo "too late: $(date -u +%T)"; exit 0; }
MORE=4 $d/pair3.sh $M ds offload 11 12 8 $O
MORE=4 $d/pair3.sh $M sm offload 11 12 8 $O
MORE="4 1" $d/pair3.sh $M sm zipmoe 11 12 8 $O
