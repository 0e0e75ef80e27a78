#!/bin/bash
# Quiet call A (this branch's binary): the design pair (zipmoe seq7 -> seq8, b8 pair + b1) and the held-out
# pair (seeds 11 -> 12, b8 pair only).
d=$(dirname $0); M=/tmp/btc/moesim-h1  # this branch, copied from build/
$d/pair.sh $M ds zipmoe 7 8 8 /tmp/btc/q2
MORE= $d/pair.sh $M ds zipmoe 11 12 8 /tmp/btc/q2
