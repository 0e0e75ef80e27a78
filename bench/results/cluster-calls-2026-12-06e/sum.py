#!/usr/bin/env python3
# sum.py JSON... : per cell, main's cost and the two candidates on the same runs (%, verdict, mean |error|),
# the lines (us), the short serve's time; then the pre-registered rule for each candidate against main's cost:
# closer in mean |error| overall AND in at least 4 of 6 cells, no met verdict lost, at least one gained.
import json, sys
keys = ('cost', 'cost_bursts_slope', 'cost_serve')
tot = {k: [] for k in keys}
cells = []
for f in sys.argv[1:]:
    j = json.load(open(f)); e = j['errors']; c = j['calibration']; v = j['verdicts']
    name = f.split('/')[-1].rsplit('.', 1)[0]
    cell = {'name': name}
    row = [name]
    for k in keys:
        r = [100 * x for x in e[k]['runs']]; tot[k] += r
        m = sum(map(abs, r)) / len(r)
        cell[k] = (m, v[k])
        row.append('%s: %s (%s) |e| %.1f' % (k, ', '.join('%+.1f' % x for x in r), v[k], m))
    s = c['serve']; b = c['burst_means']
    row.append('main %.0f + %.0f; B %.0f + %.0f; S %.0f + %.0f (%d calls, %d requests, %.1f s; invoke %.0f vs %.0f)' % (
        1e6 * c['call_overhead_s'], 1e6 * c['call_overhead_per_inflight_s'], 1e6 * c['call_overhead_s'],
        1e6 * b['call_overhead_per_inflight_s'], 1e6 * s['call_overhead_s'], 1e6 * s['call_overhead_per_inflight_s'],
        s['calls'], s['requests'], s['wall_s'], 1e6 * s['invoke_overhead_s'], 1e6 * c['invoke_overhead_s']))
    row.append('S medians by x: ' + ' '.join('%s:%.0f' % (x, 1e6 * y) for x, y in s.get('call_overhead_median_by_inflight_s', {}).items()))
    row.append('calibration %.1f s' % c.get('wall_s', 0))
    row.append('exec ms ' + ', '.join('%.1f' % (1e3 * x) for x in j['exec']['latency_mean_s']))
    row.append('structure ' + ', '.join('%+.1f' % (100 * x) for x in e['structure']['runs']))
    print('\n  '.join(row))
    cells.append(cell)
for k, r in tot.items():
    if r: print('%s: mean |error| %.2f%% over %d runs' % (k, sum(map(abs, r)) / len(r), len(r)))
main = sum(map(abs, tot['cost'])) / max(1, len(tot['cost']))
for k in keys[1:]:
    if not tot[k]: continue
    overall = sum(map(abs, tot[k])) / len(tot[k])
    closer = sum(1 for c in cells if c[k][0] < c['cost'][0])
    lost = [c['name'] for c in cells if c['cost'][1] == 'met' and c[k][1] != 'met']
    gained = [c['name'] for c in cells if c['cost'][1] != 'met' and c[k][1] == 'met']
    ok = overall < main and closer >= 4 and not lost and gained
    print('%s: overall %.2f vs main %.2f; closer in %d of %d cells; met lost %s; met gained %s -> %s' % (
        k, overall, main, closer, len(cells), lost or 'none', gained or 'none', 'REPLACES the cost' if ok else 'stays beside'))
