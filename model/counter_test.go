package model

import (
	"fmt"
	"testing"
	"time"
)

// A snapshot classifies each key once with NewCounter; the dashboard holds
// it in a Store. Both must say the same of the same reading.
func TestNewCounterIsTheStoresFirstReading(t *testing.T) {
	rules := &Rules{
		List: []Rule{
			{Pattern: "rl:*", Limit: 10, Window: time.Minute, ExpectTTL: true},
			{Pattern: "views:*"},
		},
		Fallback: Rule{ExpectTTL: true},
	}
	tests := []struct {
		o    Observation
		want Status
	}{
		{Observation{Key: "rl:a", Type: "string", Raw: "5", PTTL: 30_000}, StatusOK},
		{Observation{Key: "rl:full", Type: "string", Raw: "10", PTTL: 30_000}, StatusOver},
		{Observation{Key: "rl:stuck", Type: "string", Raw: "10", PTTL: PTTLNoExpiry}, StatusStuck},
		{Observation{Key: "rl:lost", Type: "string", Raw: "3", PTTL: PTTLNoExpiry}, StatusNoExpiry},
		{Observation{Key: "rl:float", Type: "string", Raw: "8.5", PTTL: 1000}, StatusWarn},
		{Observation{Key: "rl:text", Type: "string", Raw: "hello", PTTL: 1000}, StatusNotCounter},
		{Observation{Key: "rl:padded", Type: "string", Raw: "007", PTTL: 1000}, StatusOK}, // a float to Redis: INCRBYFLOAT reads 7
		{Observation{Key: "views:home", Type: "string", Raw: "12345", PTTL: PTTLNoExpiry}, StatusOK},
		{Observation{Key: "other", Type: "hash", PTTL: PTTLNoExpiry}, StatusNotCounter},
		{Observation{Key: "rl:inf", Type: "string", Raw: "inf", PTTL: PTTLNoExpiry}, StatusNotCounter},
	}
	var obs []Observation
	for _, tt := range tests {
		tt.o.At = t0
		obs = append(obs, tt.o)
	}
	s := NewStore(rules)
	s.Apply(Batch{Observed: obs})
	for i, tt := range tests {
		t.Run(tt.o.Key, func(t *testing.T) {
			got := NewCounter(&obs[i], rules)
			want, ok := s.Get(tt.o.Key)
			if !ok {
				t.Fatalf("the Store lost %s", tt.o.Key)
			}
			if got.Status != tt.want {
				t.Errorf("%s: status %v, want %v", tt.o.Key, got.Status, tt.want)
			}
			if !got.ObservedAt.Equal(want.ObservedAt) {
				t.Errorf("%s: observed at %v, the Store says %v", tt.o.Key, got.ObservedAt, want.ObservedAt)
			}
			got.ObservedAt, want.ObservedAt = time.Time{}, time.Time{}
			if got != want {
				t.Errorf("%s:\nNewCounter %+v\nthe Store  %+v", tt.o.Key, got, want)
			}
		})
	}
}

// Percent is what the dashboard's % column shows: a value with no finite
// number (inf, 1e400) has none, where it used to read ">999%".
func TestCounterPercent(t *testing.T) {
	tests := []struct {
		raw   string
		limit float64
		want  float64
		ok    bool
	}{
		{"50", 100, 0.5, true},
		{"2.5", 10, 0.25, true},
		{"150", 100, 1.5, true},
		{"50", 0, 0, false},
		{"hello", 100, 0, false},
		{"inf", 100, 0, false},
		{"-inf", 100, 0, false},
		{"1e400", 100, 0, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.raw, " of ", tt.limit), func(t *testing.T) {
			c := NewCounter(&Observation{Key: "rl:k", Type: "string", Raw: tt.raw, PTTL: PTTLNoExpiry, At: t0}, testRules())
			if got, ok := c.Percent(tt.limit); got != tt.want || ok != tt.ok {
				t.Errorf("%q of %v: Percent = %v, %v; want %v, %v", tt.raw, tt.limit, got, ok, tt.want, tt.ok)
			}
		})
	}
}
