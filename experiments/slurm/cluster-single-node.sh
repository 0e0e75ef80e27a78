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

me=cluster-single-node.sh
. "$(cd "$(dirname "$0")" && pwd)/slurm-daemons.sh"
srun_pid=""
extra_cleanup() {
  [ -n "$srun_pid" ] && kill "$srun_pid" 2> /dev/null || true
  [ -n "$srun_pid" ] && wait "$srun_pid" 2> /dev/null || true
}
# srun --overcommit fits more servers than CPUs on the node.
start_slurm_daemons moesimcl 19000
host="$(hostname -s)"

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
