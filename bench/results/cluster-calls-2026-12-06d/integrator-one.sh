#!/usr/bin/env bash
# integrator-one.sh BIN OUTDIR CELL... : one validate --cluster per cell (20 s, 3 runs) from the cells folder of
# ../cluster-calls-2026-12-06/cells.sh (here /tmp/calls3/w), printing each line's cost errors on the same runs.
B=$1; O=$2; shift 2; mkdir -p $O; O=$(cd $O && pwd); cd /tmp/calls3/w
for cell in "$@"; do
  spec=${cell%%:*}; p=${cell#*:}
  echo "$spec/$p start $(date -u +%T) load $(cut -d' ' -f1-4 /proc/loadavg)"
  timeout 300 $B -q validate --cluster $spec.servers.json --placement $p --duration 20s --repeat 3 --json -o $O/$spec.$p.json > $O/$spec.$p.log 2>&1 || echo rc=$?
  python3 - $O/$spec.$p.json <<'PY'
import json,sys
j=json.load(open(sys.argv[1])); e=j['errors']; c=j['calibration']
f=lambda k:' '.join('%+.1f'%(100*x) for x in e[k]['runs'])
print('  cost [%s] overlap [%s] means [%s] lead [%s] struct [%s] | line %.0f+%.0f overlap %.0f+%.0f exec ms %s'%(
 f('cost'),f('cost_overlap'),f('cost_burst_means'),f('cost_lead_call')+'] olead ['+f('cost_overlap_lead'),f('structure'),
 1e6*c['call_overhead_s'],1e6*c['call_overhead_per_inflight_s'],1e6*c['overlap']['call_overhead_s'],1e6*c['overlap']['call_overhead_per_overlap_s'],
 ' '.join('%.1f'%(1e3*x) for x in j['exec']['latency_mean_s'])))
PY
done
echo "end $(date -u +%T)"
