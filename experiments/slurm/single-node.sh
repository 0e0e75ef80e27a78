#!/usr/bin/env bash
# A real Slurm array job on this one machine: starts a private munged, slurmctld and slurmd (Debian's
# slurm-wlm and munge, as root, no systemd, no cgroups: proctrack/linuxproc, task/none), submits
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

d="$(mktemp -d /tmp/moesim-slurm.XXXXXX)"
chmod 700 "$d"
mkdir -p "$d/state" "$d/spool" "$d/munge"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  if [ -n "${KEEP_SLURM_LOGS:-}" ]; then echo "single-node.sh: logs in $d" >&2; else rm -rf "$d"; fi
}
trap cleanup EXIT
fail() {
  echo "single-node.sh: $*" >&2
  for f in "$d"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done
  exit 1
}

# munge: a fresh key and a private socket.
dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$d/munge/munge.key"
sock="$d/munge/munge.socket"
munged --foreground --force --key-file="$d/munge/munge.key" --socket="$sock" --pid-file="$d/munge/munged.pid" \
  --log-file="$d/munged.log" --seed-file="$d/munge/seed" > /dev/null 2>&1 &
pids+=($!)

host="$(hostname -s)"
cpus="$(nproc)"
# Ports off the defaults, so a Slurm already on the machine is not disturbed.
port=$((17000 + RANDOM % 2000))
cat > "$d/slurm.conf" << CONF
ClusterName=moesim
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=30
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=moesim Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$d/slurm.conf"
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "munged did not start"
slurmctld -D -i -f "$SLURM_CONF" > "$d/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" > "$d/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 150); do
  state="$(sinfo -h -N -o %t 2> /dev/null | head -1 || true)"
  case "$state" in idle | mix | alloc) break ;; esac
  sleep 0.2
done
case "$state" in idle | mix | alloc) ;; *) fail "the node did not come up (state '$state')" ;; esac

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
