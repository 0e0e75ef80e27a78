#!/usr/bin/env bash
# Whole-process replay speed, moesim vs libCacheSim, side by side on one lookup stream.
#
#   bench/replay_vs_libcachesim.sh LIBCACHESIM_CACHESIM [MOESIM] [RUNS]
#
# LIBCACHESIM_CACHESIM: libCacheSim's `cachesim` binary, built outside this repository from its public
# source (bench/results/replay.md says how). MOESIM: the moesim binary (default build/moesim). RUNS: runs per
# command (default 5); the medians of wall time are reported.
#
# The stream: the bundled Qwen3 trace's lookups tiled 250 times (the trace imported 250 times as 250
# sequences: 9.88 M lookups at batch 1), one global cache of 1,536 experts (32 per layer x 48 layers, 25%
# of the 6,144 keys). moesim replays it from two files: the .mtr with its lookup index (what `trace import`
# writes by default, version 2) and the plain .mtr (`trace import --no-lookup-index`, version 1: the stream is
# built from the records at load); libCacheSim replays the same requests exported with `moesim trace export
# --to oraclegeneral`, each object
# counted as size 1 (--ignore-obj-size 1), one thread. Commands run interleaved, so that drift in the
# machine's load affects every command alike. Work files go to $WORK (default: a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHESIM=${1:?usage: $0 LIBCACHESIM_CACHESIM [MOESIM] [RUNS]}
MOESIM=${2:-build/moesim}
RUNS=${3:-5}
TILES=250
CAP_PER_LAYER=32  # x 48 layers = 1,536 experts, one global cache
TRACE=data/traces/qwen3-30b-a3b.route.csv
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"

inputs=()
for ((i = 0; i < TILES; i++)); do inputs+=("$TRACE"); done
[ -s "$WORK/tiled.mtr" ] || "$MOESIM" trace import "${inputs[@]}" --no-lookup-index -o "$WORK/tiled.mtr"
[ -s "$WORK/tiled-index.mtr" ] || "$MOESIM" trace import "$WORK/tiled.mtr" --lookup-index -o "$WORK/tiled-index.mtr"
[ -s "$WORK/tiled.oracleGeneral" ] ||
  "$MOESIM" trace export "$WORK/tiled.mtr" --to oraclegeneral -o "$WORK/tiled.oracleGeneral"
CAP_TOTAL=$((CAP_PER_LAYER * 48))

declare -A cmd
cmd[moesim-lru-index]="$MOESIM replay $WORK/tiled-index.mtr --policy lru --scope global --budget $CAP_PER_LAYER"
cmd[moesim-belady-index]="$MOESIM replay $WORK/tiled-index.mtr --policy belady --scope global --budget $CAP_PER_LAYER"
cmd[moesim-lru-plain]="$MOESIM replay $WORK/tiled.mtr --policy lru --scope global --budget $CAP_PER_LAYER"
cmd[moesim-belady-plain]="$MOESIM replay $WORK/tiled.mtr --policy belady --scope global --budget $CAP_PER_LAYER"
cmd[cachesim-lru]="$CACHESIM $WORK/tiled.oracleGeneral oracleGeneral lru $CAP_TOTAL --ignore-obj-size 1 --num-thread 1 --output $WORK/cachesim.out"
cmd[cachesim-belady]="$CACHESIM $WORK/tiled.oracleGeneral oracleGeneral belady $CAP_TOTAL --ignore-obj-size 1 --num-thread 1 --output $WORK/cachesim.out"
order=(moesim-lru-index cachesim-lru moesim-lru-plain moesim-belady-index cachesim-belady moesim-belady-plain)

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "moesim: $("$MOESIM" --version 2>/dev/null | head -1)"
for name in "${order[@]}"; do  # one untimed run each: warms the page cache, shows the results
  echo "== $name: ${cmd[$name]}"
  ${cmd[$name]} 2>&1 | grep -v '^moesim: wrote' | tail -n 3
done
declare -A times
for ((r = 0; r < RUNS; r++)); do
  for name in "${order[@]}"; do
    # Wall time from the clock in ns (/usr/bin/time's %e has 10 ms steps); user and sys CPU from time.
    start=$(date +%s%N)
    /usr/bin/time -o "$WORK/time.txt" -f '%U %S' ${cmd[$name]} >/dev/null 2>&1
    end=$(date +%s%N)
    t="$(awk -v d=$((end - start)) 'BEGIN { printf "%.3f", d / 1e9 }') $(tail -n 1 "$WORK/time.txt")"
    times[$name]+="$t;"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ';' '\n' | sed '/^$/d' | awk '{print $'"$1"'}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-22s %10s %10s %10s   %s\n' command "median s" "user s" "sys s" "all wall times (s), in run order"
declare -A med
for name in "${order[@]}"; do
  med[$name]=$(echo "${times[$name]}" | median 1)
  printf '%-22s %10s %10s %10s   %s\n' "$name" "${med[$name]}" "$(echo "${times[$name]}" | median 2)" \
    "$(echo "${times[$name]}" | median 3)" "$(echo "${times[$name]}" | tr ';' '\n' | awk 'NF {printf "%s ", $1}')"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
# CPU seconds (user + sys) per run, median: the cost of a command whatever else the machine runs.
declare -A cpu
for name in "${order[@]}"; do
  cpu[$name]=$(echo "${times[$name]}" | tr ';' '\n' | sed '/^$/d' | awk '{print $2 + $3}' | sort -g |
    awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
done
for what in "wall:med" "cpu:cpu"; do
  label=${what%%:*}
  declare -n m=${what##*:}
  echo "$label LRU:    libCacheSim / moesim (index) = $(ratio "${m[cachesim-lru]}" "${m[moesim-lru-index]}"), / moesim (plain) = $(ratio "${m[cachesim-lru]}" "${m[moesim-lru-plain]}")"
  echo "$label Belady: libCacheSim / moesim (index) = $(ratio "${m[cachesim-belady]}" "${m[moesim-belady-index]}"), / moesim (plain) = $(ratio "${m[cachesim-belady]}" "${m[moesim-belady-plain]}")"
  unset -n m
done
for name in "${order[@]}"; do echo "cpu median $name: ${cpu[$name]} s"; done
