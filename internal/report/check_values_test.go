package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// A block flag without a TTL is a client refused forever; a count kept in
// JSON or msgpack is said as its number, not as the bytes that hold it.
func TestWriteProblemsOfBlocksAndDecodedCounts(t *testing.T) {
	rules := &model.Rules{List: []model.Rule{{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true}}}
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	obs := []model.Observation{
		{Key: "rl:u8:blocked", Type: "string", Raw: "1"},
		{Key: "rl:json:u8", Type: "string", Raw: `{"count":12,"lastRequest":1796160099000}`},
		{Key: "fiber:127.0.0.1", Type: "string", Raw: "\x83\xa8currHits\x03\xa8prevHits\x09\xa3exp\xce\x6b\x0e\x3a\xf8"},
	}
	for i := range obs {
		obs[i].PTTL, obs[i].At = model.PTTLNoExpiry, now
		obs[i].Newest, obs[i].Oldest, obs[i].InWindow = math.NaN(), math.NaN(), -1
	}
	s := model.NewStore(rules)
	s.Apply(model.Batch{Observed: obs})
	var out strings.Builder
	if err := WriteProblems(&out, refs(s.Rows(0, s.Len())), rules); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"stuck      rl:u8:blocked  block      a block flag (1) with no TTL: its client is refused forever; fix: countertop repair, which sends PEXPIRE rl:u8:blocked 60000 NX",
		"stuck      rl:json:u8  counter    value 12 >= limit 10 and no TTL: blocked forever",
		"no-expiry  fiber:127.0.0.1  counter    value 3, no TTL: it will never reset",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check lacks %q:\n%s", want, out.String())
		}
	}
}
