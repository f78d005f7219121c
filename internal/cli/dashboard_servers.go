package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/countertop/countertop/ui"
)

// retryConnect is how long a server that could not be connected to waits
// before the next try, while the others are watched.
const retryConnect = 2 * time.Second

// runServersDashboard opens the dashboard on the several servers cfg
// chooses: the screen opens at once, each server is connected to and
// watched side by side in its own mode and budget (cfg.For), and its
// batches, named (model.Batch.Server), come on one feed into one Store. A
// server that cannot be connected to says why on its header line and is
// tried again; one that does not answer holds back no other.
func runServersDashboard(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	screen, err := dashboardTerminal(stdout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched, feed := watchServers(ctx, cfg, true, nil)
	var servers []ui.Server
	for _, w := range watched {
		servers = append(servers, ui.Server{Name: w.name, Writer: w.writer, Budget: float64(w.cfg.Redis.MaxCommands)})
	}
	rules := cfg.Rules
	store := model.NewStore(&rules)
	store.SetShards(cfg.Shards) // a key two shards hold is marked as rows come
	m := ui.New(ui.Options{
		Store:    store,
		Feed:     feed,
		Servers:  servers,
		ReadOnly: cfg.Redis.ReadOnly,
		Patterns: cfg.Patterns,
		OnScreen: func(keys []string) {
			for _, w := range watched {
				redisclient.OfferShown(w.shown, keys)
			}
		},
	})
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithOutput(screen)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil
	}
	cancel()
	for range feed { // every watch is done with its client
	}
	return err
}

// watchedServer is one of several servers watched side by side: its
// name, its config (cfg.For, with the dashboard's budget), the writer of
// its client, and where the rows on screen are offered to it (nil: none).
type watchedServer struct {
	name   string
	cfg    config.Config
	writer *serverWriter
	shown  chan []string
}

// watchServers connects to and watches each of cfg's servers side by
// side, each in a goroutine of its own (watchServer) in its own mode and
// budget, until ctx is done, and sends their batches, named, on the feed
// it returns, closed once every watch is done with its client. The
// dashboard and serve both read it; shown says whether the rows on screen
// are offered to the watches (the dashboard's). What connecting to a
// server says, which one server's connect writes on stderr, each server's
// feed says in its note (see watchServer); log, when not nil (serve's
// stderr, which no screen covers), has it too, a line a server.
func watchServers(ctx context.Context, cfg config.Config, shown bool, log io.Writer) ([]watchedServer, <-chan model.Batch) {
	feed := make(chan model.Batch, 64)
	var (
		wg      sync.WaitGroup
		watched []watchedServer
	)
	for _, s := range cfg.Targets() {
		w := watchedServer{name: s.Name, cfg: withDashboardBudget(cfg.For(s)), writer: &serverWriter{name: s.Name}}
		if shown {
			w.shown = make(chan []string, 1)
		}
		watched = append(watched, w)
		wg.Go(func() { watchServer(ctx, w.name, w.cfg, w.writer, w.shown, feed, log) })
	}
	go func() {
		wg.Wait()
		close(feed)
	}()
	return watched, feed
}

// watchServer connects to one of several servers, tried again every
// retryConnect until it answers, and sends its batches, named, on feed
// until ctx is done; w writes through its client while it has one.
//
// What connect would write on stderr, which the dashboard's screen covers
// and a line a server would jumble, goes where the server's own words go:
// that it is slow to answer is its phase (connecting…, on its header
// line), and that its connections are unnamed (a user without CLIENT
// SETNAME) joins its feed's note, which its header line and its rows'
// detail show, as one server's status line does; log, when not nil, is
// told that once, named.
func watchServer(ctx context.Context, name string, cfg config.Config, w *serverWriter, shownKeys chan []string, feed chan<- model.Batch, log io.Writer) {
	send := func(b model.Batch) bool {
		b.Server = name
		select {
		case feed <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	state := func(phase model.FeedPhase, why string) model.Batch {
		return model.Batch{State: &model.FeedState{Phase: phase, LastError: why, Mode: cfg.Redis.Mode}}
	}
	if !send(state(model.FeedConnecting, "")) {
		return
	}
	logged := false // log hears of unnamed connections once, not at every reconnect
	for {
		client, err := connect(ctx, cfg, io.Discard)
		if ctx.Err() != nil {
			if client != nil {
				client.Close()
			}
			return
		}
		if err != nil {
			if !send(state(model.FeedReconnecting, strings.TrimSuffix(model.SafeText(err.Error()), ".")+"; countertop keeps trying")) {
				return
			}
			select {
			case <-time.After(retryConnect):
				continue
			case <-ctx.Done():
				return
			}
		}
		w.client.Store(client)
		o := watchOptions(cfg)
		o.Shown, o.EnableEvents = shownKeys, cfg.Redis.EnableEvents
		batches, watchErr := startWatch(ctx, client, o)
		for b := range batches {
			unnamed := client.Unnamed()
			if unnamed != "" && b.State != nil {
				st := *b.State
				if st.Note != "" {
					st.Note += "; "
				}
				st.Note += unnamed
				b.State = &st
			}
			if unnamed != "" && log != nil && !logged {
				fmt.Fprintf(log, "countertop: %s: %s\n", model.Printable(name), unnamed)
				logged = true
			}
			send(b)
		}
		err = <-watchErr
		w.client.Store(nil)
		client.Close()
		if err != nil && ctx.Err() == nil {
			// The watch cannot go on (say, --mode events without
			// notifications on this server): its line says why.
			send(state(model.FeedStopped, err.Error()))
		}
		return
	}
}

// serverWriter is the ui.Writer of one of several servers: its client's,
// once connected.
type serverWriter struct {
	name   string
	client atomic.Pointer[redisclient.Client]
}

// errNotConnected is a write to a server not connected to (yet).
func (w *serverWriter) errNotConnected() error {
	return errors.New(model.Printable(w.name) + " is not connected: nothing was sent; countertop keeps trying to connect, see its header line")
}

func (w *serverWriter) Incr(ctx context.Context, key string, by model.Amount, window time.Duration) (model.Incremented, error) {
	if c := w.client.Load(); c != nil {
		return c.Incr(ctx, key, by, window)
	}
	return model.Incremented{}, w.errNotConnected()
}

func (w *serverWriter) IncrField(ctx context.Context, key, field string, by model.Amount, window time.Duration) (model.Incremented, error) {
	if c := w.client.Load(); c != nil {
		return c.IncrField(ctx, key, field, by, window)
	}
	return model.Incremented{}, w.errNotConnected()
}

func (w *serverWriter) Expire(ctx context.Context, e model.Expiry) (model.ExpiryOutcome, model.Observation, error) {
	if c := w.client.Load(); c != nil {
		return c.Expire(ctx, e)
	}
	return model.ExpiryFailed, model.Observation{}, w.errNotConnected()
}

func (w *serverWriter) Delete(ctx context.Context, key string) (bool, error) {
	if c := w.client.Load(); c != nil {
		return c.Delete(ctx, key)
	}
	return false, w.errNotConnected()
}
