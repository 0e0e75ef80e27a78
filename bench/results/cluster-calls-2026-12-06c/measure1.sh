#!/usr/bin/env bash
# measure1.sh OUT: (/tmp/calls3/bin1: b6652e1 with measurement.patch) the probe binary (MOESIM_CALL_PROBE=1) on tiny/prism and trio/prism, --repeat 2.
O=$1; B=/tmp/calls3/bin1/moesim; cd /tmp/calls3/w; mkdir -p $O
for cell in tiny:prism trio:prism; do
  spec=${cell%%:*}; p=${cell#*:}
  echo "$spec/$p probe start $(date -u +%T) load $(cut -d' ' -f1-4 /proc/loadavg)"
  MOESIM_CALL_PROBE=1 timeout 200 $B -q validate --cluster $spec.servers.json --placement $p --duration 20s --repeat 2 --json -o $O/$spec.$p.probe.json > $O/$spec.$p.probe.log 2>&1 || echo rc=$?
done
echo "end $(date -u +%T)"
