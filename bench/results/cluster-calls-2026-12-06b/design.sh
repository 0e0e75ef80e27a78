#!/usr/bin/env bash
B=/tmp/calls2/bin3/moesim; cd /tmp/calls2/w; O=/tmp/calls2/d3; mkdir -p $O
for c in tiny trio; do
  echo "$c $(date -u +%T) $(cut -d' ' -f1-4 /proc/loadavg)"
  timeout 300 $B -q validate --cluster $c.servers.json --placement prism --duration 20s --repeat 3 --json -o $O/$c.prism.json > $O/$c.log 2>&1 || echo rc=$?
done
echo "end $(date -u +%T)"
