#!/usr/bin/env bash
# countertop at a million keys: every figure of issue 6 next to its target.
# BENCHMARKS.md holds today's figures; docs/benchmarks-history.md ("A million
# keys") the runs, and what each measurement means.
#
#   bench/scale.sh [KEYS [MATCHING]]    (default: 1000000 keys, 100000 matching)
#   bench/scale.sh --mixed [KEYS [MATCHING]]
#   bench/scale.sh --nodes [KEYS [MATCHING]]
#
# --mixed seeds the matching keys in every layout (counters, windows, GCRA
# times, buckets, logs of 10 to 100,000 entries, block flags, counts in JSON
# and msgpack: bench/seed's Mixed) and
# measures the cold snapshot alone: its wall time against Redis's, and the
# commands it sends per key.
#
# --nodes measures the cold snapshot of the same keyspace on one Redis, on
# the three masters of a Redis Cluster, and on three standalone servers
# read with --url given three times (issue 33, item 7): the cluster and the
# servers hold the same keys, each master what the server of its slots
# holds (bench/seed.SeedShards). Each is measured with every redis-server
# on core 0 and countertop (with scale, and its bare client) on core 1,
# then with none pinned; needs two cores and taskset.
#
# It starts a redis-server of its own on a free port in a temp dir (never a
# shared one), fills it with bench/cmd/seed, runs bench/cmd/scale against
# it, then the Go benchmarks of the frame and the Store. Needs redis-server
# and redis-cli on PATH; takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

mixed=""
nodes=""
case ${1:-} in
--mixed) mixed=1 && shift ;;
--nodes) nodes=1 && shift ;;
esac
keys=${1:-1000000}
matching=${2:-100000}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init redis-server redis-cli
build_bench scale

if [ -n "$nodes" ]; then
	command -v taskset >/dev/null || { echo "bench/scale.sh --nodes needs taskset (util-linux)" >&2 && exit 1; }
	[ "$(nproc)" -ge 2 ] || { echo "bench/scale.sh --nodes pins Redis and countertop to a core each: it needs two" >&2 && exit 1; }
	start_redis
	one=(-url "redis://127.0.0.1:$port/0")
	"$work/seed" "${one[@]}" -keys "$keys" -matching "$matching"
	start_cluster 3
	cluster=()
	for p in "${cluster_ports[@]}"; do
		cluster+=(-url "redis://127.0.0.1:$p/0")
	done
	"$work/seed" "${cluster[@]}" -keys "$keys" -matching "$matching" # each master its own slots' keys
	servers=()
	for _ in 1 2 3; do
		start_redis
		servers+=(-url "redis://127.0.0.1:$port/0")
	done
	"$work/seed" "${servers[@]}" -keys "$keys" -matching "$matching" # what each master holds
	for pinned in 1 ""; do
		echo
		if [ -n "$pinned" ]; then
			echo "=== pinned: every redis-server on core 0, countertop on core 1 (uptime:$(uptime | sed 's/.*load average//'))"
			pin_redis 0
			on=(taskset -c 1)
		else
			echo "=== not pinned (uptime:$(uptime | sed 's/.*load average//'))"
			pin_redis "0-$(($(nproc) - 1))"
			on=()
		fi
		echo
		"${on[@]}" "$work/scale" "${one[@]}" -countertop "$work/countertop" -snapshot-only -bare
		echo
		"${on[@]}" "$work/scale" "${cluster[0]}" "${cluster[1]}" -countertop "$work/countertop"
		echo
		"${on[@]}" "$work/scale" "${servers[@]}" -countertop "$work/countertop"
	done
	exit 0
fi

start_redis
url="redis://127.0.0.1:$port/0"
echo "redis-server on port $port (pid $redis_pid)"

if [ -n "$mixed" ]; then
	"$work/seed" -url "$url" -keys "$keys" -matching "$matching" -mixed
	echo
	# A window for every key, so that each log is counted inside it.
	"$work/scale" -url "$url" -countertop "$work/countertop" -snapshot-only -window 60s
	exit 0
fi
"$work/seed" -url "$url" -keys "$keys" -matching "$matching"
echo
"$work/scale" -url "$url" -countertop "$work/countertop"

echo
echo "(5) one frame at 1,000,000 keys, target < 1 ms (ns/op): View draws it; BatchFrame applies a"
echo "    poll batch of 500 readings, follows the selection and draws it; Rows is the Store's part"
go test -run '^$' -bench 'BenchmarkView|BenchmarkBatchFrame' -benchmem ./ui/ | grep '^Benchmark'
go test -run '^$' -bench 'BenchmarkRows' -benchmem ./model/ | grep '^Benchmark'
echo
echo "(6) the Store alone at 1,000,000 keys, target <= 256 B/key"
go test -run '^$' -bench 'BenchmarkStoreMemory' -benchmem ./model/ | grep '^Benchmark'
echo
echo "(1) countertop's own work in a snapshot of 100,000 keys, in each format: what it does as the reads"
echo "    arrive (arrive: classify, render each row, note its place in key order), and once Redis has"
echo "    answered (write: sort, put the rows together with their TTLs, write them); sort is the end of"
echo "    check's and repair's sort"
go test -run '^$' -bench 'BenchmarkSnapshot' -benchmem ./internal/report/ | grep '^Benchmark'
