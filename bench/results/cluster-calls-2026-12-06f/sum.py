#!/usr/bin/env python3
# sum.py JSON... : per cell, main's cost and the cost with the machine's drift taken out (errors.cost_drift) on
# the same runs (%, verdict, mean |error|), the probes (us) and their ratios; then the rule fixed before the
# runs (cluster-calls-2026-12-06f.md): cost_drift is the better account of the model's own error if its mean
# |error| is lower overall, it is closer in at least 4 of 6 cells, and it loses no met verdict. Also the rank
# correlation between (ratio - 1) and the cost error over every run.
import json, sys

def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i]); r = [0.0] * len(v)
    for k, i in enumerate(order): r[i] = float(k)
    return r

def spearman(x, y):
    rx, ry = ranks(x), ranks(y); n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5; vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else float('nan')

keys = ('cost', 'cost_drift')
tot = {k: [] for k in keys}; cells = []; ratios = []
for f in sys.argv[1:]:
    j = json.load(open(f)); e = j['errors']; c = j['calibration']; v = j['verdicts']
    name = f.split('/')[-1].rsplit('.', 1)[0]
    cell = {'name': name}; row = [name]
    for k in keys:
        r = [100 * x for x in e[k]['runs']]; tot[k] += r
        m = sum(map(abs, r)) / len(r); cell[k] = (m, v[k])
        row.append('%s: %s (%s) |e| %.1f' % (k, ', '.join('%+.1f' % x for x in r), v[k], m))
    ratios += j['exec']['probe_ratio']
    row.append('probe us: calibration %.0f, runs %s (ratios %s)' % (
        1e6 * c['probe']['median_s'], ', '.join('%.0f' % (1e6 * x) for x in j['exec']['probe_s']),
        ', '.join('%.2f' % x for x in j['exec']['probe_ratio'])))
    lone = [1e6 * r['expert']['by_inflight']['0']['median_s'] for r in j['calls_by_concurrency']]
    row.append('line %.0f + %.0f us; runs\' lone expert calls %s us' % (
        1e6 * c['call_overhead_s'], 1e6 * c['call_overhead_per_inflight_s'], ', '.join('%.0f' % x for x in lone)))
    row.append('exec ms ' + ', '.join('%.1f' % (1e3 * x) for x in j['exec']['latency_mean_s']))
    row.append('structure ' + ', '.join('%+.1f' % (100 * x) for x in e['structure']['runs']))
    print('\n  '.join(row)); cells.append(cell)
for k, r in tot.items():
    if r: print('%s: mean |error| %.2f%% over %d runs' % (k, sum(map(abs, r)) / len(r), len(r)))
if tot['cost']:
    print('rank correlation of (probe ratio - 1) with the cost error over %d runs: %+.2f' % (
        len(ratios), spearman([x - 1 for x in ratios], tot['cost'])))
    main = sum(map(abs, tot['cost'])) / len(tot['cost']); overall = sum(map(abs, tot['cost_drift'])) / len(tot['cost_drift'])
    closer = sum(1 for c in cells if c['cost_drift'][0] < c['cost'][0])
    lost = [c['name'] for c in cells if c['cost'][1] == 'met' and c['cost_drift'][1] != 'met']
    gained = [c['name'] for c in cells if c['cost'][1] != 'met' and c['cost_drift'][1] == 'met']
    ok = overall < main and closer >= 4 and not lost
    print('cost_drift: overall %.2f vs cost %.2f; closer in %d of %d cells; met lost %s; met gained %s -> %s' % (
        overall, main, closer, len(cells), lost or 'none', gained or 'none',
        'the better account (rule holds)' if ok else 'not the better account (rule fails)'))
