import json,sys,glob,os
d=sys.argv[1]
for f in sorted(glob.glob(d+'/*.main.json')):
    cell=os.path.basename(f)[:-10]
    for who in ('main','mine'):
        j=json.load(open(f'{d}/{cell}.{who}.json')); c=j['calibration']; e=j['errors']
        fb=' first block %.0f+%.0f: %s'%(1e6*c['first_block']['call_overhead_s'],1e6*c['first_block']['call_overhead_per_inflight_s'],', '.join('%+.1f'%(100*x) for x in e['cost_first_block']['runs'])) if 'first_block' in c else ''
        print('| %s | %s | %s (%s) | %.0f + %.0f | %s | %s |%s'%(cell,who,', '.join('%+.1f'%(100*x) for x in e['cost']['runs']),j['verdicts']['cost'],1e6*c['call_overhead_s'],1e6*c['call_overhead_per_inflight_s'],', '.join('%.1f'%(1e3*x) for x in j['exec']['latency_mean_s']),', '.join('%+.1f'%(100*x) for x in e['structure']['runs']),fb))
