package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// errConnectInterrupted is why a command stopped when the user pressed
// ctrl+c before Redis answered.
var errConnectInterrupted = errors.New("interrupted (ctrl+c) before Redis answered: nothing was done")

// connect returns a client of the Redis cfg names. When that takes a while
// (a server that accepts and does not answer), it says where it connects on
// stderr, which the dashboard's screen does not cover yet.
func connect(ctx context.Context, cfg config.Config, stderr io.Writer) (*redisclient.Client, error) {
	target := config.RedactURL(cfg.Redis.URL)
	if sentinels := strings.Join(cfg.Redis.Sentinels, ", "); cfg.Redis.SentinelMaster != "" && sentinels != "" {
		target = fmt.Sprintf("master %s through the Sentinels at %s", cfg.Redis.SentinelMaster, sentinels)
	}
	said := make(chan struct{})
	slow := time.AfterFunc(500*time.Millisecond, func() {
		defer close(said)
		fmt.Fprintf(stderr, "countertop: connecting to %s... (ctrl+c to stop)\n", model.Printable(target))
	})
	client, err := dial(ctx, cfg)
	if !slow.Stop() {
		<-said // stderr is the caller's again
	}
	if err != nil && ctx.Err() != nil {
		return nil, errConnectInterrupted
	}
	if err == nil && client.Unnamed() != "" {
		// Its connections work, unnamed: the operator who looks for
		// them in CLIENT LIST should know why.
		fmt.Fprintf(stderr, "countertop: %s\n", client.Unnamed())
	}
	return client, err
}

// dial connects with cfg's address, credentials and TLS settings; its
// reads take cfg's rules, as the counters read are classified by them.
func dial(ctx context.Context, cfg config.Config) (*redisclient.Client, error) {
	return redisclient.Connect(ctx, redisclient.Options{
		Rules:          &cfg.Rules,
		URL:            cfg.Redis.URL,
		URLFrom:        cfg.Redis.URLFrom,
		Username:       cfg.Redis.Username,
		Password:       cfg.Redis.Password,
		Cluster:        cfg.Redis.Cluster,
		SentinelMaster: cfg.Redis.SentinelMaster,
		SentinelAddrs:  cfg.Redis.Sentinels,
		SentinelAuth:   redisclient.Auth{Username: cfg.Redis.SentinelUsername, Password: cfg.Redis.SentinelPassword},
		ReadOnly:       cfg.Redis.ReadOnly,
		MaxCommands:    int(max(cfg.Redis.MaxCommands, 0)), // NoCommandLimit is none
		ClientName:     cfg.Redis.ClientName,
		TLS: redisclient.TLSOptions{
			CAFile:     cfg.Redis.TLS.CAFile,
			CertFile:   cfg.Redis.TLS.CertFile,
			KeyFile:    cfg.Redis.TLS.KeyFile,
			SkipVerify: cfg.Redis.TLS.SkipVerify,
		},
	})
}

// errInterrupted is why a one-shot read stopped when the user pressed
// ctrl+c.
var errInterrupted = errors.New("interrupted (ctrl+c) before every key was read")

// readAll does one full pass over the keys cfg matches, through client,
// and hands them to collect a pipeline's worth at a time, as they arrive,
// while Redis walks on, each naming server as the server it was read on.
func readAll(ctx context.Context, client *redisclient.Client, cfg config.Config, server string, collect func([]model.Observation)) error {
	defer report.ReadOnHalfTheCores()()
	err := client.Snapshot(ctx, cfg.Patterns, cfg.Redis.ScanCount, func(obs []model.Observation) error {
		for i := range obs {
			obs[i].Server = server
		}
		collect(obs)
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// readSorted returns readAll's counters, classified by cfg.Rules, in key
// order, the two strings of a token bucket read as one (model.PairBuckets).
func readSorted(ctx context.Context, client *redisclient.Client, cfg config.Config, server string) ([]*model.Counter, error) {
	var sorter report.KeySorter
	err := readAll(ctx, client, cfg, server, func(obs []model.Observation) {
		obs = model.Expand(obs) // a hash whose fields carry TTLs: a row a field
		counters := make([]model.Counter, len(obs))
		for i := range obs {
			counters[i] = model.NewCounter(&obs[i], &cfg.Rules)
		}
		sorter.Add(counters)
	})
	if err != nil {
		return nil, err
	}
	sorted := sorter.Sorted()
	model.PairBuckets(sorted, &cfg.Rules) // a bucket in two strings is read whole, as the dashboard reads it
	return sorted, nil
}
