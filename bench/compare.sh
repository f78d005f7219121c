#!/usr/bin/env bash
# The cold snapshot and the frame of two commits, measured in one run, turn
# about, so that a busy moment of the machine falls on both alike.
#
#   bench/compare.sh [--mixed] [--snapshot-only] [--scrape] OLD [NEW [RUNS]]
#                                    (NEW: the work tree as it is; RUNS: 10)
#
# It builds countertop at each (a detached worktree for a commit), seeds a
# redis-server of its own (1,000,000 keys, 100,000 matching ratelimit:*),
# times RUNS cold `snapshot --format json` of each binary in turn, then runs
# the frame benchmarks (ui's View and BatchFrame) of each tree RUNS/2 times
# in turn and compares them with benchstat. Takes about 10 minutes.
# --mixed seeds the matching keys in every layout, as scale.sh --mixed does,
# and times `snapshot --window 60s` (each log counted inside its window);
# --snapshot-only leaves out the frame benchmarks; --scrape runs serve's
# BenchmarkScrape (a GET /metrics at 100,000 and 1,000,000 keys, and how
# long the feed's Apply waited meanwhile) RUNS/2 times each instead of both.
set -euo pipefail
cd "$(dirname "$0")/.."

seed_flags=()
snapshot_flags=(--format json)
frames=1
scrape=""
while [ "${1:-}" != "${1#--}" ]; do
	case $1 in
	--mixed) seed_flags=(-mixed) snapshot_flags+=(--window 60s) ;;
	--snapshot-only) frames="" ;;
	--scrape) scrape=1 ;;
	*) echo "bench/compare.sh: unknown option $1" >&2 && exit 2 ;;
	esac
	shift
done
old=${1:?usage: bench/compare.sh [--mixed] [--snapshot-only] [--scrape] OLD [NEW [RUNS]]}
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

start_redis
url="redis://127.0.0.1:$port/0"
"$work/seed" -url "$url" -keys 1000000 -matching 100000 "${seed_flags[@]}"
"$work/ct-new" snapshot --url "$url" --pattern 'ratelimit:*' "${snapshot_flags[@]}" >/dev/null # warm the page cache, not Redis

echo
echo "cold snapshot of 100,000 keys among 1,000,000, wall seconds, $runs each, turn about"
for _ in $(seq "$runs"); do
	for b in old new; do
		/usr/bin/time -f "$b %e" -a -o "$work/times" \
			"$work/ct-$b" snapshot --url "$url" --pattern 'ratelimit:*' "${snapshot_flags[@]}" >/dev/null
	done
done
for b in old new; do
	sorted=$(awk -v b="$b" '$1 == b { print $2 }' "$work/times" | sort -n)
	median=$(echo "$sorted" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	printf '  %-4s median %s s of %s\n' "$b" "$median" "$(echo "$sorted" | tr '\n' ' ')"
done
stop_redis
[ -n "$frames" ] || exit 0

turn_about "frame benchmarks" ./ui/ -bench 'BenchmarkView$|BenchmarkBatchFrame' -benchmem
