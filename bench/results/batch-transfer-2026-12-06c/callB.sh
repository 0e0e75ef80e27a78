#!/bin/bash
# Quiet call B (this branch's binary): the held-out scaled DeepSeek cell (seeds 11 -> 12) at b4 and b1 with
# call A's profile, and small-moe zipmoe, design (7 -> 8) and held out (11 -> 12): b8 pair + b4 + b1.
d=$(dirname $0); M=/tmp/btc/moesim-h1  # this branch, copied from build/
MORE="4 1" $d/pair.sh $M ds zipmoe 11 12 0 /tmp/btc/q2
MORE="4 1" $d/pair.sh $M sm zipmoe 7 8 8 /tmp/btc/q2
MORE="4 1" $d/pair.sh $M sm zipmoe 11 12 8 /tmp/btc/q2
