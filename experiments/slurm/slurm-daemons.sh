# Sourced by single-node.sh and cluster-single-node.sh (after `set -euo pipefail`, with `me` set to the
# script's name): a private Slurm on this one machine -- munged, slurmctld and slurmd of Debian's slurm-wlm and
# munge, as root, no systemd, no cgroups (proctrack/linuxproc, task/none) -- in a temporary folder $d with its
# own config, key, ports and logs; nothing in /etc is changed. The daemons stop when the script exits (also on
# failure), after extra_cleanup, which a script may redefine. Defines d, pids, fail MESSAGE and
# start_slurm_daemons CLUSTER_NAME PORT_BASE (exports SLURM_CONF; returns when the node is up).
d="$(mktemp -d /tmp/moesim-slurm.XXXXXX)"
chmod 700 "$d"
mkdir -p "$d/state" "$d/spool" "$d/munge"
pids=()
extra_cleanup() { :; }
cleanup() {
  extra_cleanup
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  if [ -n "${KEEP_SLURM_LOGS:-}" ]; then echo "$me: logs in $d" >&2; else rm -rf "$d"; fi
}
trap cleanup EXIT
fail() {
  echo "$me: $*" >&2
  for f in "$d"/*.log "$d"/*.out; do [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
  exit 1
}

start_slurm_daemons() {
  local cluster="$1" port_base="$2"
  # munge: a fresh key and a private socket.
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$d/munge/munge.key"
  local sock="$d/munge/munge.socket"
  munged --foreground --force --key-file="$d/munge/munge.key" --socket="$sock" --pid-file="$d/munge/munged.pid" \
    --log-file="$d/munged.log" --seed-file="$d/munge/seed" > /dev/null 2>&1 &
  pids+=($!)
  local host port
  host="$(hostname -s)"
  # Ports off the defaults, so a Slurm already on the machine is not disturbed.
  port=$((port_base + RANDOM % 2000))
  cat > "$d/slurm.conf" << CONF
ClusterName=$cluster
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
  local state=""
  for _ in $(seq 150); do
    state="$(sinfo -h -N -o %t 2> /dev/null | head -1 || true)"
    case "$state" in idle | mix | alloc) break ;; esac
    sleep 0.2
  done
  case "$state" in idle | mix | alloc) ;; *) fail "the node did not come up (state '$state')" ;; esac
}
