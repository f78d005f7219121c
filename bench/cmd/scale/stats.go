package main

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/redisclient"
)

// readCommands are the commands countertop reads with; their server time is
// what a pass costs Redis. keyCommands are those sent per key: all but SCAN.
var (
	readCommands = append([]string{"scan"}, keyCommands...)
	keyCommands  = []string{"getrange", "pttl", "type", "hlen", "hgetall", "hmget", "zcard", "zrange", "zcount", "llen", "lindex", "lrange", "scard", "xlen"}
)

// serverStats is what Redis says it has done so far: per command, calls and
// microseconds spent executing (INFO commandstats), and its CPU time; and,
// when Redis runs on this machine, what the kernel says of its main thread
// (schedstat).
type serverStats struct {
	calls map[string]int64
	usec  map[string]int64
	cpu   time.Duration // used_cpu_user + used_cpu_sys
	sched schedStat
}

// schedStat is how long a thread has run, and how long it has waited,
// ready to run, for a CPU (/proc/PID/task/TID/schedstat), as of a moment:
// the rest of a span of wall time it slept, which Redis's main thread does
// when no client has asked it anything. Known is false unless Redis is
// reached over loopback or a unix socket and the process with its pid here
// is a redis-server (not, say, a container's pid 1, or a process of this
// machine that has the pid of a Redis elsewhere), on a kernel that keeps
// these figures.
type schedStat struct {
	known       bool
	pid         string
	at          time.Time // when read; in a difference, span is the time between two readings
	span        time.Duration
	ran, queued time.Duration
}

// idle is how long of its span the thread slept.
func (s schedStat) idle() time.Duration { return max(0, s.span-s.ran-s.queued) }

func readStats(ctx context.Context, rdb *redis.Client) (serverStats, error) {
	s := serverStats{calls: map[string]int64{}, usec: map[string]int64{}}
	info, err := rdb.Info(ctx, "server", "commandstats", "cpu").Result()
	if err != nil {
		return s, err
	}
	for line := range strings.Lines(info) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if cmd, ok := strings.CutPrefix(name, "cmdstat_"); ok {
			for field := range strings.SplitSeq(fields, ",") {
				k, v, _ := strings.Cut(field, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				switch k {
				case "calls":
					s.calls[cmd] = n
				case "usec":
					s.usec[cmd] = n
				}
			}
		}
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			secs, _ := strconv.ParseFloat(fields, 64)
			s.cpu += time.Duration(secs * float64(time.Second))
		}
		if name == "process_id" && local(rdb.Options()) {
			s.sched = readSchedStat(fields)
		}
	}
	return s, nil
}

// local reports whether the Redis of opt runs on this machine.
func local(opt *redis.Options) bool {
	if opt.Network == "unix" {
		return true
	}
	host, _, err := net.SplitHostPort(opt.Addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// readSchedStat is the schedstat of the main thread of process pid (whose
// thread id is pid), if that is a redis-server and this kernel keeps it.
func readSchedStat(pid string) schedStat {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%s/comm", pid))
	if err != nil || !strings.HasPrefix(string(comm), "redis-server") {
		return schedStat{}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%s/task/%s/schedstat", pid, pid))
	if err != nil {
		return schedStat{}
	}
	var ran, queued int64
	if _, err := fmt.Sscan(string(b), &ran, &queued); err != nil || ran == 0 {
		return schedStat{} // 0 0 0: the kernel keeps no scheduler statistics
	}
	return schedStat{known: true, pid: pid, at: time.Now(), ran: time.Duration(ran), queued: time.Duration(queued)}
}

// split is where the time between the two readings of s went for Redis's
// main thread: running, waiting for a CPU, and idle (waiting for a
// client), or "" where that is not known.
func (s serverStats) split() string {
	if !s.sched.known {
		return ""
	}
	return fmt.Sprintf("running %s, waiting for a CPU %s, idle %s", secs(s.sched.ran), secs(s.sched.queued), secs(s.sched.idle()))
}

// since is what Redis did between before and s.
func (s serverStats) since(before serverStats) serverStats {
	d := serverStats{calls: map[string]int64{}, usec: map[string]int64{}, cpu: s.cpu - before.cpu}
	if s.sched.known && before.sched.known && s.sched.pid == before.sched.pid { // not across a restart
		d.sched = schedStat{known: true, pid: s.sched.pid, span: s.sched.at.Sub(before.sched.at),
			ran: s.sched.ran - before.sched.ran, queued: s.sched.queued - before.sched.queued}
	}
	for k, v := range s.calls {
		d.calls[k] = v - before.calls[k]
	}
	for k, v := range s.usec {
		d.usec[k] = v - before.usec[k]
	}
	return d
}

// plus is what s and o did together: two nodes', say.
func (s serverStats) plus(o serverStats) serverStats {
	sum := serverStats{calls: maps.Clone(s.calls), usec: maps.Clone(s.usec), cpu: s.cpu + o.cpu}
	for k, v := range o.calls {
		sum.calls[k] += v
	}
	for k, v := range o.usec {
		sum.usec[k] += v
	}
	if s.sched.known && o.sched.known { // the spans add up too: idle is the nodes' idle time summed
		sum.sched = schedStat{known: true, span: s.sched.span + o.sched.span, ran: s.sched.ran + o.sched.ran, queued: s.sched.queued + o.sched.queued}
	}
	return sum
}

// time is the execution time of cmds.
func (s serverStats) time(cmds ...string) time.Duration {
	var us int64
	for _, c := range cmds {
		us += s.usec[c]
	}
	return time.Duration(us) * time.Microsecond
}

// count is how many times cmds ran.
func (s serverStats) count(cmds ...string) int64 {
	var n int64
	for _, c := range cmds {
		n += s.calls[c]
	}
	return n
}

// breakdown is each read command's time, for the report.
func (s serverStats) breakdown() string {
	var parts []string
	for _, c := range readCommands {
		if s.calls[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", c, secs(s.time(c))))
		}
	}
	return strings.Join(parts, ", ")
}

// perKey is how many times each command of keyCommands ran per key of
// rows, for the report: "getrange 1.000, pttl 1.000, type 0.001".
func (s serverStats) perKey(rows int) string {
	var parts []string
	for _, c := range keyCommands {
		if s.calls[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.3f", c, float64(s.calls[c])/float64(rows)))
		}
	}
	return strings.Join(parts, ", ")
}

// slowlog sums up the SLOWLOG: how many commands Redis logged, by command
// with the slowest of each. An O(1) command (GETRANGE, PTTL) there was not
// slow by itself: the machine did not run Redis meanwhile.
func slowlog(ctx context.Context, rdb *redis.Client) (int, string, error) {
	logs, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return 0, "", err
	}
	count := map[string]int{}
	worst := map[string]time.Duration{}
	for _, l := range logs {
		name := strings.ToLower(l.Args[0])
		count[name]++
		worst[name] = max(worst[name], l.Duration)
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s x%d (slowest %v)", name, count[name], ms(worst[name])))
	}
	return len(logs), strings.Join(parts, ", "), nil
}

// scanCosts is how long each SCAN of one walk over pattern took Redis, as
// the SLOWLOG times every command when told to (slowlog-log-slower-than
// 0), sorted. The walk is a discovery pass's, SCAN only.
func scanCosts(ctx context.Context, rdb *redis.Client, client *redisclient.Client, pattern string) (latencies, error) {
	old, err := rdb.ConfigGet(ctx, "slowlog-*").Result()
	if err != nil {
		return nil, err
	}
	defer func() {
		for k, v := range old {
			rdb.ConfigSet(ctx, k, v)
		}
	}()
	for k, v := range map[string]string{"slowlog-log-slower-than": "0", "slowlog-max-len": "100000"} {
		if err := rdb.ConfigSet(ctx, k, v).Err(); err != nil {
			return nil, err
		}
	}
	if err := rdb.SlowLogReset(ctx).Err(); err != nil {
		return nil, err
	}
	if err := client.Scan(ctx, []string{pattern}, 0, func([]string) error { return nil }); err != nil {
		return nil, err
	}
	logs, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return nil, err
	}
	var costs latencies
	for _, l := range logs {
		if strings.EqualFold(l.Args[0], "scan") {
			costs = append(costs, l.Duration)
		}
	}
	slices.Sort(costs)
	return costs, nil
}
