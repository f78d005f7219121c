package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/bench/measure"
	"github.com/countertop/countertop/bench/seed"
)

// generateEnv, when set, makes this binary the load generator, a process
// of its own so that its CPU and scheduling are not the measurer's: it
// holds "ADDR N MATCHING HASHEVERY PERSEC RECORD", the Redis to hit, how
// many INCRs to fire, over which of seed's counters (the first MATCHING,
// but the hashes), how many a second, and whether to print each.
const generateEnv = "COUNTERTOP_LOAD_GENERATE"

// generator is a running load generator.
type generator struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	stderr bytes.Buffer
}

func startGenerator(addr string, n, matching, hashEvery, perSec int, record bool) (*generator, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	g := &generator{cmd: exec.Command(self)}
	g.cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %d %d %t", generateEnv, addr, n, matching, hashEvery, perSec, record))
	g.cmd.Stdout, g.cmd.Stderr = &g.out, &g.stderr
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *generator) wait() error {
	if err := g.cmd.Wait(); err != nil {
		return fmt.Errorf("load generator: %v: %s", err, strings.TrimSpace(g.stderr.String()))
	}
	return nil
}

// summary waits for the generator and returns what it said it did.
func (g *generator) summary() (string, error) {
	if err := g.wait(); err != nil {
		return "", err
	}
	return strings.TrimSpace(g.out.String()), nil
}

// incrs waits for a recording generator and returns what it fired.
func (g *generator) incrs() ([]measure.Incr, error) {
	if err := g.wait(); err != nil {
		return nil, err
	}
	var incrs []measure.Incr
	for line := range strings.Lines(g.out.String()) {
		var in measure.Incr
		if _, err := fmt.Sscan(line, &in.Key, &in.Value, &in.At); err != nil {
			return nil, fmt.Errorf("load generator said %q: %v", line, err)
		}
		incrs = append(incrs, in)
	}
	return incrs, nil
}

// generate is the load generator's main: it fires INCRs at random
// counters at the spec's rate, keeping the average rate when it falls
// behind, and then prints each as "key value unixnano", or what it did.
func generate(spec string) error {
	var addr string
	var n, matching, hashEvery, perSec int
	var record bool
	if _, err := fmt.Sscan(spec, &addr, &n, &matching, &hashEvery, &perSec, &record); err != nil {
		return fmt.Errorf("%s=%q: %v", generateEnv, spec, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, ClientName: benchName + "-generator"})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return err
	}
	var incrs []measure.Incr
	if record {
		incrs = make([]measure.Incr, 0, n)
	}
	start := time.Now()
	behind := time.Duration(0)
	for i := range n {
		due := start.Add(time.Duration(i) * time.Second / time.Duration(perSec))
		time.Sleep(time.Until(due))
		behind = max(behind, time.Since(due))
		j := rand.IntN(matching)
		for hashEvery > 0 && j%hashEvery == hashEvery-1 { // seed's hashes: INCR would fail
			j = rand.IntN(matching)
		}
		k := seed.CounterKey(j)
		v, err := rdb.Incr(ctx, k).Result()
		if err != nil {
			return err
		}
		if record {
			incrs = append(incrs, measure.Incr{Key: k, Value: v, At: time.Now().UnixNano()})
		}
	}
	took := time.Since(start)
	w := bufio.NewWriter(os.Stdout)
	if record {
		for _, in := range incrs {
			fmt.Fprintln(w, in.Key, in.Value, in.At)
		}
	} else {
		fmt.Fprintf(w, "%d INCRs in %.1f s (%.0f/s), at most %.0f ms behind schedule\n", n, took.Seconds(), float64(n)/took.Seconds(), float64(behind)/float64(time.Millisecond))
	}
	return w.Flush()
}
