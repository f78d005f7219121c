package ui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// BenchmarkView draws a 120x40 frame: only the rows on screen are read, so
// the cost should not grow with the number of keys.
func BenchmarkView(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprint(n, "keys"), func(b *testing.B) {
			obs := make([]model.Observation, n)
			for i := range obs {
				obs[i] = str(fmt.Sprintf("ratelimit:user:%07d", i), fmt.Sprint(i%150), int64(i%60_000))
			}
			store := model.NewStore(testRules())
			store.Apply(model.Batch{Observed: obs})
			m, _ := send(New(Options{Store: store, Now: testNow}), tea.WindowSizeMsg{Width: 120, Height: 40})
			m, _ = press(m, "G")
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
