#!/usr/bin/env bash
# Calibration spread measurement (h-calls2): design cells with the measurement binary.
B=/tmp/calls2/bin1/moesim; cd /tmp/calls2/w; O=/tmp/calls2/m1; mkdir -p $O
for c in tiny trio; do
  echo "$c full $(date -u +%T) $(cut -d' ' -f1-4 /proc/loadavg)"
  timeout 300 $B -q validate --cluster $c.servers.json --placement prism --duration 20s --repeat 3 --json -o $O/$c.prism.json > $O/$c.log 2>&1 || echo rc=$?
done
for c in tiny trio; do for i in 1 2 3 4; do
  echo "$c cal $i $(date -u +%T) $(cut -d' ' -f1-4 /proc/loadavg)"
  timeout 60 $B -q validate --cluster $c.servers.json --placement prism --duration 3s --repeat 1 --json -o $O/$c.cal$i.json > $O/$c.cal$i.log 2>&1 || echo rc=$?
done; done
echo "end $(date -u +%T)"
