package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/bench/measure"
	"github.com/countertop/countertop/bench/seed"
	"github.com/countertop/countertop/model"
)

// probeKey is a counter the screen probe changes; it matches the pattern
// and sorts first by key (the dashboard's default order), so it is on
// screen: what a person watching one row sees.
const probeKey = "ratelimit:0probe"

// dashboard is the countertop binary in a tmux server of its own (-S),
// without the user's config (-f /dev/null), 120x40.
type dashboard struct {
	sock string
	pid  int

	started time.Time

	mu     sync.Mutex
	over   bool          // the first pass was seen over
	overIn time.Duration // when, from the start
}

func startDashboard(work, bin, url string, mode model.WatchMode, budget int, resyncEvery time.Duration) (*dashboard, error) {
	// The pattern and mode given, every other setting at its default.
	args := fmt.Sprintf("--url %s --pattern '%s' --mode %s --max-commands %d", url, seed.Pattern, mode, budget)
	if resyncEvery > 0 {
		args += " --resync-every " + resyncEvery.String()
	}
	d, err := launchDashboard(work, bin, args, 120, 40)
	if err != nil {
		return nil, err
	}
	// The screen has its header once countertop has connected.
	if err := d.waitScreen(30*time.Second, 100*time.Millisecond, func(s string) bool { return strings.Contains(s, "countertop ·") }); err != nil {
		d.tmux("kill-server")
		return nil, fmt.Errorf("the dashboard drew no header: %w", err)
	}
	return d, nil
}

// launchDashboard runs bin with args in a tmux server of its own, in a
// pane of width x height, without the user's config file
// (XDG_CONFIG_HOME), and returns at once: d.started is just before.
func launchDashboard(work, bin, args string, width, height int) (*dashboard, error) {
	dir, err := os.MkdirTemp(work, "dash")
	if err != nil {
		return nil, err
	}
	d := &dashboard{sock: filepath.Join(dir, "tmux.sock"), started: time.Now()}
	cmd := fmt.Sprintf("exec env XDG_CONFIG_HOME=%s %s %s", dir, bin, args)
	if out, err := d.tmux("new-session", "-d", "-s", "ct", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), cmd, ";", "set-option", "-t", "ct", "remain-on-exit", "on"); err != nil {
		return nil, fmt.Errorf("tmux new-session: %v: %s", err, out)
	}
	out, err := d.tmux("display", "-p", "-t", "ct", "#{pane_pid}")
	if err != nil {
		d.tmux("kill-server")
		return nil, fmt.Errorf("tmux display: %v: %s", err, out)
	}
	if d.pid, err = strconv.Atoi(strings.TrimSpace(out)); err != nil {
		d.tmux("kill-server")
		return nil, fmt.Errorf("tmux gave the pane's pid as %q", out)
	}
	return d, nil
}

// waitScreen reads the screen every poll until shows says true of it,
// for up to timeout; an error when countertop exits or time runs out.
func (d *dashboard) waitScreen(timeout, poll time.Duration, shows func(string) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		s, err := d.screen()
		if err == nil && shows(s) {
			return nil
		}
		if err == nil && d.exited() {
			return fmt.Errorf("countertop exited: %s", strings.TrimSpace(s))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v; the screen: %s", timeout, strings.TrimSpace(s))
		}
		time.Sleep(poll)
	}
}

func (d *dashboard) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", d.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	return string(out), err
}

// screen is the pane's text.
func (d *dashboard) screen() (string, error) { return d.tmux("capture-pane", "-p", "-t", "ct") }

// exited reports whether countertop is no longer running.
func (d *dashboard) exited() bool {
	out, err := d.tmux("display", "-p", "-t", "ct", "#{pane_dead}")
	return err != nil || strings.TrimSpace(out) == "1"
}

// checkPass looks at the header for the first pass's progress; once a
// screen shows the rows without it, the pass is over.
func (d *dashboard) checkPass() {
	s, err := d.screen()
	if err != nil || strings.Contains(s, "scanning…") || !strings.Contains(s, " keys · ") {
		return
	}
	d.mu.Lock()
	d.over, d.overIn = true, time.Since(d.started)
	d.mu.Unlock()
}

// passTook is how long the first pass took, as seen on screen (to the
// second: the screen is read every sampleEvery); 0 while it goes on.
func (d *dashboard) passTook() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.overIn
}

func (d *dashboard) passOver() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.over
}

// cpu is the CPU time countertop has used, user and system, from
// /proc/PID/stat (clock ticks of 1/100 s, as on every Linux here).
func (d *dashboard) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.pid))
	if err != nil {
		return 0, fmt.Errorf("countertop (pid %d) is gone: %w", d.pid, err)
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat reads %q", d.pid, b)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(fields[12], 10, 64) // field 15
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// stop quits countertop with q, as a user does, and ends the tmux server;
// it waits for countertop to be gone.
func (d *dashboard) stop() error {
	if d.sock == "" {
		return nil
	}
	d.tmux("send-keys", "-t", "ct", "q")
	deadline := time.Now().Add(10 * time.Second)
	for !d.exited() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	d.tmux("kill-server")
	for syscall.Kill(d.pid, 0) == nil && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(50 * time.Millisecond)
	}
	d.sock = ""
	if syscall.Kill(d.pid, 0) == nil {
		return errors.New("countertop did not quit")
	}
	return nil
}

// The screen probe changes probeKey every screenEvery and times how long
// the new value takes to be on screen, reading the pane every screenPoll
// (which bounds the precision) for up to screenTimeout.
const (
	screenEvery   = 500 * time.Millisecond
	screenPoll    = 10 * time.Millisecond
	screenTimeout = 5 * time.Second
)

type screenProbe struct {
	stop chan struct{}
	done chan struct{}
	lat  measure.Latencies
	miss int
}

func startScreenProbe(ctx context.Context, rdb *redis.Client, d *dashboard) *screenProbe {
	p := &screenProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; ; i++ {
			next := time.Now().Add(screenEvery)
			v := strconv.Itoa(100 + i%900) // three digits: no thousands separator
			if err := rdb.Set(ctx, probeKey, v, 3*time.Hour).Err(); err != nil {
				p.miss++
				continue
			}
			set := time.Now()
			for seen := false; !seen; {
				select {
				case <-p.stop:
					return
				default:
				}
				if s, err := d.screen(); err == nil && showsValue(s, v) {
					p.lat = append(p.lat, time.Since(set))
					seen = true
				} else if time.Since(set) > screenTimeout {
					p.miss++
					break
				} else {
					time.Sleep(screenPoll)
				}
			}
			select {
			case <-p.stop:
				return
			case <-time.After(time.Until(next)):
			}
		}
	}()
	return p
}

// showsValue reports whether the probe key's row on screen shows v in its
// value column (the field after the key's name).
func showsValue(screen, v string) bool {
	for line := range strings.Lines(screen) {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == probeKey {
				return f[i+1] == v
			}
		}
	}
	return false
}

func (p *screenProbe) end() (measure.Latencies, int) {
	close(p.stop)
	<-p.done
	lat := p.lat
	slices.Sort(lat)
	return lat, p.miss
}
