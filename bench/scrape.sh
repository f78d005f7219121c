#!/usr/bin/env bash
# A Prometheus scrape of `countertop serve` next to one of redis_exporter's
# `--check-keys` over the same keyspace (issue 28): 100,000 and then
# 1,000,000 counters matching ratelimit:*, a tenth of them without expiry,
# on a redis-server of its own.
#
#   bench/scrape.sh [KEYS...]    (default: 100000 1000000)
#
# SCRAPE_RUNS sets how many timed scrapes each gets (default 5, after one
# untimed), REDIS_EXPORTER the version of oliver006/redis_exporter (default
# v1.74.0). The exporter is fetched as a Go module into Go's module cache
# and built from there into a temp dir: it is never a dependency of
# countertop, whose go.mod and go.sum this script does not touch.
#
# For each keyspace it seeds the server (bench/cmd/seed), then in turn
# runs countertop serve (--limit 100, --metrics-keys 20; timed once its
# first pass is over), redis_exporter with --check-keys ratelimit:* and
# redis_exporter without it (what its own metrics cost), each alone. Each
# scrape is one GET /metrics with curl: its wall time, its size, and the
# commands Redis ran meanwhile with the time it spent in them (INFO
# commandstats, less the INFO that asks, whose ~0.05 ms it keeps; for
# countertop, its own watching, which goes on). Prints the median of each,
# and each process's RSS after its scrapes. Takes about 11 minutes, most
# of them the exporter's scrapes of a million keys and countertop's first
# pass within its command budget. See BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${SCRAPE_RUNS:-5}
version=${REDIS_EXPORTER:-v1.74.0}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init redis-server redis-cli go curl
server_pid=""
trap 'stop_server; stop_redis; rm -rf "$work"' EXIT

echo "building..."
go build -o "$work/countertop" .
go build -o "$work/seed" ./bench/cmd/seed
# go install MODULE@VERSION would also ask the proxy for the module's list
# of versions (for a deprecation notice) and fails where that is refused:
# download the one version and build it in its own module instead.
exporter_src=$(cd "$work" && go mod download -json "github.com/oliver006/redis_exporter@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -n "$exporter_src" ] || {
	echo "bench/scrape.sh: could not download github.com/oliver006/redis_exporter@$version (go mod download said nothing of it)" >&2
	exit 1
}
(cd "$exporter_src" && GOFLAGS=-mod=mod go build -o "$work/redis_exporter" .)
echo "redis_exporter built from github.com/oliver006/redis_exporter@$version"

start_redis
url="redis://127.0.0.1:$port/0"
echo "redis-server on port $port (pid $redis_pid)"

stop_server() {
	if [ -n "${server_pid:-}" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
	fi
}

# redis_work prints the commands Redis has run and the microseconds it
# spent in them, less the INFO commandstats that asks.
redis_work() {
	redis-cli -p "$port" info commandstats | tr -d '\r' |
		awk -F'[=,:]' '/^cmdstat_/ { for (i = 2; i < NF; i += 2) { if ($i == "calls") c += $(i + 1); if ($i == "usec") u += $(i + 1) } }
			END { printf "%d %d\n", c, u }'
}

# scrape NAME times runs GETs of $metrics after an untimed one, and prints
# each and their medians.
scrape() {
	local name=$1 i
	: >"$work/$name.times"
	for i in $(seq 0 "$runs"); do
		read -r calls0 usec0 < <(redis_work)
		read -r secs bytes < <(curl -sS --max-time 900 -o "$work/metrics" -w '%{time_total} %{size_download}\n' "$metrics")
		read -r calls1 usec1 < <(redis_work)
		# The second INFO is counted in the first's figures: less one call.
		line="$secs $bytes $((calls1 - calls0 - 1)) $((usec1 - usec0))"
		[ "$i" = 0 ] || echo "$line" >>"$work/$name.times"
	done
	series=$(grep -vc '^#' "$work/metrics")
	printf '  %-28s median of %s: %.1f ms, %.0f bytes (%s series); Redis ran %.0f commands, %.1f ms of its time; RSS %s\n' \
		"$name" "$runs" "$(median 1 "$work/$name.times" 1000)" "$(median 2 "$work/$name.times")" "$series" \
		"$(median 3 "$work/$name.times")" "$(median 4 "$work/$name.times" 0.001)" \
		"$(awk '/^VmRSS/ { printf "%d MB", $2 / 1024 }' "/proc/$server_pid/status")"
	echo "    each (s, bytes, commands, Redis µs): $(tr '\n' ';' <"$work/$name.times")"
	if grep -q 'level=error' "$work/exporter.log" 2>/dev/null; then
		echo "    the exporter logged $(grep -c 'level=error' "$work/exporter.log") errors; the first: $(grep -m 1 'level=error' "$work/exporter.log")"
	fi
}

# median COLUMN FILE [SCALE] prints the median of FILE's COLUMN, times SCALE.
median() {
	sort -g -k "$1,$1" "$2" | awk -v f="$1" -v k="${3:-1}" '{ v[NR] = $f * k }
		END { printf "%.6f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# wait_for URL PATTERN waits up to 10 minutes for URL to answer with a
# line matching PATTERN.
wait_for() {
	for _ in $(seq 6000); do
		if curl -s --max-time 5 "$1" 2>/dev/null | grep -q "$2"; then
			return
		fi
		kill -0 "$server_pid" 2>/dev/null || {
			echo "bench/scrape.sh: the server under test exited" >&2
			exit 1
		}
		sleep 0.1
	done
	echo "bench/scrape.sh: $1 never answered $2" >&2
	exit 1
}

for n in "${sizes[@]}"; do
	echo
	"$work/seed" -url "$url" -keys "$n" -matching "$n" -no-ttl-every 10
	echo "$(redis-cli -p "$port" dbsize) keys in all; scrapes, one at a time, nothing else running against Redis:"

	listen="127.0.0.1:$(free_port)"
	metrics="http://$listen/metrics"
	"$work/countertop" serve --url "$url" --pattern 'ratelimit:*' --limit 100 --window 60s --metrics-keys 20 \
		--listen "$listen" 2>"$work/serve.log" &
	server_pid=$!
	start=$(date +%s%N)
	wait_for "$metrics" '^countertop_last_pass_timestamp_seconds'
	echo "  (countertop serve's first pass over the keys: $((($(date +%s%N) - start) / 1000000)) ms)"
	scrape "countertop serve"
	stop_server

	for checked in 1 0; do
		listen="127.0.0.1:$(free_port)"
		metrics="http://$listen/metrics"
		flags=(--redis.addr "redis://127.0.0.1:$port" --web.listen-address "$listen")
		name="redis_exporter alone"
		if [ "$checked" = 1 ]; then
			flags+=(--check-keys 'db0=ratelimit:*' --check-keys-batch-size 1000)
			name="redis_exporter --check-keys"
		fi
		"$work/redis_exporter" "${flags[@]}" >"$work/exporter.log" 2>&1 &
		server_pid=$!
		wait_for "http://$listen/" 'Redis Exporter'
		scrape "$name"
		stop_server
	done
done
