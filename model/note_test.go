package model

import (
	"strings"
	"testing"
	"time"
)

func TestNote(t *testing.T) {
	tests := []struct {
		name   string
		layout Layout
		value  Value
		pttl   int64
		window time.Duration
		want   string // in the note; "": no note
	}{
		{"negative, no TTL", LayoutCounter, ParseValue("-1"), PTTLNoExpiry, time.Minute, "decrement after the key expired"},
		{"negative with a TTL", LayoutCounter, ParseValue("-1"), 30_000, time.Minute, ""},
		{"a day under a 60 s rule", LayoutCounter, ParseValue("3"), 86_400_000, time.Minute, "TTL 1d00h is more than twice its rule's window of 1m00s"},
		{"twice the window", LayoutCounter, ParseValue("3"), 120_000, time.Minute, ""},
		{"no window known", LayoutCounter, ParseValue("3"), 86_400_000, 0, ""},
		{"a log's long TTL", LayoutLog, ParseValue("3"), 86_400_000, time.Minute, ""},
		{"a window counter", LayoutWindow, ParseValue("3"), 86_400_000, time.Minute, "more than twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Counter{Layout: tt.layout, Value: tt.value, PTTL: tt.pttl}
			got := Note(&c, tt.window)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("%s: Note = %q, want one with %q", tt.name, got, tt.want)
			}
		})
	}
}
