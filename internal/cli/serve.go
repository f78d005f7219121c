package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/serve"
	"github.com/countertop/countertop/internal/words"
	"github.com/countertop/countertop/model"
)

// defaultListen is where serve listens unless told: loopback, as the keys'
// names are nobody else's business, on a port of the exporters' range
// that no well-known exporter uses.
const defaultListen = "127.0.0.1:9127"

// stopGrace is how long serve lets a scrape in flight finish on SIGTERM:
// it must be gone within a second.
const stopGrace = 500 * time.Millisecond

func (a *app) serveCommand() *cobra.Command {
	var (
		listen      string
		metricsKeys int
	)
	cmd := &cobra.Command{
		Use:     "serve [--listen ADDR] [--metrics-keys N] [flags]",
		Short:   "serve /metrics, /healthz, /problems over HTTP",
		Long:    aboutServe,
		Example: examples(serveExamples),
	}
	load := a.settings(cmd, "serve")
	cmd.Flags().StringVar(&listen, "listen", defaultListen, "the `HOST:PORT` to serve HTTP on (loopback unless told)")
	cmd.Flags().IntVar(&metricsKeys, "metrics-keys", 0, "add countertop_problem_key for at most `N` problem keys, most severe first (0: none; each key is a series)")
	completeValues(cmd, map[string][]string{})
	cmd.RunE = a.run(func(cmd *cobra.Command, args []string) (int, error) {
		if err := noArgs(args); err != nil {
			return exitFailed, err
		}
		if metricsKeys < 0 {
			return exitFailed, fmt.Errorf("--metrics-keys %d is not a number of keys: use 0 (none) or more, like 20", metricsKeys)
		}
		cfg, err := load()
		if err != nil {
			return exitFailed, err
		}
		if servers := cfg.Targets(); len(servers) == 1 {
			cfg = cfg.For(servers[0])
		}
		return runServe(cmd.Context(), cfg, listen, metricsKeys, a.stderr)
	})
	return cmd
}

// runServe watches the keys as the dashboard does, on one server or on
// several side by side (watchServers, as the dashboard), and serves what
// it holds over HTTP on listen until SIGTERM or ctrl+c (exit 0), or until
// the watch stops for good (exit 2, with why). One server that cannot be
// connected to at the start is an error; among several, it is a server
// down, which /healthz names while countertop keeps trying.
func runServe(ctx context.Context, cfg config.Config, listen string, metricsKeys int, stderr io.Writer) (int, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return exitFailed, listenError(listen, err)
	}
	defer ln.Close()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	v, commit := buildVersion()
	opts := serve.Options{Version: v, Commit: commit, MetricsKeys: metricsKeys}
	var (
		feed     <-chan model.Batch
		watchErr <-chan error // nil among several: each server's watch says its end on the feed
		watching string
	)
	if servers := cfg.Targets(); len(servers) > 1 {
		stderr = &lockedWriter{w: stderr} // each server's watch may write on it (watchServers)
		watched, f := watchServers(ctx, cfg, false, stderr)
		var names []string
		for _, s := range watched {
			opts.Servers = append(opts.Servers, serve.Server{Name: s.name, Budget: float64(max(s.cfg.Redis.MaxCommands, 0))})
			names = append(names, model.Printable(s.name))
		}
		opts.Shards = cfg.Shards // countertop_shared_keys, a group at a time
		feed, watching = f, fmt.Sprintf("%d servers: %s", len(names), words.And(names))
	} else {
		cfg = withDashboardBudget(cfg)
		client, err := connect(ctx, cfg, stderr)
		if err != nil {
			return exitFailed, err
		}
		defer client.Close()
		opts.Budget = float64(max(cfg.Redis.MaxCommands, 0))
		o := watchOptions(cfg)
		o.EnableEvents = cfg.Redis.EnableEvents
		feed, watchErr = startWatch(ctx, client, o)
		watching = model.Printable(client.Addr())
	}
	w := serve.NewWatcher(&cfg.Rules, opts)

	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	where := ln.Addr().String()
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		where += " (reachable from other machines)"
	}
	fmt.Fprintf(stderr, "countertop: serving /metrics, /healthz and /problems on http://%s, watching %s\n", where, watching)

	var failed error
	for failed == nil {
		select {
		case b, ok := <-feed:
			if !ok {
				switch {
				case watchErr != nil:
					failed = <-watchErr
				case ctx.Err() == nil:
					failed = errors.New("the watch of every server stopped for good: countertop serve has nothing left to watch")
				}
				if failed == nil { // ctx is done: SIGTERM or ctrl+c
					return exitOK, shutdown(srv)
				}
				w.Close(failed.Error())
				continue
			}
			w.Apply(b, time.Now())
		case err := <-served:
			failed = fmt.Errorf("serving HTTP on %s stopped: %w", ln.Addr(), err)
		}
	}
	cancel()
	for range feed { // the watches are done with their clients before they are closed
	}
	_ = shutdown(srv)
	return exitFailed, failed
}

// shutdown lets the requests in flight finish for stopGrace, then closes
// the rest.
func shutdown(srv *http.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return srv.Close()
	}
	return nil
}

// listenError is the sentence for listen failing on addr.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("cannot listen on %s: another process uses that port: pick a free one with --listen HOST:PORT", addr)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return fmt.Errorf("cannot listen on %s (%v): give --listen HOST:PORT, like %s", addr, err, defaultListen)
}

// buildVersion returns the version and commit for countertop_build_info,
// as version's line says them.
func buildVersion() (v, commit string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{}
	}
	v = info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			commit = s.Value
		}
	}
	if stampedVersion != "" {
		v = stampedVersion
	}
	if stampedCommit != "" {
		commit = stampedCommit
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	return v, commit
}
