package model

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Amount is how much a test increment adds: a whole number (INCRBY, and
// INCRBYFLOAT on a decimal counter) or a decimal (INCRBYFLOAT).
type Amount struct {
	Int     int64
	Float   float64
	IsFloat bool
	// AllowFloat says the user agreed that a decimal amount may turn a key
	// that holds an integer, or does not exist, into a decimal counter, on
	// which the application's own INCR fails from then on. Without it such
	// an increment is not sent (see ErrMakesDecimal).
	AllowFloat bool
}

// ErrMakesDecimal is the cause of the error of a decimal increment, sent
// without Amount.AllowFloat, of a key that holds an integer or does not
// exist: INCRBYFLOAT would leave a decimal there, and the application's
// INCR would fail on it ("value is not an integer"). Nothing was written.
var ErrMakesDecimal = errors.New("the increment would turn an integer counter into a decimal one")

// ErrNotHash is the cause of the error of an increment of a hash field
// whose key holds another type when it runs (it was deleted and written
// again as a string, say): HINCRBY would fail, or write a counter the
// limiter never reads. Nothing was written.
var ErrNotHash = errors.New("the key is not a hash")

// maxFracDigits is how many digits after the point INCRBYFLOAT keeps: Redis
// writes its result with "%.17Lf", so a finer step is lost.
const maxFracDigits = 17

// ParseAmount reads what a user typed for an increment: "1", "-5", "+5",
// "2.5", "1e3". Only decimal notation is taken: Redis would read "0x10" as
// 16, which nobody who types an amount means. A whole number, however
// written ("007", "2.0", "1e3"), is an integer amount, sent with INCRBY:
// INCRBYFLOAT of it would leave an integer counter an integer anyway.
//
// What would not be sent as typed is refused: a whole number beyond 64
// bits (a counter cannot hold it), a step finer than Redis keeps
// ("2.5e-400" would add 0), and more digits than a float64 carries (it
// would be rounded).
func ParseAmount(s string) (Amount, error) {
	t := strings.TrimSpace(s)
	d, ok := scanDecimal(t)
	if !ok {
		return Amount{}, fmt.Errorf("%q is not an amount: give an integer like 5 or -1, or a decimal like 2.5", s)
	}
	switch {
	case d.digits == "":
		return Amount{}, nil
	case d.exp >= 0:
		n, err := strconv.ParseInt(d.sign+d.digits+strings.Repeat("0", int(min(d.exp, 20))), 10, 64)
		if err != nil { // only ErrRange is left
			return Amount{}, fmt.Errorf("%s is beyond what a counter holds (-9223372036854775808 to 9223372036854775807): give an amount in that range", t)
		}
		return Amount{Int: n}, nil
	case d.exp+int64(len(d.digits)) <= -maxFracDigits:
		// Even its first digit lies past the 17th after the point.
		return Amount{}, fmt.Errorf("%s is too small to count: Redis keeps %d digits after the point, so INCRBYFLOAT would add 0; give at least 0.00000000000000001", t, maxFracDigits)
	case d.exp < -maxFracDigits:
		return Amount{}, fmt.Errorf("%s has more than %d digits after the point, and Redis keeps no more: round it", t, maxFracDigits)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil { // the syntax is checked and the size bounded: cannot happen
		return Amount{}, fmt.Errorf("%q is not an amount: give an integer like 5 or -1, or a decimal like 2.5", s)
	}
	a := Amount{Float: f, IsFloat: true}
	if sent, _ := scanDecimal(strconv.FormatFloat(f, 'e', -1, 64)); sent != d {
		return Amount{}, fmt.Errorf("%s has more digits than an increment carries exactly: it would be sent as %s, so round it", t, a)
	}
	return a, nil
}

// decimal is a number in decimal notation, as sign·digits·10^exp with no
// leading or trailing zeros in digits ("" for zero, whose sign is dropped).
type decimal struct {
	sign   string // "" or "-"
	digits string
	exp    int64
}

// maxAmountExp bounds the exponent read: past it, any number with as many
// digits as fit in a flag or a prompt is beyond 64 bits or below a step
// Redis keeps, so only its sign matters.
const maxAmountExp = 1 << 20

// scanDecimal reads s as an optional sign, decimal digits with an optional
// point ("1.5", ".5", "5.") and an optional e-exponent, and reports whether
// all of s is such a number.
func scanDecimal(s string) (d decimal, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		if s[i] == '-' {
			d.sign = "-"
		}
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart, fracPart := s[start:i], ""
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracPart = s[start:i]
	}
	if intPart == "" && fracPart == "" {
		return d, false
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		negExp := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) {
			return d, false
		}
		for ; i < len(s) && isDigit(s[i]); i++ {
			exp = min(exp*10+int64(s[i]-'0'), maxAmountExp)
		}
		if negExp {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	digits := strings.TrimLeft(intPart+fracPart, "0")
	trimmed := strings.TrimRight(digits, "0")
	d.digits, d.exp = trimmed, exp-int64(len(fracPart))+int64(len(digits)-len(trimmed))
	if d.digits == "" {
		d.sign, d.exp = "", 0
	}
	return d, true
}

// String is the amount as Redis is sent it.
func (a Amount) String() string {
	if a.IsFloat {
		return strconv.FormatFloat(a.Float, 'f', -1, 64)
	}
	return strconv.FormatInt(a.Int, 10)
}

// Command names the Redis command the amount is sent with. Incremented's
// Command says which one ran: a whole amount goes to a decimal counter as
// INCRBYFLOAT.
func (a Amount) Command() string {
	if a.IsFloat {
		return "INCRBYFLOAT"
	}
	return "INCRBY"
}

// CommandOn names the command the amount is sent with to field of a hash
// (HINCRBY, HINCRBYFLOAT), or to a string counter when field is "".
func (a Amount) CommandOn(field string) string {
	if field != "" {
		return "H" + a.Command()
	}
	return a.Command()
}

// Incremented is what an increment did: the key as it is afterwards, the
// command that ran, and what became of the key's TTL.
type Incremented struct {
	Observation
	// Command is what Redis ran: INCRBY, or INCRBYFLOAT (a decimal
	// amount, or a whole one on a key that holds a decimal); HINCRBY or
	// HINCRBYFLOAT for a hash field.
	Command string
	// Field is the hash field that was incremented, and FieldValue what it
	// holds afterwards; "" for a string counter, whose value is Raw.
	Field, FieldValue string
	// GaveTTL says the key existed without a TTL (an immortal or stuck
	// counter) and the increment gave it one; for a field with a TTL of its
	// own (FieldTTL), the field did.
	GaveTTL bool
	// FieldTTL says Field belongs to a hash whose fields carry TTLs of
	// their own (or whose rule says they do: Rule.FieldTTLs), on a server
	// that has them: the increment then gives the field its window, never
	// the key, and FieldPTTL is the field's own PTTL afterwards.
	FieldTTL  bool
	FieldPTTL int64
	// Expire is the expiry sent with the increment in the same atomic
	// step, as sent, when it is not the key's PEXPIRE of a key without a
	// TTL: HPEXPIRE key ms NX FIELDS 1 field for a field with a TTL of its
	// own. Nil when none was (--no-expire, no window known, or a key's).
	Expire []string
}

// IncrText is an increment as people would type it, its names escaped:
// "INCRBY k 1", "HINCRBY k hits 1" (field "" for a string counter).
func IncrText(command, key, field string, by Amount) string {
	if field != "" {
		return command + " " + Printable(key) + " " + Printable(field) + " " + by.String()
	}
	return command + " " + Printable(key) + " " + by.String()
}

// Sent is what the increment by by sent, as people would type it, its
// names escaped: "HINCRBY quota:u1 api 1", followed by ", HPEXPIRE
// quota:u1 60000 NX FIELDS 1 api" when the field's expiry went with it.
func (r Incremented) Sent(by Amount) string {
	text := IncrText(r.Command, r.Key, r.Field, by)
	if len(r.Expire) > 0 {
		args := slices.Clone(r.Expire)
		for i, a := range args {
			args[i] = Printable(a)
		}
		text += ", " + strings.Join(args, " ")
	}
	return text
}

// Value is what the counter holds after the increment: the field's value
// for a hash field, else the string's.
func (r Incremented) Value() string {
	if r.Field != "" {
		return r.FieldValue
	}
	return r.Raw
}

// TTLNote says the key's TTL after the increment as TTLPhrase does, or,
// when the increment gave the key its first one, that it did: "it had no
// TTL, now 1m00s". A repair made in passing is said, never silent. For a
// field with a TTL of its own (FieldTTL) it says the field's: "TTL 59s on
// the field", "the field had no TTL, now 1m00s".
func (r Incremented) TTLNote() string {
	p := TTLPhrase(r.PTTL)
	if r.FieldTTL {
		p = TTLPhrase(r.FieldPTTL) + " on the field" // the key has none of its own
	}
	if r.GaveTTL && r.FieldTTL {
		return "the field had no TTL, now " + strings.TrimPrefix(TTLPhrase(r.FieldPTTL), "TTL ")
	}
	if r.GaveTTL {
		return "it had no TTL, now " + strings.TrimPrefix(p, "TTL ")
	}
	return p
}
