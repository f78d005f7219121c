# Shared by the bench scripts (sourced, not run): a temp dir, the binaries,
# and a redis-server of their own on a free port, never a shared one.
# bench_init makes $work and its cleanup; start_redis sets port and
# redis_pid, stop_redis ends that server only.

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

# free_port prints a port on 127.0.0.1 that nothing listens on (yet).
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# start_redis [ARGS...] starts redis-server with ARGS on a port nothing
# listens on, then makes sure the server answering there is the one started
# here, before anything is written to it.
start_redis() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$(free_port)
		redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save '' --appendonly no \
			--daemonize no "$@" >"$work/redis.log" 2>&1 &
		redis_pid=$!
		for _ in $(seq 100); do
			if [ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$redis_pid" ]; then
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

stop_redis() {
	if [ -n "${redis_pid:-}" ]; then
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
		redis_pid=""
	fi
}
