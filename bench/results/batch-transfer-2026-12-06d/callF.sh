#!/bin/bash
# Quiet call F (this branch's binary): zipmoe on small-moe, design (7 -> 8) and held out (11 -> 12): b8 pair
# + b4 + b1.
d=$(dirname $0); M=/tmp/btc/moesim-b5
MORE="4 1" $d/pair.sh $M sm zipmoe 7 8 8 /tmp/btc/q5
MORE="4 1" $d/pair.sh $M sm zipmoe 11 12 8 /tmp/btc/q5
