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
		if err == nil {
			cfg, err = oneServer(cfg, "serve watches one server")
		}
		if err != nil {
			return exitFailed, err
		}
		return runServe(cmd.Context(), cfg, listen, metricsKeys, a.stderr)
	})
	return cmd
}

// runServe watches the keys as the dashboard does and serves what it
// holds over HTTP on listen until SIGTERM or ctrl+c (exit 0), or until the
// watch stops for good (exit 2, with why).
func runServe(ctx context.Context, cfg config.Config, listen string, metricsKeys int, stderr io.Writer) (int, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return exitFailed, listenError(listen, err)
	}
	defer ln.Close()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()

	cfg = withDashboardBudget(cfg)
	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return exitFailed, err
	}
	defer client.Close()

	v, commit := buildVersion()
	w := serve.NewWatcher(&cfg.Rules, serve.Options{
		Budget: float64(max(cfg.Redis.MaxCommands, 0)), Version: v, Commit: commit, MetricsKeys: metricsKeys,
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	o := watchOptions(cfg)
	o.EnableEvents = cfg.Redis.EnableEvents
	feed, watchErr := startWatch(ctx, client, o)

	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	where := ln.Addr().String()
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		where += " (reachable from other machines)"
	}
	fmt.Fprintf(stderr, "countertop: serving /metrics, /healthz and /problems on http://%s, watching %s\n", where, model.Printable(client.Addr()))

	var failed error
	for failed == nil {
		select {
		case b, ok := <-feed:
			if !ok {
				failed = <-watchErr
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
	for range feed { // Watch is done with the client before it is closed
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
