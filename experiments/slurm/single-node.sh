#!/usr/bin/env bash
# A real Slurm array job on this one machine: starts a private munged, slurmctld and slurmd
# (experiments/slurm/slurm-daemons.sh), submits SPEC with experiments/slurm/submit.sh as an N-task array
# (ids 1, 3, ..., 2N-1) and its chained merge job, waits for both (OUTDIR/merged), and stops the daemons
# (also on failure). Everything lives in a temporary folder with its
# own config, key, ports and logs; nothing in /etc is changed. tests/cli/sweep_slurm_longtest.cpp runs it.
#   experiments/slurm/single-node.sh MOESIM SPEC.json OUTDIR [TASKS]
# Exit status: 0 merged; 1 the job or the merge failed; 77 Slurm or munge is not installed or not root.
set -euo pipefail
moesim="$(realpath "${1:?usage: single-node.sh MOESIM SPEC.json OUTDIR [TASKS]}")"
spec="$(realpath "${2:?usage: single-node.sh MOESIM SPEC.json OUTDIR [TASKS]}")"
out="${3:?usage: single-node.sh MOESIM SPEC.json OUTDIR [TASKS]}"
tasks="${4:-4}"
here="$(cd "$(dirname "$0")" && pwd)"
for tool in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$tool" > /dev/null || { echo "single-node.sh: $tool is missing (apt-get install slurm-wlm munge)" >&2; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "single-node.sh: the daemons need root" >&2; exit 77; }
mkdir -p "$out"
out="$(realpath "$out")"

me=single-node.sh
. "$here/slurm-daemons.sh"
start_slurm_daemons moesim 17000
host="$(hostname -s)"

# The array job and its merge, exactly as a user would submit them (one CPU a task, so all tasks fit on a
# small machine), with a stepped range not starting at 0 (1, 3, 5, ...) so that the task id to shard mapping
# is exercised: the merge runs as its own job after the array (afterok).
cd "$(dirname "$spec")"
ids="$(MOESIM="$moesim" "$here/submit.sh" "$spec" "$out" --array="1-$((2 * tasks - 1)):2" --cpus-per-task=1 \
  --output="$d/task-%a.out")"
job="$(echo "$ids" | sed -n 's/^array \([0-9]*\), merge \([0-9]*\)$/\1/p')"
merge="$(echo "$ids" | sed -n 's/^array \([0-9]*\), merge \([0-9]*\)$/\2/p')"
[ -n "$job" ] && [ -n "$merge" ] || fail "submit.sh printed '$ids'"
for _ in $(seq 1200); do
  [ -z "$(squeue -h -j "$job,$merge" 2> /dev/null)" ] && break
  sleep 0.25
done
[ -z "$(squeue -h -j "$job,$merge" 2> /dev/null)" ] && sleep 0.5 || fail "jobs $job and $merge did not finish in 5 minutes"
# Every task's shard, from the files (no accounting database here).
bad=0
for i in $(seq 0 $((tasks - 1))); do
  [ -f "$out/shard-$i/manifest.json" ] && grep -q '"state": "finished"' "$out/shard-$i/manifest.json" || {
    echo "single-node.sh: shard $i (task $((2 * i + 1))) is not finished:" >&2
    cat "$d/task-$((2 * i + 1)).out" >&2 || true
    bad=1
  }
done
[ "$bad" = 0 ] || fail "job $job failed"
[ -f "$out/merged/results.csv" ] || { cat "$out"/merge-*.out >&2 || true; fail "the merge job $merge wrote no $out/merged"; }
echo "single-node.sh: job $job ($tasks tasks on $host, ids 1-$((2 * tasks - 1)):2) merged by job $merge into $out/merged"
