#!/bin/bash
# Quiet call C (this branch's second binary: the fused reads on the read line AND their decompression points
# without the read's CPU tail): the design pair and the held-out cells again, on fresh runs.
d=$(dirname $0); M=/tmp/btc/moesim-h2  # this branch, copied from build/
$d/pair.sh $M ds zipmoe 7 8 8 /tmp/btc/q3
MORE="4 1" $d/pair.sh $M ds zipmoe 11 12 8 /tmp/btc/q3
MORE="4 1" $d/pair.sh $M sm zipmoe 7 8 8 /tmp/btc/q3
MORE="4 1" $d/pair.sh $M sm zipmoe 11 12 8 /tmp/btc/q3
