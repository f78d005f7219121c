package model

import "testing"

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in      string
		want    Amount
		wantErr bool
	}{
		{in: "1", want: Amount{Int: 1}},
		{in: " -5 ", want: Amount{Int: -5}},
		{in: "2.5", want: Amount{Float: 2.5, IsFloat: true}},
		{in: "-0.25", want: Amount{Float: -0.25, IsFloat: true}},
		{in: "9223372036854775807", want: Amount{Int: 9223372036854775807}},
		{in: "007", want: Amount{Float: 7, IsFloat: true}}, // INCRBY refuses it; INCRBYFLOAT reads 7
		{in: "9223372036854775808", wantErr: true},         // INCRBYFLOAT would round it
		{in: "-9223372036854775809", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "", wantErr: true},
		{in: "1_000", wantErr: true},
		{in: "inf", wantErr: true},
		{in: "nan", wantErr: true},
	}
	for _, in := range []string{"9223372036854775808", "-9223372036854775809"} {
		_, err := ParseAmount(in)
		if want := in + " is beyond what a counter holds (-9223372036854775808 to 9223372036854775807): give an amount in that range"; err == nil || err.Error() != want {
			t.Errorf("ParseAmount(%q) error = %v, want %q", in, err, want)
		}
	}
	for _, tt := range tests {
		got, err := ParseAmount(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseAmount(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseAmount(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestAmountSentForm(t *testing.T) {
	if a := (Amount{Int: -3}); a.Command() != "INCRBY" || a.String() != "-3" {
		t.Errorf("integer amount: %s %s", a.Command(), a)
	}
	if a := (Amount{Float: -2.5, IsFloat: true}); a.Command() != "INCRBYFLOAT" || a.String() != "-2.5" {
		t.Errorf("float amount: %s %s", a.Command(), a)
	}
}
