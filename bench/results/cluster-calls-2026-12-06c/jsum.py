import json, sys, glob, os
# jsum.py DIR...: per cell, main's and mine's cost errors, verdicts, lines, exec ms; mine's first-block line on its runs
rows = {}
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + '/*.json')):
        b = os.path.basename(f)[:-5]; cell, who = b.rsplit('.', 1)
        rows.setdefault(cell, {})[who] = json.load(open(f))
pc = lambda e: [round(100 * x, 1) for x in e['runs']]
tot = {'main': [], 'mine': []}
for cell, r in rows.items():
    for who in ('main', 'mine'):
        if who not in r: continue
        j = r[who]; c = j['calibration']; e = j['errors']
        line = '%.0f + %.0f' % (1e6 * c['call_overhead_s'], 1e6 * c['call_overhead_per_inflight_s'])
        extra = ''
        if who == 'mine':
            extra = ' | first_block on same runs %s, burst_means %s' % (pc(e['cost_first_block']), pc(e['cost_burst_means']))
        tot[who] += [abs(x) for x in e['cost']['runs']]
        print('%-14s %-4s cost %-22s %-12s line %-10s exec ms %s struct %s%s' % (cell, who, pc(e['cost']), j['verdicts']['cost'], line,
              [round(1e3 * x, 1) for x in j['exec']['latency_mean_s']], pc(e['structure']), extra))
for w, v in tot.items():
    if v: print(w, 'mean |err| %.1f over %d runs' % (100 * sum(v) / len(v), len(v)))
