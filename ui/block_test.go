package ui

import (
	"strings"
	"testing"

	"github.com/countertop/countertop/model"
)

// A block flag's detail says its client is refused and for how long, and
// names the key beside it that counts the client's hits; without a TTL it
// says the client is refused for good.
func TestDetailOfABlockFlag(t *testing.T) {
	obs := []model.Observation{
		str("ratelimit:login:u7:blocked", "1", 300_000),
		str("ratelimit:login:u7", "12", 20_000),
		str("ratelimit:login:u8:blocked", "1", model.PTTLNoExpiry),
	}
	m := newModel(t, newFakeWriter().seed(obs...), 120, 40, obs...)
	m = selectKey(t, m, "ratelimit:login:u7:blocked")
	m, _ = press(m, "<enter>")
	screen := flat(m)
	for _, want := range []string{
		"status over",
		"Refusing its client: a limiter refuses every request while this flag exists, for another 4m58s (its TTL)",
		"layout block",
		"value frees in 4m58s",
		"hits 1 key beside it:",
		`"ratelimit:login:u7" 12 ok 18s`,
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the detail does not say %q:\n%s", want, plain(m))
		}
	}

	m, _ = press(m, "<esc>")
	m = selectKey(t, m, "ratelimit:login:u8:blocked")
	m, _ = press(m, "<enter>")
	screen = flat(m)
	for _, want := range []string{
		"status stuck",
		"A block flag with no TTL: its client is refused for good",
		"no key beside it counts this client's hits",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the stuck flag's detail does not say %q:\n%s", want, plain(m))
		}
	}
}
