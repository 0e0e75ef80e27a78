import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f)); c = j['calibration']; p = c.get('probe', {})
    print(f, 'line %.0f + %.0f' % (1e6*c['call_overhead_s'], 1e6*c['call_overhead_per_inflight_s']), 'h0 %.0f' % p.get('h0_us', 0))
    for k, v in p.items():
        if isinstance(v, dict) and 'overhead_median_us' in v:
            print('  %-22s n=%4d ov med %6.0f mean %6.0f | y med %6.0f mean %6.0f' % (k, v['calls'], v['overhead_median_us'], v['overhead_mean_us'], v['y_median_us'], v['y_mean_us']))
    w = p.get('warmup_run', {}).get('expert', {}).get('by_inflight', {})
    print('  warmup expert by_inflight:', {k: (v['calls'], round(1e6*v['median_s'])) for k, v in w.items()})
    for r, cb in enumerate(j.get('calls_by_concurrency', [])):
        e = cb.get('expert', {}).get('by_inflight', {})
        print('  run%d expert by_inflight:' % r, {k: (v['calls'], round(1e6*v['median_s'])) for k, v in e.items()})
    print('  cost', [round(100*x,1) for x in j['errors']['cost']['runs']], 'exec ms', [round(1e3*x,1) for x in j['exec']['latency_mean_s']])
    for k, v in j['errors'].items():
        if k.startswith('probe_') or k in ('cost_burst_means',):
            print('  %-28s' % k, [round(100*x,1) for x in v['runs']])
    print('  cand lines', {k: [round(1e6*x) for x in v] for k, v in p.get('lines', {}).items()})
    for r, pr in enumerate(j.get('probe_runs', [])):
        print('  run%d lone by followers:' % r, {k: (v['calls'], round(v['median_us'])) for k, v in pr.items()})
    print('  warmup lone by followers:', {k: (v['calls'], round(v['median_us'])) for k, v in p.get('warmup_followers', {}).items()})
