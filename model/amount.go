package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Amount is how much a test increment adds: an integer (INCRBY/DECRBY) or a
// float (INCRBYFLOAT).
type Amount struct {
	Int     int64
	Float   float64
	IsFloat bool
}

// ParseAmount reads what a user typed for an increment: "1", "-5", "2.5".
// It accepts exactly what Redis accepts as an INCRBY or INCRBYFLOAT argument
// (see ParseValue), so nothing is sent that Redis would refuse to parse,
// but for a whole number beyond 64 bits: INCRBYFLOAT would take it and
// round it, and a counter cannot hold it anyway.
func ParseAmount(s string) (Amount, error) {
	t := strings.TrimSpace(s)
	if _, err := strconv.ParseInt(t, 10, 64); errors.Is(err, strconv.ErrRange) {
		return Amount{}, fmt.Errorf("%s is beyond what a counter holds (-9223372036854775808 to 9223372036854775807): give an amount in that range", t)
	}
	v := ParseValue(t)
	switch {
	case v.Kind == KindInt:
		return Amount{Int: v.Int}, nil
	case v.Kind == KindFloat:
		return Amount{Float: v.Float, IsFloat: true}, nil
	}
	return Amount{}, fmt.Errorf("%q is not an amount: give an integer like 5 or -1, or a decimal like 2.5", s)
}

// String is the amount as Redis is sent it.
func (a Amount) String() string {
	if a.IsFloat {
		return strconv.FormatFloat(a.Float, 'f', -1, 64)
	}
	return strconv.FormatInt(a.Int, 10)
}

// Command names the Redis command the amount is sent with.
func (a Amount) Command() string {
	if a.IsFloat {
		return "INCRBYFLOAT"
	}
	return "INCRBY"
}
