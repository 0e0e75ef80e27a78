#!/usr/bin/env bash
# A real Slurm array job on this one machine: starts a private munged, slurmctld and slurmd
# (experiments/slurm/slurm-daemons.sh), submits
# experiments/slurm/sweep.sbatch as an N-task array over SPEC, waits for it, merges the shards into
# OUTDIR/merged, and stops the daemons (also on failure). Everything lives in a temporary folder with its
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

# The array job, exactly as a user would submit it (one CPU a task, so all tasks fit on a small machine).
cd "$(dirname "$spec")"
job="$(sbatch --parsable --array=0-$((tasks - 1)) --cpus-per-task=1 --output="$d/task-%a.out" \
  --export=ALL,MOESIM="$moesim" "$here/sweep.sbatch" "$spec" "$out")"
for _ in $(seq 1200); do
  [ -z "$(squeue -h -j "$job" 2> /dev/null)" ] && break
  sleep 0.25
done
[ -z "$(squeue -h -j "$job" 2> /dev/null)" ] && sleep 0.5 || fail "job $job did not finish in 5 minutes"
# Every task's exit code, from the controller (no accounting database here).
bad=0
for i in $(seq 0 $((tasks - 1))); do
  [ -f "$out/shard-$i/manifest.json" ] && grep -q '"state": "finished"' "$out/shard-$i/manifest.json" || {
    echo "single-node.sh: task $i left no finished shard:" >&2
    cat "$d/task-$i.out" >&2 || true
    bad=1
  }
done
[ "$bad" = 0 ] || fail "job $job failed"
shards=()
for i in $(seq 0 $((tasks - 1))); do shards+=("$out/shard-$i"); done
"$moesim" -q merge "${shards[@]}" -o "$out/merged"
echo "single-node.sh: job $job ($tasks tasks on $host) merged into $out/merged"
