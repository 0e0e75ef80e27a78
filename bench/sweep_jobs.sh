#!/usr/bin/env bash
# moesim sweep's parallel speed-up: points per second with --jobs 2 against --jobs 1 on the same spec of cheap
# points (48 simulated runs of the bundled Qwen3 trace), measured in one invocation, alternating the two
# settings REPEAT times and printing each rate, the medians and their ratio.
#   bench/sweep_jobs.sh [BUILD_DIR] [REPEAT]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
M="${1:-$root/build}/moesim"
repeat="${2:-3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/spec.json" <<SPEC
{"grid": {"trace": ["$root/data/traces/qwen3-30b-a3b.route.csv"], "system": ["offload"],
          "policy": ["lru", "lfu", "fifo", "belady"], "budget": ["1GiB", "2GiB", "4GiB", "8GiB"],
          "seed": [1, 2, 3]}}
SPEC
points=48
rate() {  # points per second of one sweep with --jobs $1
  local d="$tmp/out-$1-$2" t0 t1
  t0=$(date +%s.%N)
  "$M" -q sweep "$tmp/spec.json" --jobs "$1" -o "$d" 2>/dev/null
  t1=$(date +%s.%N)
  python3 -c "print('%.3f' % ($points / ($t1 - $t0)))"
}
r1=(); r2=()
for i in $(seq 1 "$repeat"); do
  r1+=("$(rate 1 "$i")")
  r2+=("$(rate 2 "$i")")
done
python3 - "$(nproc)" "${r1[*]}" "${r2[*]}" <<'PY'
import statistics, sys
cpus, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
m1, m2 = statistics.median(a), statistics.median(b)
print(f"cpus {cpus}; points/s --jobs 1: {a} (median {m1:.2f}); --jobs 2: {b} (median {m2:.2f}); ratio {m2 / m1:.2f}")
PY
