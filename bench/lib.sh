# Shared by the bench scripts (sourced, not run): a redis-server of their
# own on a free port, never a shared one. Needs $work (a temp dir) and
# redis-server and redis-cli on PATH; start_redis sets port and redis_pid,
# stop_redis ends that server only.

# start_redis [ARGS...] starts redis-server with ARGS on a port nothing
# listens on, then makes sure the server answering there is the one started
# here, before anything is written to it.
start_redis() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + RANDOM % 40000))
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			continue # taken
		fi
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
