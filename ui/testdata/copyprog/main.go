// Command copyprog is the dashboard over a fixed Store, for the tests that
// run it in a real terminal (tmux): it reads nothing from Redis and writes
// nowhere. It lives under testdata so that it is built only when a test
// asks for it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/ui"
)

func main() {
	mouse := flag.Bool("mouse", false, "turn the mouse on")
	flag.Parse()
	now := time.Now()
	store := model.NewStore(&model.Rules{
		List:     []model.Rule{{Pattern: "ratelimit:*", Limit: 100, Window: time.Minute, ExpectTTL: true}},
		Fallback: model.Rule{ExpectTTL: true},
	})
	var obs []model.Observation
	for _, key := range flag.Args() {
		obs = append(obs, model.Observation{Key: key, Type: "string", Raw: "17", PTTL: 600_000, At: now})
	}
	store.Apply(model.Batch{Observed: obs})
	m := ui.New(ui.Options{Store: store, Title: "copyprog", Patterns: []string{"ratelimit:*"}, Mouse: *mouse})
	if _, err := tea.NewProgram(m).Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
