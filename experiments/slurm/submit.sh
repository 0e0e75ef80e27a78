#!/usr/bin/env bash
# Submits a moesim sweep as a Slurm job array and its merge, chained: the merge job waits with
# --dependency=afterok on the whole array, so OUTDIR/merged appears when (and only when) every shard finished.
#   experiments/slurm/submit.sh SPEC.json OUTDIR --array=RANGE [more sbatch options for the array...]
# RANGE is any Slurm range with an optional step and limit: 0-15, 1-31:2, 0-63%8 (sweep.sbatch turns each
# task id into its shard). Prints the two job ids ("array JOB, merge JOB"). Size --time with
# `moesim sweep SPEC --dry-run --shard 0/N`, which times a point and estimates the shard.
# MOESIM (the binary, default build/moesim) is passed to both jobs.
set -euo pipefail
usage="usage: submit.sh SPEC.json OUTDIR --array=RANGE [sbatch options...]"
spec="${1:?$usage}"
out="${2:?$usage}"
shift 2
array=""
extra=()
for a in "$@"; do
  case "$a" in
    --array=*) array="${a#--array=}" ;;
    *) extra+=("$a") ;;
  esac
done
[ -n "$array" ] || { echo "submit.sh: --array=RANGE is required ($usage)" >&2; exit 2; }
case "$array" in
  *,*) echo "submit.sh: --array=$array is a list; give one range FIRST-LAST[:STEP][%LIMIT]" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
export MOESIM="${MOESIM:-build/moesim}"
mkdir -p "$out"
job="$(sbatch --parsable --array="$array" --export=ALL "${extra[@]}" "$here/sweep.sbatch" "$spec" "$out")"
job="${job%%;*}"
merge="$(sbatch --parsable --dependency=afterok:"$job" --kill-on-invalid-dep=yes --export=ALL \
  --output="$out/merge-%j.out" "$here/merge.sbatch" "$out")"
merge="${merge%%;*}"
echo "array $job, merge $merge"
