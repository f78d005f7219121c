package model

import "testing"

// What lies beyond a hash's shown fields, in words: how many more, and of
// those, how many hold a number without a TTL, when they were counted.
func TestNotShownText(t *testing.T) {
	for _, tc := range []struct {
		notShown, noTTL int64
		want            string
	}{
		{0, 0, ""},
		{0, -1, ""},
		{1, -1, "1 more field not shown"},
		{1200, -1, "1200 more fields not shown"},
		{1200, 0, "1200 more fields not shown, none of them a number without a TTL"},
		{1200, 1, "1200 more fields not shown, 1 of them a number without a TTL"},
		{1200, 3, "1200 more fields not shown, 3 of them numbers without a TTL"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := NotShownText(tc.notShown, tc.noTTL); got != tc.want {
				t.Errorf("NotShownText(%d, %d) = %q, want %q", tc.notShown, tc.noTTL, got, tc.want)
			}
		})
	}
}

// A field's PTTL is the one HPTTL read of it; a field the reading does not
// hold is missing.
func TestFieldPTTL(t *testing.T) {
	o := Observation{Type: "hash", FieldTTLs: true, Fields: []Field{{Name: "api", Value: "3", PTTL: 5000}, {Name: "login", Value: "1", PTTL: PTTLNoExpiry}}}
	for field, want := range map[string]int64{"api": 5000, "login": PTTLNoExpiry, "gone": PTTLMissing} {
		t.Run(field, func(t *testing.T) {
			if got := o.FieldPTTL(field); got != want {
				t.Errorf("FieldPTTL(%q) = %d, want %d", field, got, want)
			}
		})
	}
}
