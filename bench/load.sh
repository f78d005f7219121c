#!/usr/bin/env bash
# The real countertop dashboard at a million keys, in each watch mode:
# every figure of issue 18's targets, measured in one run. BENCHMARKS.md
# holds today's figures; docs/benchmarks-history.md ("Targets (issue 18)")
# the runs, and what each measurement means.
#
#   bench/load.sh [KEYS [MATCHING]]    (default: 1000000 keys, 100000 matching)
#
# LOAD_SECONDS sets how long each phase lasts (default 60; LOAD_SECONDS=20
# is a quick run); LOAD_MODES the modes to run the dashboard in (default
# poll,events,tracking); LOAD_RATE the changes a second (default 5000);
# LOAD_RESYNC the dashboard's --resync-every (default: its own, 30s);
# LOAD_BUDGET its --max-commands (default: its own).
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

keys=${1:-1000000}
matching=${2:-100000}
seconds=${LOAD_SECONDS:-60}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init redis-server redis-cli tmux
build_bench load

start_redis
url="redis://127.0.0.1:$port/0"
echo "redis-server on port $port (pid $redis_pid)"
"$work/seed" -url "$url" -keys "$keys" -matching "$matching"
echo
"$work/load" -url "$url" -countertop "$work/countertop" -matching "$matching" \
	-duration "${seconds}s" -modes "${LOAD_MODES:-poll,events,tracking}" -rate "${LOAD_RATE:-5000}" \
	-resync-every "${LOAD_RESYNC:-0s}" ${LOAD_BUDGET:+-max-commands "$LOAD_BUDGET"}
