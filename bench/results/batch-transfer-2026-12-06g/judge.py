#!/usr/bin/env python3
# The pre-registered judgement of the 1-token compute cost (batch-transfer-2026-12-06g.md) on the same exec
# runs: each held-out cell's validate JSON (its exec TPOT median and interval) against `moesim run` (06c's
# simv.py) under the cell's profile, with main's binary and with the candidate's. Both lines carry
# gpu.fresh_expert_overhead as main's calibrate now writes it (06e's cellsim3.py's value) where the profile
# lacks it. Verdict at 10% over the exec median's interval: met, missed, undecided.
#   usage: judge.py MAIN_MOESIM CANDIDATE_MOESIM Q...   (Q: 06e's pair3.sh output folders)
import glob, importlib.util, json, os, re, subprocess, sys
MAIN, CAND = sys.argv[1:3]
here = os.path.dirname(os.path.abspath(__file__))
simv = os.path.join(here, '..', 'batch-transfer-2026-12-06c', 'simv.py')
spec = importlib.util.spec_from_file_location('c3', os.path.join(here, '..', 'batch-transfer-2026-12-06e', 'cellsim3.py'))
def tpot(M, prof, tr, batch, sysname, over):
    out = subprocess.run(['python3', simv, M, prof, tr, batch, sysname] + over, capture_output=True, text=True)
    if out.returncode: sys.exit(out.stdout + out.stderr)
    return float(out.stdout.strip().splitlines()[-1])
def fresh_value(prof):  # as 06e's cellsim3.py
    import statistics
    c = json.load(open(prof))['calibration']
    own = [r['compute_fresh']['intercept_s'] for r in c.get('runs_fits') or [] if r and 'compute_fresh' in r]
    if len(own) >= 3: return statistics.median(own)
    return c['fits']['compute_fresh']['intercept_s']
def verdict(sim, lo, hi, lim=0.10):
    a, b = sim / hi - 1, sim / lo - 1
    if max(abs(a), abs(b)) <= lim: return 'met'
    if a > lim or b < -lim: return 'missed'
    return 'undecided'
rows = []
for Q in sys.argv[3:]:
    for val in sorted(glob.glob(Q + '/val-*-b[0-9]*.json')):
        mod, sysname, A, B, batch = re.match(r'val-(\w+)-(\w+)-(\d+)-(\d+)-b(\d+)\.json', os.path.basename(val)).groups()
        prof = '%s/prof-%s-%s-%s-%s.json' % (Q, mod, sysname, A, B)
        v = json.load(open(val)); ex = v['exec']['tpot_median_s']
        lo, hi = v['exec']['tpot_median_interval']['lo_s'], v['exec']['tpot_median_interval']['hi_s']
        over = [] if 'fresh_expert_overhead' in json.load(open(prof))['gpu'] else ['gpu.fresh_expert_overhead=%r' % fresh_value(prof)]
        tr = '/tmp/btc/%s%s.mtr' % (mod, B)
        m, n = tpot(MAIN, prof, tr, batch, sysname, over), tpot(CAND, prof, tr, batch, sysname, over)
        vm, vn = verdict(m, lo, hi), verdict(n, lo, hi)
        rows.append((abs(m / ex - 1), abs(n / ex - 1), vm, vn))
        print('%s %-7s %s->%s b%s: exec %.5f s [%.5f, %.5f] (%d runs)  main %+6.1f%% %-9s  candidate %+6.1f%% %s' % (
            mod, sysname, A, B, batch, ex, lo, hi, len(v['exec']['tpot_s']), 100 * (m / ex - 1), vm,
            100 * (n / ex - 1), vn), flush=True)
if rows:
    k = len(rows)
    print('cells %d: mean |error| main %.2f%%, candidate %.2f%%; candidate closer in %d of %d; met main %d, candidate %d; '
          'verdicts lost %d, gained %d' % (k, 100 * sum(r[0] for r in rows) / k, 100 * sum(r[1] for r in rows) / k,
          sum(r[1] < r[0] for r in rows), k, sum(r[2] == 'met' for r in rows), sum(r[3] == 'met' for r in rows),
          sum(r[2] == 'met' and r[3] != 'met' for r in rows), sum(r[2] != 'met' and r[3] == 'met' for r in rows)))
