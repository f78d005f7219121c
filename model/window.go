package model

import (
	"math"
	"strings"
	"time"
)

// WindowName is what a window key's name says of its window: a fixed- or
// sliding-window limiter writes one key per window, its name ending in the
// window (`rl:user42:29936001`), and keeps a client's keys apart by the
// rest of the name.
type WindowName struct {
	Identity string        // the name without the window part and its separator: the same for each window of one client
	Part     string        // the window part as written: "29936001", "1764620400", "1764979200000000000", "2026-12-01"
	Start    time.Time     // when the window began, in UTC
	Length   time.Duration // its length: the rule's window, or what the name implies; 0 when not known
	Past     bool          // it ended a window or more before the reading: the limiter reads it no more
}

// windowForm is how a name writes its window.
type windowForm uint8

const (
	formFloor windowForm = iota // floor(time / window): `…:29936001`
	formEpoch                   // the window's start in epoch s, ms, µs or ns: `…_1764620400`, `{…}1764979200000000000`
	formStamp                   // a date or hour stamp: `…:2026120114`, `…:2026-12-01`
)

// windowCandidates are the lengths a name's floor(time / window) is tried
// against when no rule gives the window, and those an epoch start is
// aligned to (the largest it is a multiple of is taken as its length).
var windowCandidates = [...]time.Duration{
	time.Second, 10 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute,
	15 * time.Minute, time.Hour, 24 * time.Hour,
}

const (
	// windowHorizon is how old a window a name may carry and still be read
	// as one: a leaked window's key lives on, but a number that is a
	// window from years ago is more likely an id.
	windowHorizon = 366 * 24 * time.Hour
	// stampZoneGrace: a stamp may be written in the limiter's local time,
	// anywhere from 12 hours behind UTC to 14 ahead.
	stampZoneGrace = 14 * time.Hour
)

// isWindowSep reports whether c may separate a name from its window part:
// '@' as in `key@1764979200000000000`, and the '}' that ends a hash tag,
// as in `{prefix}1764979200000000000` (mennanov/limiters), besides the
// usual ones.
func isWindowSep(c byte) bool {
	switch c {
	case ':', '_', '-', '.', '/', '|', '@', '}':
		return true
	}
	return false
}

// parseWindowName reads the window part at the end of key, judged at now;
// window is the rule's (0: not known). When forced (the rule says the key
// is a window) a window of any age is taken; otherwise only a recent one,
// and a floor(time / window) with no rule window only when it is the
// current window or a neighbour, so that an id is not taken for an old
// window. ok is false when the name ends in no window part.
func parseWindowName(key string, window time.Duration, now time.Time, forced bool) (w WindowName, form windowForm, ok bool) {
	if key == "" || !isDigit(key[len(key)-1]) { // every window part ends in a digit
		return WindowName{}, 0, false
	}
	if w, ok = parseDashedStamp(key); ok {
		form = formStamp
	} else if w, form, ok = parseDigitsPart(key, window, now, forced); !ok {
		return WindowName{}, 0, false
	}
	if form == formStamp && !recentStamp(w, now, forced) {
		return WindowName{}, 0, false
	}
	if window > 0 && form != formStamp {
		w.Length = window
	}
	if w.Length > 0 {
		end := w.Start.Add(2 * w.Length) // a window's grace: a sliding window reads the previous one
		if form == formStamp {
			end = end.Add(stampZoneGrace)
		}
		w.Past = !now.Before(end)
	}
	return w, form, true
}

// recentStamp reports whether a stamp's window is one a limiter could be
// writing or have left behind: not ahead of now by more than time zones
// allow, and (unless forced) within windowHorizon.
func recentStamp(w WindowName, now time.Time, forced bool) bool {
	if w.Start.After(now.Add(stampZoneGrace)) {
		return false
	}
	return forced || !w.Start.Before(now.Add(-windowHorizon))
}

// splitWindowPart splits key before its last n bytes, which must follow a
// separator and a name of at least one byte. A hash tag's '}' stays in the
// identity: it closes the tag, it is not there to separate.
func splitWindowPart(key string, n int) (WindowName, bool) {
	i := len(key) - n
	if n <= 0 || i < 2 || !isWindowSep(key[i-1]) {
		return WindowName{}, false
	}
	if key[i-1] == '}' {
		return WindowName{Identity: key[:i], Part: key[i:]}, true
	}
	return WindowName{Identity: key[:i-1], Part: key[i:]}, true
}

// parseDashedStamp reads `YYYY-MM-DD`, `YYYY-MM-DDTHH` or
// `YYYY-MM-DDTHH:MM` at the end of key.
func parseDashedStamp(key string) (WindowName, bool) {
	forms := [...]struct {
		n      int
		length time.Duration
	}{{16, time.Minute}, {13, time.Hour}, {10, 24 * time.Hour}}
	for _, f := range forms {
		w, ok := splitWindowPart(key, f.n)
		if !ok {
			continue
		}
		p := w.Part
		if p[4] != '-' || p[7] != '-' || f.n >= 13 && p[10] != 'T' || f.n == 16 && p[13] != ':' {
			continue
		}
		hour, minute := 0, 0
		if f.n >= 13 {
			hour = digitsAt(p, 11, 2)
		}
		if f.n == 16 {
			minute = digitsAt(p, 14, 2)
		}
		if start, ok := stampTime(digitsAt(p, 0, 4), digitsAt(p, 5, 2), digitsAt(p, 8, 2), hour, minute); ok {
			w.Start, w.Length = start, f.length
			return w, true
		}
	}
	return WindowName{}, false
}

// digitsAt is the n decimal digits of s at i as a number, or -1 when they
// are not all digits.
func digitsAt(s string, i, n int) int {
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if !isDigit(c) {
			return -1
		}
		v = v*10 + int(c-'0')
	}
	return v
}

// stampTime is the time a stamp's fields give, in UTC; ok is false when
// they name no real minute (month 13, February 30, hour 24).
func stampTime(year, month, day, hour, minute int) (time.Time, bool) {
	if year < 1970 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, 0, 0, time.UTC)
	return t, t.Day() == day
}

// parseDigitsPart reads a window part of digits at the end of key: an
// epoch start in seconds (10 digits), ms (13), µs (16) or ns (19), a compact stamp
// (YYYYMMDD, YYYYMMDDHH, YYYYMMDDHHMM), or floor(time / window).
func parseDigitsPart(key string, window time.Duration, now time.Time, forced bool) (WindowName, windowForm, bool) {
	n := 0
	for n < len(key) && isDigit(key[len(key)-1-n]) {
		n++
	}
	if n < 5 || n > 19 {
		return WindowName{}, 0, false
	}
	w, ok := splitWindowPart(key, n)
	if !ok {
		return WindowName{}, 0, false
	}
	num, _ := parseInt(strings.TrimLeft(w.Part, "0"))
	if num == 0 {
		return WindowName{}, 0, false
	}
	nowNS := now.UnixNano()
	if scale := epochPartScale(n); scale > 0 && num <= math.MaxInt64/scale {
		start := num * scale
		length := window
		if length <= 0 {
			length = alignedLength(start)
		}
		if start <= nowNS+int64(max(length, time.Minute)) && (forced || start >= nowNS-int64(windowHorizon)) {
			w.Start, w.Length = unixUTC(start), length
			return w, formEpoch, true
		}
	}
	if n == 8 || n == 10 || n == 12 {
		p := w.Part
		hour, minute, length := 0, 0, 24*time.Hour
		if n >= 10 {
			hour, length = digitsAt(p, 8, 2), time.Hour
		}
		if n == 12 {
			minute, length = digitsAt(p, 10, 2), time.Minute
		}
		if start, ok := stampTime(digitsAt(p, 0, 4), digitsAt(p, 4, 2), digitsAt(p, 6, 2), hour, minute); ok {
			w.Start, w.Length = start, length
			if recentStamp(w, now, forced) {
				return w, formStamp, true
			}
		}
	}
	if window > 0 {
		if start, ok := floorStart(num, window, nowNS, forced); ok {
			w.Start, w.Length = unixUTC(start), window
			return w, formFloor, true
		}
		return WindowName{}, 0, false
	}
	for _, c := range windowCandidates {
		cur := nowNS / int64(c)
		if num >= cur-1 && num <= cur+1 {
			w.Start, w.Length = unixUTC(num*int64(c)), c
			return w, formFloor, true
		}
	}
	return WindowName{}, 0, false
}

// epochPartScale is nanoseconds per unit of an epoch start of n digits:
// from 2001 to 2286 seconds have 10, milliseconds 13, microseconds 16 and
// nanoseconds 19 (until 2262, where int64 nanoseconds end); 0 for other
// lengths.
func epochPartScale(n int) int64 {
	switch n {
	case 10:
		return int64(time.Second)
	case 13:
		return int64(time.Millisecond)
	case 16:
		return int64(time.Microsecond)
	case 19:
		return 1
	}
	return 0
}

// floorStart is the start of window number num of length window, when it
// is no later than the next window and (unless forced) within
// windowHorizon of now.
func floorStart(num int64, window time.Duration, nowNS int64, forced bool) (int64, bool) {
	if num > math.MaxInt64/int64(window) {
		return 0, false
	}
	cur := nowNS / int64(window)
	if num > cur+1 || !forced && num*int64(window) < nowNS-int64(windowHorizon) {
		return 0, false
	}
	return num * int64(window), true
}

// alignedLength is the largest of windowCandidates that start (ns since
// 1970) is a multiple of, as a window's start is of its length; 0 for a
// start that is not on a whole second.
func alignedLength(start int64) time.Duration {
	for i := len(windowCandidates) - 1; i >= 0; i-- {
		if start%int64(windowCandidates[i]) == 0 {
			return windowCandidates[i]
		}
	}
	return 0
}
