# Shared by the bench scripts (sourced, not run): a temp dir, the binaries,
# and redis-servers of their own on free ports, never a shared one.
# bench_init makes $work and its cleanup; start_redis sets port and
# redis_pid, start_cluster cluster_ports, and stop_redis ends every server
# started here.

# bench_init TOOL... makes $work, removed (with the server) on exit, and
# stops with one sentence when a TOOL is not on PATH.
bench_init() {
	for tool in "$@"; do
		command -v "$tool" >/dev/null || {
			echo "$(basename "$0") needs $tool on PATH (apt-get install redis-server tmux)" >&2
			exit 1
		}
	done
	work=$(mktemp -d)
	redis_pid=""
	redis_pids=()
	trap 'stop_redis; rm -rf "$work"' EXIT
}

# build_bench CMD builds countertop, bench/cmd/seed and bench/cmd/CMD
# into $work.
build_bench() {
	echo "building..."
	go build -o "$work/countertop" .
	go build -o "$work/seed" ./bench/cmd/seed
	go build -o "$work/$1" "./bench/cmd/$1"
}

# free_port prints a port on 127.0.0.1 that nothing listens on (yet), nor
# on the port 10000 above it, a cluster node's bus.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# start_redis [ARGS...] starts redis-server with ARGS on a port nothing
# listens on, in a directory of its own, then makes sure the server
# answering there is the one started here, before anything is written to
# it. It can be called again for more servers.
start_redis() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$(free_port)
		mkdir -p "$work/redis-$port"
		redis-server --port "$port" --bind 127.0.0.1 --dir "$work/redis-$port" --save '' --appendonly no \
			--daemonize no "$@" >"$work/redis.log" 2>&1 &
		redis_pid=$!
		for _ in $(seq 100); do
			if [ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$redis_pid" ]; then
				redis_pids+=("$redis_pid")
				return
			fi
			kill -0 "$redis_pid" 2>/dev/null || break # it could not bind: try another port
			sleep 0.1
		done
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
		redis_pid=""
	done
	echo "could not start redis-server; its log ends:" >&2
	tail -n 20 "$work/redis.log" >&2
	exit 1
}

# start_cluster N [ARGS...] starts N redis-servers with ARGS as the masters
# of a Redis Cluster, master i serving slots i*16384/N to (i+1)*16384/N-1
# (as bench/seed.Shard and internal/redistest's StartCluster split them),
# and waits until every node says the cluster is ok. cluster_ports are
# their ports, in the order of their slots.
start_cluster() {
	local n=$1 i p q
	shift
	cluster_ports=()
	for i in $(seq 0 $((n - 1))); do
		start_redis --cluster-enabled yes --cluster-node-timeout 5000 "$@"
		cluster_ports+=("$port")
		redis-cli -p "$port" cluster set-config-epoch $((i + 1)) >/dev/null
		redis-cli -p "$port" cluster addslotsrange $((i * 16384 / n)) $(((i + 1) * 16384 / n - 1)) >/dev/null
	done
	for p in "${cluster_ports[@]}"; do
		for q in "${cluster_ports[@]}"; do
			[ "$p" = "$q" ] || redis-cli -p "$p" cluster meet 127.0.0.1 "$q" >/dev/null
		done
	done
	for _ in $(seq 300); do
		for p in "${cluster_ports[@]}"; do
			if ! redis-cli -p "$p" cluster info | tr -d '\r' | grep -qx 'cluster_state:ok'; then
				sleep 0.1
				continue 2
			fi
		done
		return
	done
	echo "the cluster on ports ${cluster_ports[*]} did not come up" >&2
	exit 1
}

# pin_redis CPUS lets every server started here, each of its threads, run
# on CPUS only (a taskset list: 0, 0-1).
pin_redis() {
	local pid
	for pid in "${redis_pids[@]}"; do
		taskset -a -cp "$1" "$pid" >/dev/null
	done
}

# stop_redis ends every server started here.
stop_redis() {
	local pid
	for pid in "${redis_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	redis_pids=()
	redis_pid=""
}
