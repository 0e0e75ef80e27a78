#!/usr/bin/env bash
# A real cluster run started by Slurm on this one machine (docs/cluster-exec.md, "Running on real
# machines"): starts a private munged, slurmctld and slurmd as single-node.sh does (Debian's slurm-wlm and
# munge, as root; nothing in /etc changed), runs `srun -n N moesim cluster-server SERVERS.json --rendezvous
# DIR` (one task per server, each its rank from $SLURM_PROCID) in the background and the coordinator
# `moesim cluster SERVERS.json --platform exec --launch none --rendezvous DIR` here, waits for srun to end
# (the coordinator shuts the servers down), and stops the daemons (also on failure).
# tests/cli/cluster_slurm_longtest.cpp runs it.
#   experiments/slurm/cluster-single-node.sh MOESIM SERVERS.json DIR OUT.json [DURATION] [PLACEMENT]
# DIR must hold the run's secret, DIR/secret, mode 0600. OUT.json: the coordinator's --json output.
# Exit status: 0 the run and srun ended well; 1 either failed; 77 Slurm or munge is not installed or not root.
set -euo pipefail
usage="usage: cluster-single-node.sh MOESIM SERVERS.json DIR OUT.json [DURATION] [PLACEMENT]"
moesim="$(realpath "${1:?$usage}")"
spec="$(realpath "${2:?$usage}")"
dir="$(realpath "${3:?$usage}")"
out="${4:?$usage}"
duration="${5:-5s}"
placement="${6:-prism}"
for tool in munged slurmctld slurmd srun sinfo python3; do
  command -v "$tool" > /dev/null || { echo "cluster-single-node.sh: $tool is missing (apt-get install slurm-wlm munge)" >&2; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "cluster-single-node.sh: the daemons need root" >&2; exit 77; }
[ -f "$dir/secret" ] || { echo "cluster-single-node.sh: $dir/secret is missing (the run's secret, mode 0600)" >&2; exit 1; }
servers="$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["servers"]))' "$spec")"

d="$(mktemp -d /tmp/moesim-slurm.XXXXXX)"
chmod 700 "$d"
mkdir -p "$d/state" "$d/spool" "$d/munge"
pids=()
srun_pid=""
cleanup() {
  [ -n "$srun_pid" ] && kill "$srun_pid" 2> /dev/null || true
  [ -n "$srun_pid" ] && wait "$srun_pid" 2> /dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  if [ -n "${KEEP_SLURM_LOGS:-}" ]; then echo "cluster-single-node.sh: logs in $d" >&2; else rm -rf "$d"; fi
}
trap cleanup EXIT
fail() {
  echo "cluster-single-node.sh: $*" >&2
  for f in "$d"/*.log "$d"/*.out; do [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
  exit 1
}

dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$d/munge/munge.key"
sock="$d/munge/munge.socket"
munged --foreground --force --key-file="$d/munge/munge.key" --socket="$sock" --pid-file="$d/munge/munged.pid" \
  --log-file="$d/munged.log" --seed-file="$d/munge/seed" > /dev/null 2>&1 &
pids+=($!)

host="$(hostname -s)"
port=$((19000 + RANDOM % 2000))
# As single-node.sh's, with the node's CPUs as they are: srun --overcommit fits more servers than CPUs.
cat > "$d/slurm.conf" << CONF
ClusterName=moesimcl
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
NodeName=$host CPUs=$(nproc) State=UNKNOWN
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

# The servers, as a user would start them on N hosts (here one): one task per server.
srun --overcommit -n "$servers" --output="$d/server-%t.out" "$moesim" -q cluster-server "$spec" \
  --rendezvous "$dir" > "$d/srun.out" 2>&1 &
srun_pid=$!
status=0
"$moesim" -q cluster "$spec" --placement "$placement" --platform exec --launch none --rendezvous "$dir" \
  --duration "$duration" --json -o "$out" || status=$?
[ "$status" = 0 ] || fail "the coordinator failed (exit $status)"
# The coordinator shut the servers down: srun ends by itself.
for _ in $(seq 100); do kill -0 "$srun_pid" 2> /dev/null || break; sleep 0.1; done
kill -0 "$srun_pid" 2> /dev/null && fail "srun still runs 10 s after the coordinator shut the servers down"
srun_status=0
wait "$srun_pid" || srun_status=$?
srun_pid=""
[ "$srun_status" = 0 ] || fail "srun ended with status $srun_status"
echo "cluster-single-node.sh: $servers servers under srun on $host served the run into $out"
