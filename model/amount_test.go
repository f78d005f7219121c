package model

import (
	"math/big"
	"strings"
	"testing"
)

var amountCases = []struct {
	in      string
	want    Amount
	wantErr string // the start of the error, "" for none
}{
	{in: "1", want: Amount{Int: 1}},
	{in: " -5 ", want: Amount{Int: -5}},
	{in: "+5", want: Amount{Int: 5}},
	{in: "0", want: Amount{}},
	{in: "-0.0", want: Amount{}},
	{in: "2.5", want: Amount{Float: 2.5, IsFloat: true}},
	{in: "-0.25", want: Amount{Float: -0.25, IsFloat: true}},
	{in: ".5", want: Amount{Float: 0.5, IsFloat: true}},
	{in: "1.5e-3", want: Amount{Float: 0.0015, IsFloat: true}},
	{in: "0.00000000000000001", want: Amount{Float: 1e-17, IsFloat: true}}, // the finest step Redis keeps
	{in: "9223372036854775807", want: Amount{Int: 9223372036854775807}},
	{in: "-9223372036854775808", want: Amount{Int: -9223372036854775808}},
	// A whole number is an integer amount however it is written: INCRBY
	// refuses "007" and "2.0" as arguments, and INCRBYFLOAT of them would
	// leave an integer counter an integer anyway.
	{in: "007", want: Amount{Int: 7}},
	{in: "2.0", want: Amount{Int: 2}},
	{in: "2.50e1", want: Amount{Int: 25}},
	{in: "1e3", want: Amount{Int: 1000}},
	{in: "1e18", want: Amount{Int: 1_000_000_000_000_000_000}},
	{in: "9223372036854775808", wantErr: "9223372036854775808 is beyond what a counter holds (-9223372036854775808 to 9223372036854775807): give an amount in that range"},
	{in: "-9223372036854775809", wantErr: "-9223372036854775809 is beyond what a counter holds"},
	{in: "1e19", wantErr: "1e19 is beyond what a counter holds"},
	{in: "1e999999999999", wantErr: "1e999999999999 is beyond what a counter holds"},
	// Only decimal notation: Redis reads these as numbers too, which
	// nobody who types an amount means.
	{in: "0x10", wantErr: `"0x10" is not an amount: give an integer like 5 or -1, or a decimal like 2.5`},
	{in: "0x1.8p1", wantErr: `"0x1.8p1" is not an amount`},
	{in: "inf", wantErr: `"inf" is not an amount`},
	{in: "-Infinity", wantErr: `"-Infinity" is not an amount`},
	{in: "nan", wantErr: `"nan" is not an amount`},
	{in: "abc", wantErr: `"abc" is not an amount`},
	{in: "", wantErr: `"" is not an amount`},
	{in: ".", wantErr: `"." is not an amount`},
	{in: "1e", wantErr: `"1e" is not an amount`},
	{in: "1_000", wantErr: `"1_000" is not an amount`},
	{in: "1 000", wantErr: `"1 000" is not an amount`},
	{in: "--1", wantErr: `"--1" is not an amount`},
	// What Redis would not add as typed.
	{in: "2.5e-400", wantErr: "2.5e-400 is too small to count: Redis keeps 17 digits after the point, so INCRBYFLOAT would add 0; give at least 0.00000000000000001"},
	{in: "0.000000000000000009", wantErr: "0.000000000000000009 is too small to count"},
	{in: "1.5e-17", wantErr: "1.5e-17 has more than 17 digits after the point, and Redis keeps no more: round it"},
	{in: "0.123456789012345678", wantErr: "0.123456789012345678 has more than 17 digits after the point"},
	{in: "123456789.123456789", wantErr: "123456789.123456789 has more digits than an increment carries exactly: it would be sent as 123456789.12345679, so round it"},
	{in: "1e-999999999999", wantErr: "1e-999999999999 is too small to count"},
}

func TestParseAmount(t *testing.T) {
	for _, tt := range amountCases {
		t.Run(caseName(tt.in), func(t *testing.T) {
			got, err := ParseAmount(tt.in)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ParseAmount(%q): %v", tt.in, err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Errorf("ParseAmount(%q) = %+v, %v; want the error %q", tt.in, got, err, tt.wantErr)
			case err == nil && got != tt.want:
				t.Errorf("ParseAmount(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestAmountSentForm(t *testing.T) {
	if a := (Amount{Int: -3}); a.Command() != "INCRBY" || a.String() != "-3" {
		t.Errorf("integer amount: %s %s", a.Command(), a)
	}
	if a := (Amount{Float: -2.5, IsFloat: true}); a.Command() != "INCRBYFLOAT" || a.String() != "-2.5" {
		t.Errorf("float amount: %s %s", a.Command(), a)
	}
	if a := (Amount{Int: 2}); a.CommandOn("hits") != "HINCRBY" || a.CommandOn("") != "INCRBY" {
		t.Errorf("integer amount on a field: %s, on a string: %s", a.CommandOn("hits"), a.CommandOn(""))
	}
	if a := (Amount{Float: 0.5, IsFloat: true}); a.CommandOn("hits") != "HINCRBYFLOAT" {
		t.Errorf("float amount on a field: %s", a.CommandOn("hits"))
	}
	if a, _ := ParseAmount("1e-17"); a.String() != "0.00000000000000001" {
		t.Errorf("1e-17 is sent as %s", a)
	}
}

// FuzzParseAmount holds ParseAmount to what is sent being what was typed:
// an amount it takes is sent as the same number, which reads back as the
// same amount; a decimal one is no whole number.
func FuzzParseAmount(f *testing.F) {
	for _, tc := range amountCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := ParseAmount(in)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("%q: an error of more than one line: %q", in, err)
			}
			return
		}
		trimmed := strings.TrimSpace(in)
		if e := strings.IndexAny(trimmed, "eE"); e >= 0 && len(trimmed)-e > 6 {
			return // big.Rat would compute the power of ten in full
		}
		typed, ok := new(big.Rat).SetString(trimmed)
		sent, ok2 := new(big.Rat).SetString(a.String())
		if !ok || !ok2 || typed.Cmp(sent) != 0 {
			t.Fatalf("%q is sent as %s %s", in, a.Command(), a)
		}
		if a.IsFloat == sent.IsInt() {
			t.Fatalf("%q: IsFloat is %v for %s", in, a.IsFloat, a)
		}
		if again, err := ParseAmount(a.String()); err != nil || again != a {
			t.Fatalf("%q is sent as %s, which reads as %+v, %v", in, a, again, err)
		}
	})
}

func TestIncrementedTTLNote(t *testing.T) {
	for _, tc := range []struct {
		r    Incremented
		want string
	}{
		{Incremented{Observation: Observation{PTTL: 60_000}}, "TTL 1m00s"},
		{Incremented{Observation: Observation{PTTL: 60_000}, GaveTTL: true}, "it had no TTL, now 1m00s"},
		{Incremented{Observation: Observation{PTTL: PTTLNoExpiry}}, "no TTL"},
		// A field with a TTL of its own: the field's, whatever the hash's.
		{Incremented{Observation: Observation{PTTL: PTTLNoExpiry}, FieldTTL: true, FieldPTTL: 59_000}, "TTL 59s on the field"},
		{Incremented{Observation: Observation{PTTL: PTTLNoExpiry}, FieldTTL: true, FieldPTTL: 60_000, GaveTTL: true}, "the field had no TTL, now 1m00s"},
		{Incremented{Observation: Observation{PTTL: 5_000}, FieldTTL: true, FieldPTTL: PTTLNoExpiry}, "no TTL on the field"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.r.TTLNote(); got != tc.want {
				t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
			}
		})
	}
}

// A hash field's value is the field's, not the hash's Raw (none).
func TestIncrementedValue(t *testing.T) {
	if v := (Incremented{Observation: Observation{Type: "string", Raw: "7"}}).Value(); v != "7" {
		t.Errorf("a string counter's value: %q, want 7", v)
	}
	if v := (Incremented{Observation: Observation{Type: "hash"}, Field: "hits", FieldValue: "12"}).Value(); v != "12" {
		t.Errorf("a hash field's value: %q, want 12", v)
	}
}

// What an increment sent, as people would type it, names escaped: the
// field's HPEXPIRE after the increment when it went with it.
func TestIncrementedSent(t *testing.T) {
	one := Amount{Int: 1}
	for _, tc := range []struct {
		r    Incremented
		want string
	}{
		{Incremented{Observation: Observation{Key: "rl:1"}, Command: "INCRBY"}, "INCRBY rl:1 1"},
		{Incremented{Observation: Observation{Key: "rl:\x1b"}, Command: "HINCRBY", Field: "hits"}, `HINCRBY rl:\e hits 1`},
		{Incremented{Observation: Observation{Key: "q:\n"}, Command: "HINCRBY", Field: "a\x1b", Expire: []string{"HPEXPIRE", "q:\n", "60000", "NX", "FIELDS", "1", "a\x1b"}},
			`HINCRBY q:\n a\e 1, HPEXPIRE q:\n 60000 NX FIELDS 1 a\e`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.r.Sent(one); got != tc.want {
				t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
			}
		})
	}
}
