#!/usr/bin/env bash
# moesim sweep's parallel speed-up: points per second with --jobs 2 against --jobs 1 on one spec of cheap
# points (48 simulated runs of the bundled Qwen3 trace: 4 policies x 4 budgets x 3 seeds), measured in one
# invocation, the two settings alternated REPEAT times. Prints each rate, the medians and their ratio, the
# CPU time over wall time of each setting (2.0 = both cores busy all along) and the load average before
# (other work on the machine lowers the ratio; compare only runs started on an idle machine).
#   bench/sweep_jobs.sh [BUILD_DIR] [REPEAT]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
M="$(realpath "${1:-$root/build}")/moesim"
repeat="${2:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/spec.json" <<SPEC
{"grid": {"trace": ["$root/data/traces/qwen3-30b-a3b.route.csv"], "system": ["offload"],
          "policy": ["lru", "lfu", "fifo", "belady"], "budget": ["1GiB", "2GiB", "4GiB", "8GiB"],
          "seed": [1, 2, 3]}}
SPEC
python3 - "$M" "$tmp" "$repeat" <<'PY'
import os, resource, statistics, subprocess, sys, time
moesim, tmp, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
points = 48
def one(jobs, i):
    out = f"{tmp}/out-{jobs}-{i}"
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([moesim, "-q", "sweep", f"{tmp}/spec.json", "--jobs", str(jobs), "-o", out],
                   check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return points / wall, cpu / wall, open(f"{out}/results.csv").read()
load = os.getloadavg()[0]
rate = {1: [], 2: []}
busy = {1: [], 2: []}
csv = set()
for i in range(repeat):
    for jobs in (1, 2):
        r, b, c = one(jobs, i)
        rate[jobs].append(round(r, 2)); busy[jobs].append(round(b, 2)); csv.add(c)
m1, m2 = statistics.median(rate[1]), statistics.median(rate[2])
print(f"cpus {os.cpu_count()}, load average before {load:.2f}")
print(f"points/s --jobs 1: {rate[1]} (median {m1:.2f}); --jobs 2: {rate[2]} (median {m2:.2f}); ratio {m2 / m1:.2f}")
print(f"cpu/wall --jobs 1: median {statistics.median(busy[1]):.2f}; --jobs 2: median {statistics.median(busy[2]):.2f}")
print("results.csv identical across all runs" if len(csv) == 1 else f"results.csv DIFFERS ({len(csv)} versions)")
PY
