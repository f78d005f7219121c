#!/usr/bin/env bash
# Issue 31's long run of the fault suite's TestNoFalseLag: LAG_BUSY (5m
# by default) of 1,000 INCRs a second on 100 keys, then LAG_IDLE (10m) of
# nothing, watched in events and tracking mode on a standalone Redis and
# in events mode on a 3-master cluster, each started by the test. Prints,
# per run, how many times the subscription was made again (PSUBSCRIBE and
# SUBSCRIBE in commandstats), the most behind the header said, busy and
# idle, and countertop's commands a second to its busiest server. Without
# the race detector, as a user runs it. See BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export LAG_BUSY="${LAG_BUSY:-5m}" LAG_IDLE="${LAG_IDLE:-10m}"
go test -tags chaos -count=1 -timeout=3h -run '^TestNoFalseLag$' -v ./internal/chaos/ "$@" |
	grep -E 'lag_test.go|^(--- |ok|FAIL|PASS)'
