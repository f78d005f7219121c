#!/usr/bin/env bash
# The real countertop dashboard at a million keys, in each watch mode:
# every figure of issue 18's targets, measured in one run. BENCHMARKS.md
# holds today's figures; docs/benchmarks-history.md ("Targets (issue 18)")
# the runs, and what each measurement means.
#
#   bench/load.sh [KEYS [MATCHING]]    (default: 1000000 keys, 100000 matching)
#   bench/load.sh --servers N [KEYS [MATCHING]]
#
# LOAD_SECONDS sets how long each phase lasts (default 60; LOAD_SECONDS=20
# is a quick run); LOAD_MODES the modes to run the dashboard in (default
# poll,events,tracking); LOAD_RATE the changes a second (default 5000);
# LOAD_RESYNC the dashboard's --resync-every (default: its own, 30s);
# LOAD_BUDGET its --max-commands (default: its own); LOAD_PIN=1 runs every
# redis-server on core 0 and the rest (bench/cmd/load, countertop, tmux,
# the load generators) on core 1.
#
# --servers N measures the dashboard over N servers instead (issue 33, item
# 7): N redis-servers, each seeded alike (KEYS keys, MATCHING of them
# counters; the same names on each), named in a config file, each in its
# own best mode within its own budget (see bench/cmd/load/servers.go). It
# times the first screen of all but the last with a server that accepts
# and never answers in the last's place, and without it (LOAD_SCREENS runs
# each, default 5), then each server's commands a second (its INFO
# commandstats) through the dashboard's first pass over all N, LOAD_SECONDS
# of nothing changing, and LOAD_SECONDS of LOAD_RATE INCRs a second on each
# server (default 500).
#
# It starts a redis-server of its own on a free port in a temp dir (never a
# shared one), fills it with bench/cmd/seed, then bench/cmd/load measures
# another client's PING with countertop stopped, and runs the dashboard
# (the built binary, in a tmux server of its own, 120x40) in each mode:
# nothing changing, then LOAD_RATE INCRs a second; then redisclient's
# watcher in this process, for the time a change takes to reach the store.
# Needs redis-server, redis-cli and tmux on PATH; takes about 11 phases of
# LOAD_SECONDS, plus the first passes.
set -euo pipefail
cd "$(dirname "$0")/.."

servers=""
if [ "${1:-}" = --servers ]; then
	servers=${2:?usage: bench/load.sh --servers N [KEYS [MATCHING]]}
	shift 2
fi
keys=${1:-1000000}
matching=${2:-100000}
seconds=${LOAD_SECONDS:-60}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init redis-server redis-cli tmux
build_bench load
on=()
if [ -n "${LOAD_PIN:-}" ]; then
	command -v taskset >/dev/null || { echo "LOAD_PIN needs taskset (util-linux)" >&2 && exit 1; }
	on=(taskset -c 1)
fi

if [ -n "$servers" ]; then
	urls=()
	for _ in $(seq "$servers"); do
		start_redis
		urls+=("redis://127.0.0.1:$port/0")
		"$work/seed" -url "${urls[-1]}" -keys "$keys" -matching "$matching"
	done
	[ ${#on[@]} -eq 0 ] || pin_redis 0
	echo "uptime:$(uptime)"
	"${on[@]}" "$work/load" -servers "$(
		IFS=,
		echo "${urls[*]}"
	)" -countertop "$work/countertop" -matching "$matching" -duration "${seconds}s" \
		-rate "${LOAD_RATE:-500}" -screens "${LOAD_SCREENS:-5}"
	exit 0
fi

start_redis
url="redis://127.0.0.1:$port/0"
echo "redis-server on port $port (pid $redis_pid)"
"$work/seed" -url "$url" -keys "$keys" -matching "$matching"
echo
[ ${#on[@]} -eq 0 ] || pin_redis 0
"${on[@]}" "$work/load" -url "$url" -countertop "$work/countertop" -matching "$matching" \
	-duration "${seconds}s" -modes "${LOAD_MODES:-poll,events,tracking}" -rate "${LOAD_RATE:-5000}" \
	-resync-every "${LOAD_RESYNC:-0s}" ${LOAD_BUDGET:+-max-commands "$LOAD_BUDGET"}
