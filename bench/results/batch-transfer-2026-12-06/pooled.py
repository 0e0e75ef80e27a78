#!/usr/bin/env python3
# pooled.py MOESIM PROFILE VAL_JSON BATCH -- moesim run options (as validate's, without --hw and --batch)
# The cost TPOT error validate reported for PROFILE, and the same simulated with `moesim run` under PROFILE's
# values as the fit over every calibration run's ops (each source's "the fit over all runs: X") instead of the
# median of the runs' own fits: the candidate of bench/results/batch-transfer-2026-12-06.md. Simulation only (the
# exec median is VAL_JSON's); `run` plans ZipMoE's pools itself where validate pins the runs' plan.
import json, os, re, subprocess, sys, tempfile
moesim, prof, val, batch = sys.argv[1:5]
opts = sys.argv[6:] if len(sys.argv) > 5 and sys.argv[5] == '--' else sys.argv[5:]
# `run` simulates: exec's --gpu does not apply (the profile says whether a CPU thread played the GPU stream)
if '--gpu' in opts:
    i = opts.index('--gpu')
    del opts[i:i + 2]
def tpot(p):
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f:
        json.dump(p, f)
    try:
        out = subprocess.run([moesim, 'run'] + opts + ['--batch', batch, '--hw', f.name, '--json'],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    return json.loads(out)['metrics']['tpot']['mean_s']
v = json.load(open(val))
ex = v['exec']['tpot_median_s']
p = json.load(open(prof))
q = json.loads(json.dumps(p))
for sec in ('ssd', 'cpu', 'gpu', 'link', 'runtime'):
    for v2 in q.get(sec, {}).values():
        if isinstance(v2, dict) and isinstance(v2.get('source'), str):
            m = re.search(r"the fit over all runs: ([0-9.eE+-]+)\)", v2['source'])
            if m:
                v2['value'] = float(m.group(1))
print('median of runs (run) %+6.1f%%  pooled (run) %+6.1f%%' % (100 * (tpot(p) / ex - 1), 100 * (tpot(q) / ex - 1)))
