#!/bin/bash
# Quiet call E (this branch's binary, copied to /tmp/btc/moesim-b5): zipmoe on the scaled DeepSeek, the design
# pair (seq7 -> seq8: b8 pair + b1) and the held-out pair (seeds 11 -> 12: b8 pair + b4 + b1).
d=$(dirname $0); M=/tmp/btc/moesim-b5
MORE=1 $d/pair.sh $M ds zipmoe 7 8 8 /tmp/btc/q5
MORE="4 1" $d/pair.sh $M ds zipmoe 11 12 8 /tmp/btc/q5
