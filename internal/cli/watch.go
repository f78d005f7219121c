package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// maxWatch bounds --watch: a probe that watches for more than a day is
// more likely a typo (--watch 10h for 10m) than a wish.
const maxWatch = 24 * time.Hour

// watchFlag registers --watch on fs, for check and snapshot, its value
// going to d.
func watchFlag(fs *pflag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "watch", 0, "observe the keys for `DURATION` (like 10s) before reporting, re-reading them as the dashboard does (--mode, --interval), so that a counter whose TTL is pushed back while it grows past its window shows as extending")
}

// checkWatch returns an error when --watch is out of bounds, or when
// --mode or --interval was given without it, which they would not change.
func checkWatch(fs *pflag.FlagSet, watch time.Duration) error {
	switch {
	case watch < 0 || watch > maxWatch:
		return fmt.Errorf("--watch %s is not a time to watch for: use a duration up to 24h, like 10s", watch)
	case watch > 0:
		return nil
	}
	for _, name := range []string{"mode", "interval"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s only matters with --watch, which re-reads the keys: add --watch DURATION (like --watch 10s), or leave --%s out", name, name)
		}
	}
	return nil
}

// observe watches the keys cfg matches as the dashboard does (cfg's mode
// and interval, within its budget of commands), applying what it reads to
// a Store, and returns the Store once d has passed and a full pass over
// the keys has ended: every key is read at least once, as without --watch,
// and those that change are read as often as they change (events,
// tracking) or every interval (polling), which is what extending is seen
// from. A watch that cannot start (--mode events without notifications),
// or that has lost Redis when d is over, is an error; while the first pass
// goes on after d (many keys under the budget), it says so once on stderr.
// partly, when not nil, notes the hashes read field by field that hold
// more fields than a key shows.
func observe(ctx context.Context, client *redisclient.Client, cfg config.Config, d time.Duration, partly notShown, stderr io.Writer) (*model.Store, error) {
	ctx, cancel := context.WithCancel(ctx)
	feed, watchErr := startWatch(ctx, client, watchOptions(cfg))
	defer func() {
		cancel()
		for range feed { // Watch is done with the client before it is closed
		}
	}()

	rules := cfg.Rules
	store := model.NewStore(&rules)
	timer := time.NewTimer(d)
	defer timer.Stop()
	var (
		state           model.FeedState
		scanning, ended bool // a full pass began; one ended, Redis answering
		over, said      bool // d has passed; the wait for the pass was said
	)
	for {
		select {
		case b, ok := <-feed:
			if !ok {
				if err := <-watchErr; err != nil {
					return nil, err
				}
				return nil, errInterrupted // Watch returns nil only when ctx is done
			}
			partly.note(b.Observed)
			partly.forget(b.Removed)
			store.Apply(b)
			if b.State != nil {
				state = *b.State
				if state.Scanning {
					scanning = true
				} else if scanning && state.Connected && state.LastError == "" {
					ended = true
				}
			}
		case <-timer.C:
			over = true
		case <-ctx.Done():
			return nil, errInterrupted
		}
		switch {
		case !over:
		case !state.Connected || state.LastError != "":
			// The feed's sentence goes on about retrying, for the dashboard's
			// header; a check that could not watch stops there.
			why, _, _ := strings.Cut(state.LastError, "; countertop keeps trying")
			if why == "" {
				why = "the connection to Redis was lost"
			}
			return nil, fmt.Errorf("after watching for %s: %s", model.FormatDuration(d), why)
		case ended:
			return store, nil
		case !said:
			said = true
			fmt.Fprintf(stderr, "countertop: watched for %s, and the first pass over the keys is still going (%d keys read so far); waiting for it to end (ctrl+c to stop)\n",
				model.FormatDuration(d), store.Len())
		}
	}
}

// startWatch follows the keys as o asks, in a goroutine, until ctx is
// done: the batches come on feed, which is closed when Watch returns, and
// then watchErr holds why (nil when ctx ended it). The dashboard, --watch
// and serve all watch through it.
func startWatch(ctx context.Context, client *redisclient.Client, o redisclient.WatchOptions) (feed chan model.Batch, watchErr chan error) {
	feed = make(chan model.Batch, 64)
	watchErr = make(chan error, 1)
	go func() {
		watchErr <- client.Watch(ctx, o, feed)
		close(feed)
	}()
	return feed, watchErr
}

// storeCounters returns the Store's counters in key order, as readSorted
// returns a pass's.
func storeCounters(store *model.Store) []*model.Counter {
	rows := store.Rows(0, store.Len())
	var sorter report.KeySorter
	sorter.Add(rows)
	return sorter.Sorted()
}
