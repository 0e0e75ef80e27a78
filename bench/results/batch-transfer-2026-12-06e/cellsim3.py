#!/usr/bin/env python3
# The pre-registered judgement on the same exec runs: each held-out cell's validate JSON (main's binary; exec
# TPOT median and its interval) against `moesim run` (simv.py) of one binary under the profile as main's
# calibrate wrote it ("main") and under the same profile with gpu.fresh_expert_overhead as the branch's
# calibrate writes it from the same calibration runs ("term": calibration.fits.compute_fresh, or with 3+
# runs the median of the runs' own compute_fresh fits, as take_median_of_runs does for every fitted value);
# where the profile came from the branch's calibrate (it has the field), main's line is the profile without it.
# Verdict at 10% over the exec median's interval: met (the whole interval within 10%), missed (outside),
# undecided. The term's interval is main's exec interval under the term's simulated TPOT (same exec runs).
#   usage: cellsim3.py MOESIM Q...   (Q: pair3.sh output folders: prof-*.json, val-*-bN.json)
import glob, json, os, re, statistics, subprocess, sys
M = None  # the binary: sys.argv[1] when run as a script (judge.py of 06g imports the helpers)
here = os.path.dirname(os.path.abspath(__file__))
simv = os.path.join(here, '..', 'batch-transfer-2026-12-06c', 'simv.py')
def tpot(prof, tr, batch, sysname, over):
    out = subprocess.run(['python3', simv, M, prof, tr, batch, sysname] + over, capture_output=True, text=True)
    if out.returncode: sys.exit(out.stdout + out.stderr)
    return float(out.stdout.strip().splitlines()[-1])
def fresh_value(prof):
    c = json.load(open(prof))['calibration']
    own = [r['compute_fresh']['intercept_s'] for r in c.get('runs_fits') or [] if r and 'compute_fresh' in r]
    if len(own) >= 3: return statistics.median(own), 'median of %d runs' % len(own)
    return c['fits']['compute_fresh']['intercept_s'], 'pooled fit'
def verdict(sim, lo, hi, lim=0.10):
    a, b = sim / hi - 1, sim / lo - 1
    if max(abs(a), abs(b)) <= lim: return 'met', a, b
    if a > lim or b < -lim: return 'missed', a, b
    return 'undecided', a, b
def cells(folders):
    """Each held-out cell of pair3.sh's output folders: its names, profile, validate JSON, exec TPOT median and
    that median's interval."""
    for Q in folders:
        for val in sorted(glob.glob(Q + '/val-*-b[0-9]*.json')):
            mod, sysname, A, B, batch = re.match(r'val-(\w+)-(\w+)-(\d+)-(\d+)-b(\d+)\.json', os.path.basename(val)).groups()
            v = json.load(open(val)); iv = v['exec']['tpot_median_interval']
            yield (mod, sysname, A, B, batch, '%s/prof-%s-%s-%s-%s.json' % (Q, mod, sysname, A, B), v,
                   v['exec']['tpot_median_s'], iv['lo_s'], iv['hi_s'])
def main():
    global M
    M = sys.argv[1]
    rows = []
    for mod, sysname, A, B, batch, prof, v, ex, lo, hi in cells(sys.argv[2:]):
        fv, how = fresh_value(prof)
        tr = '/tmp/btc/%s%s.mtr' % (mod, B)
        # A profile the branch's calibrate wrote has the field already: main's line is then the profile without it.
        has = 'fresh_expert_overhead' in json.load(open(prof))['gpu']
        m = tpot(prof, tr, batch, sysname, ['gpu.fresh_expert_overhead=DEL'] if has else [])
        n = tpot(prof, tr, batch, sysname, [] if has else ['gpu.fresh_expert_overhead=%r' % fv])
        vm, vn = verdict(m, lo, hi), verdict(n, lo, hi)
        rows.append((abs(m / ex - 1), abs(n / ex - 1), vm[0], vn[0]))
        print('%s %s %s->%s b%s: exec %.5f s [%.5f, %.5f] (%d runs), validate cost %+.1f%%  main %+6.1f%% [%+.1f, %+.1f] %s  '
              'term %+6.1f%% [%+.1f, %+.1f] %s  (fresh overhead %.1f us, %s)' % (
            mod, sysname, A, B, batch, ex, lo, hi, len(v['exec']['tpot_s']), 100 * v['errors']['cost']['tpot'],
            100 * (m / ex - 1), 100 * vm[1], 100 * vm[2], vm[0], 100 * (n / ex - 1), 100 * vn[1], 100 * vn[2], vn[0],
            1e6 * fv, how), flush=True)
    summary(rows, 'term')

def summary(rows, name):
    """rows: (|error| main, |error| other, verdict main, verdict other) per cell."""
    if not rows: return
    k = len(rows)
    print('cells %d: mean |error| main %.2f%%, %s %.2f%%; %s closer in %d of %d; met main %d, %s %d; '
          'verdicts lost %d, gained %d' % (k, 100 * sum(r[0] for r in rows) / k, name, 100 * sum(r[1] for r in rows) / k,
          name, sum(r[1] < r[0] for r in rows), k, sum(r[2] == 'met' for r in rows), name,
          sum(r[3] == 'met' for r in rows), sum(r[2] == 'met' and r[3] != 'met' for r in rows),
          sum(r[2] != 'met' and r[3] == 'met' for r in rows)))

if __name__ == '__main__':
    main()
