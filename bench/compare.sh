#!/usr/bin/env bash
# The cold snapshot and the frame of two commits, measured in one run, turn
# about, so that a busy moment of the machine falls on both alike.
#
#   bench/compare.sh [--mixed] [--nodes] [--pin] [--snapshot-only] [--scrape] OLD [NEW [RUNS]]
#                                    (NEW: the work tree as it is; RUNS: 10)
#
# It builds countertop at each (a detached worktree for a commit), seeds a
# redis-server of its own (1,000,000 keys, 100,000 matching ratelimit:*),
# times RUNS cold `snapshot --format json` of each binary in turn, then runs
# the frame benchmarks (ui's View and BatchFrame) of each tree RUNS/2 times
# in turn and compares them with benchstat. Takes about 10 minutes.
# The snapshots' times are compared with benchstat too.
# --mixed seeds the matching keys in every layout, as scale.sh --mixed does,
# and times `snapshot --window 60s` (each log counted inside its window);
# --nodes times the snapshot of the same keys on three masters of a cluster
# and on three servers (--url three times) as well, as scale.sh --nodes
# seeds them; --pin runs every redis-server on core 0 and countertop on
# core 1 (taskset);
# --snapshot-only leaves out the frame benchmarks; --scrape runs serve's
# BenchmarkScrape (a GET /metrics at 100,000 and 1,000,000 keys, and how
# long the feed's Apply waited meanwhile) RUNS/2 times each instead of both.
set -euo pipefail
cd "$(dirname "$0")/.."

seed_flags=()
snapshot_flags=(--format json)
frames=1
scrape=""
nodes=""
on=()
while [ "${1:-}" != "${1#--}" ]; do
	case $1 in
	--mixed) seed_flags=(-mixed) snapshot_flags+=(--window 60s) ;;
	--nodes) nodes=1 ;;
	--pin) on=(taskset -c 1) ;;
	--snapshot-only) frames="" ;;
	--scrape) scrape=1 ;;
	*) echo "bench/compare.sh: unknown option $1" >&2 && exit 2 ;;
	esac
	shift
done
old=${1:?usage: bench/compare.sh [--mixed] [--nodes] [--pin] [--snapshot-only] [--scrape] OLD [NEW [RUNS]]}
new=${2:-}
runs=${3:-10}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init redis-server redis-cli git go
# Every worktree this script adds lives under $work/tree-*: tree runs in a
# subshell ($(tree ...)), so a list it appended to would be lost.
trap 'stop_redis; for t in "$work"/tree-*; do [ -d "$t" ] && git worktree remove --force "$t"; done; rm -rf "$work"; git worktree prune' EXIT

# tree REV prints a directory that holds REV: the work tree itself for "".
tree() {
	if [ -z "$1" ]; then
		pwd
		return
	fi
	local dir="$work/tree-$(git rev-parse --short "$1")"
	git worktree add --detach --quiet "$dir" "$1"
	echo "$dir"
}

# turn_about TITLE PACKAGE GO-TEST-ARGS... runs the benchmarks of each tree
# RUNS/2 times in turn, and compares them with benchstat.
turn_about() {
	local title=$1 pkg=$2 t
	shift 2
	echo
	echo "$title, $((runs / 2)) runs each, turn about"
	for _ in $(seq $((runs / 2))); do
		for b in old new; do
			t=$old_tree
			[ "$b" = new ] && t=$new_tree
			(cd "$t" && go test -run '^$' "$@" -count=1 "$pkg") | grep '^Benchmark' >>"$work/$b.txt"
		done
	done
	go run golang.org/x/perf/cmd/benchstat@latest "$work/old.txt" "$work/new.txt"
}

echo "building..."
old_tree=$(tree "$old")
new_tree=$(tree "$new")
echo "old: $old ($(git rev-parse --short "$old")); new: ${new:-the work tree} ($(git rev-parse --short "${new:-HEAD}")$([ -z "$new" ] && ! git diff --quiet HEAD && echo ', with changes'))"
if [ -n "$scrape" ]; then
	turn_about "serve's scrape benchmarks" ./internal/serve/ -bench 'BenchmarkScrape' -benchmem -benchtime 10x
	exit 0
fi
(cd "$old_tree" && go build -o "$work/ct-old" .)
(cd "$new_tree" && go build -o "$work/ct-new" .)
go build -o "$work/seed" ./bench/cmd/seed

# Each place the keys are, by name: the --url flags that read it.
declare -A urls
start_redis
urls[one]="--url redis://127.0.0.1:$port/0"
"$work/seed" -url "redis://127.0.0.1:$port/0" -keys 1000000 -matching 100000 "${seed_flags[@]}"
places=(one)
if [ -n "$nodes" ]; then
	start_cluster 3
	shards=()
	for p in "${cluster_ports[@]}"; do
		shards+=(-url "redis://127.0.0.1:$p/0")
	done
	"$work/seed" "${shards[@]}" -keys 1000000 -matching 100000 "${seed_flags[@]}"
	urls[cluster]="--url redis://127.0.0.1:${cluster_ports[0]}/0"
	shards=()
	urls[servers]=""
	for _ in 1 2 3; do
		start_redis
		shards+=(-url "redis://127.0.0.1:$port/0")
		urls[servers]+=" --url redis://127.0.0.1:$port/0"
	done
	"$work/seed" "${shards[@]}" -keys 1000000 -matching 100000 "${seed_flags[@]}"
	places+=(cluster servers)
fi
[ ${#on[@]} -eq 0 ] || pin_redis 0
# snapshot BINARY PLACE runs one cold snapshot of PLACE's keys.
snapshot() {
	# shellcheck disable=SC2086 # the --url flags, split
	"${on[@]}" "$work/ct-$1" snapshot ${urls[$2]} --pattern 'ratelimit:*' "${snapshot_flags[@]}" >/dev/null
}
for place in "${places[@]}"; do
	snapshot new "$place" # warm the page cache, not Redis
done

echo
echo "cold snapshot of 100,000 keys among 1,000,000 ($(
	IFS=,
	echo "${places[*]}"
)), wall seconds, $runs each, turn about$([ ${#on[@]} -eq 0 ] || echo ', Redis on core 0 and countertop on core 1'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$runs"); do
	for place in "${places[@]}"; do
		for b in old new; do
			start=$(date +%s%N)
			snapshot "$b" "$place"
			ns=$(($(date +%s%N) - start))
			echo "$b $place $ns" >>"$work/times"
			echo "BenchmarkColdSnapshot/$place 1 $ns ns/op" >>"$work/snapshot-$b.txt"
		done
	done
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
for place in "${places[@]}"; do
	for b in old new; do
		sorted=$(awk -v b="$b" -v p="$place" '$1 == b && $2 == p { printf "%.3f\n", $3 / 1e9 }' "$work/times" | sort -n)
		median=$(echo "$sorted" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		printf '  %-8s %-4s median %s s of %s\n' "$place" "$b" "$median" "$(echo "$sorted" | tr '\n' ' ')"
	done
done
go run golang.org/x/perf/cmd/benchstat@latest "$work/snapshot-old.txt" "$work/snapshot-new.txt"
stop_redis
[ -n "$frames" ] || exit 0

turn_about "frame benchmarks" ./ui/ -bench 'BenchmarkView$|BenchmarkBatchFrame' -benchmem
