#!/usr/bin/env python3
# sum.py JSON... : per cell, main's cost and the overlap model on the same runs (%, verdict), the two lines (us)
# and the mean |error| over every run of the files given.
import json, sys
tot = {'cost': [], 'cost_overlap': [], 'cost_overlap_lead': [], 'cost_bursts_slope': []}
for f in sys.argv[1:]:
    j = json.load(open(f)); e = j['errors']; c = j['calibration']; v = j['verdicts']
    row = [f.split('/')[-1].rsplit('.', 1)[0]]
    for k in ('cost', 'cost_overlap', 'cost_overlap_lead', 'cost_bursts_slope'):
        if k not in e: continue
        r = [100 * x for x in e[k]['runs']]; tot[k] += r
        row.append('%s (%s) |e| %.1f' % (', '.join('%+.1f' % x for x in r), v.get(k, '-'),
                                         sum(map(abs, r)) / len(r)))
    o = c.get('overlap', {}); ol = c.get('overlap_lead', {})
    row.append('main %.0f + %.0f' % (1e6 * c['call_overhead_s'], 1e6 * c['call_overhead_per_inflight_s']))
    row.append('overlap %.0f + %.0f/overlap' % (1e6 * o.get('call_overhead_s', 0), 1e6 * o.get('call_overhead_per_overlap_s', 0)))
    if ol: row.append('overlap_lead %.0f + %.0f' % (1e6 * ol['call_overhead_s'], 1e6 * ol['call_overhead_per_overlap_s']))
    row.append('exec ms ' + ', '.join('%.1f' % (1e3 * x) for x in j['exec']['latency_mean_s']))
    row.append('structure ' + ', '.join('%+.1f' % (100 * x) for x in e['structure']['runs']))
    print(' | '.join(row))
for k, r in tot.items():
    if r: print('%s: mean |error| %.2f%% over %d runs' % (k, sum(map(abs, r)) / len(r), len(r)))
