#!/usr/bin/env python3
"""One line per cell of a cells.sh work folder: cost errors of the committed model (new: the slope per call in
flight from the measured CPU per call over the shared cores) and of the line fitted to the bursts (old, the
same runs and calibration), structure, exec latency, the two slopes, and the runs' median expert-call overhead
by calls in flight.   summarize.py WORKDIR [CELL.json ...]"""
import json, sys, glob, os

def pc(e, k):
    return ', '.join('%+.1f' % (100 * x) for x in e[k]['runs']) if k in e else '-'

files = sys.argv[2:] or sorted(glob.glob(os.path.join(sys.argv[1], '*.json')))
for f in files:
    try:
        j = json.load(open(os.path.join(sys.argv[1], os.path.basename(f))))
    except (OSError, ValueError):
        continue
    if 'errors' not in j:
        continue
    c, e = j['calibration'], j['errors']
    cpu = c.get('cpu_by_burst', {}).get('1', {})
    slope = j['cost'].get('call_overhead_per_inflight_s', c['call_overhead_per_inflight_s'])
    by = j.get('calls_by_concurrency', [{}])[0].get('expert', {}).get('by_inflight', {})
    curve = ' '.join('%s:%.0f' % (x, 1e6 * v['median_s']) for x, v in sorted(by.items(), key=lambda t: int(t[0])))
    print('| %s | %s | %s | %s | %.1f | %.0f + %.0f (bursts) / %.0f (CPU) | %.0f | %s |' % (
        os.path.basename(f)[:-5], pc(e, 'cost'), pc(e, 'cost_line'), pc(e, 'structure'),
        1e3 * j['exec']['median'], 1e6 * c['call_overhead_s'], 1e6 * c['call_overhead_per_inflight_s'],
        1e6 * slope, 1e6 * cpu.get('cpu_per_call_s', 0), curve))
