package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/words"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// A target is one of the servers a command reads: its name, the config
// as that server's, and its client once connected.
type target struct {
	name   string              // as rows and messages name it (config.Server.Name)
	cfg    config.Config       // the config of this server alone (config.Config.For)
	client *redisclient.Client // nil when it could not be connected to
	err    error               // why it could not be read, connected or not; nil when it was
	index  int                 // its place among the servers chosen
	stderr io.Writer           // the command's stderr, shared safely with the other servers', naming this one when there are several
}

// names returns the targets' names, in order.
func names(targets []*target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.name
	}
	return out
}

// failed returns the targets that could not be read.
func failed(targets []*target) []*target {
	var out []*target
	for _, t := range targets {
		if t.err != nil {
			out = append(out, t)
		}
	}
	return out
}

// closeAll closes the clients of the targets that connected.
func closeAll(targets []*target) {
	for _, t := range targets {
		if t.client != nil {
			t.client.Close()
		}
	}
}

// onServers connects to each server cfg chooses and calls read with it
// as soon as it answers, all of them side by side, each with its config
// as prepare makes it (the dashboard's budget, for --watch): a server that
// does not answer holds back no other. It returns once every read has
// returned, with the targets in the order chosen; the caller closes their
// clients (closeAll). A server that could not be connected to, or whose
// read failed, has its err and leaves the others alone: the error
// returned is that of one server when only one is read (as it always
// was), that every server failed when several are, or ctrl+c's.
func onServers(ctx context.Context, cfg config.Config, stderr io.Writer, prepare func(config.Config) config.Config,
	read func(ctx context.Context, t *target) error) ([]*target, error) {
	servers := cfg.Targets()
	targets := make([]*target, len(servers))
	if len(servers) > 1 {
		stderr = &lockedWriter{w: stderr}
	}
	for i, s := range servers {
		targets[i] = &target{name: s.Name, cfg: prepare(cfg.For(s)), index: i, stderr: stderr}
		if len(servers) > 1 { // what each says on stderr names it
			targets[i].stderr = &prefixWriter{w: stderr, prefix: "countertop: ", with: "countertop: " + model.Printable(s.Name) + ": "}
		}
	}
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Go(func() {
			t.client, t.err = connect(ctx, t.cfg, t.stderr)
			if t.err == nil {
				t.err = read(ctx, t)
			}
		})
	}
	wg.Wait()
	bad := failed(targets)
	if ctx.Err() != nil && len(bad) > 0 {
		closeAll(targets)
		for _, t := range bad {
			if t.err == errConnectInterrupted {
				return nil, t.err
			}
		}
		return nil, errInterrupted
	}
	switch {
	case len(targets) == 1 && len(bad) == 1:
		closeAll(targets)
		return nil, bad[0].err
	case len(bad) == len(targets):
		closeAll(targets)
		var why []string
		for _, t := range bad {
			why = append(why, serverFailure(t))
		}
		return nil, fmt.Errorf("none of the %d servers could be read: %s", len(targets), strings.Join(why, "; "))
	}
	return targets, nil
}

// serverFailure is why t could not be read, naming it: "eu-1: ...".
func serverFailure(t *target) string {
	return model.Printable(t.name) + ": " + t.err.Error()
}

// sayFailed writes a sentence on stderr for each target that could not be
// read, and returns how many there were.
func sayFailed(stderr io.Writer, targets []*target) int {
	bad := failed(targets)
	for _, t := range bad {
		fmt.Fprintf(stderr, "countertop: could not read %s: %v; the other servers were read\n", model.Printable(t.name), t.err)
	}
	return len(bad)
}

// oneServer returns cfg as the config of its one server, for incr, which
// writes to one; a config that names several is an error, which says what
// the command does (does: "incr writes to one server") and how to pick one.
func oneServer(cfg config.Config, does string) (config.Config, error) {
	servers := cfg.Targets()
	if len(servers) == 1 {
		return cfg.For(servers[0]), nil
	}
	var quoted []string
	for _, s := range servers {
		quoted = append(quoted, model.Printable(s.Name))
	}
	return cfg, fmt.Errorf("%s, and %d are chosen (%s): pick one with --server NAME, or give one --url", does, len(servers), words.And(quoted))
}

// stamp names server as the server of each counter, as a Store that
// watched one server leaves them unnamed.
func stamp(counters []*model.Counter, server string) {
	for _, c := range counters {
		c.Server = server
	}
}

// lockedWriter lets the goroutines of several servers write whole lines
// to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter names a server in what its connection says: each write
// that starts with prefix starts with with instead.
type prefixWriter struct {
	w            io.Writer
	prefix, with string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if rest, ok := strings.CutPrefix(string(b), p.prefix); ok {
		if _, err := io.WriteString(p.w, p.with+rest); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return p.w.Write(b)
}
