#!/usr/bin/env bash
# Measures how long an increment takes to reach countertop's store, with
# keyspace notifications and with polling every second: 1,000 INCRs per
# second spread over 10,000 watched keys, against a redis-server the
# benchmark starts itself. Prints p50/p99/max in ms and countertop's CPU
# as a percentage of one core. BENCHTIME sets how many INCRs each mode
# gets (at 1,000 a second). BenchmarkEventLatencyAtScale (5,000 a second
# over 100,000 keys) runs with -bench=EventLatencyAtScale. See BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -run='^$' -bench='Latency$' -benchtime="${BENCHTIME:-60000x}" -count=1 -timeout=30m ./bench/ "$@"
