package report

import (
	"time"

	"github.com/countertop/countertop/model"
)

// t0 is when the tests' readings were taken.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// testRules are a rate limit with a window, page views that live
// forever, and a fallback with a limit but no window.
func testRules() *model.Rules {
	return &model.Rules{
		List: []model.Rule{
			{Pattern: "rl:*", Limit: 100, Window: time.Minute, ExpectTTL: true},
			{Pattern: "views:*", ExpectTTL: false},
		},
		Fallback: model.Rule{Limit: 10, ExpectTTL: true},
	}
}

// read is an observation of a string key at t0+at.
func read(key, raw string, pttl int64, at time.Duration) model.Observation {
	return model.Observation{Key: key, Type: "string", Raw: raw, PTTL: pttl, At: t0.Add(at)}
}

// refs points at each of rows, as the writers take them.
func refs(rows []model.Counter) []*model.Counter {
	out := make([]*model.Counter, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out
}
