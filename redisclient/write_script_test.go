package redisclient

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// TestIncrScriptChecksBeforeWriting runs the script with arguments Incr
// never sends: it must refuse them before its first write, since a script
// that fails half-way is not rolled back.
func TestIncrScriptChecksBeforeWriting(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rdb := s.Client(t)
	for _, tc := range []struct{ cmd, window, consent, want string }{
		{"INCRBY", "", "0", "the window must be a whole number of milliseconds, not "},
		{"INCRBY", "abc", "0", "not abc"},
		{"INCRBY", "-5", "0", "not -5"},
		{"INCRBY", "1.5", "0", "not 1.5"},
		{"INCRBY", "0x10", "0", "not 0x10"}, // Lua's tonumber reads hex; PEXPIRE would not
		{"INCRBY", "1000000000000000", "0", "not 1000000000000000"},
		{"SET", "60000", "0", "ERR countertop: SET is not INCRBY or INCRBYFLOAT"},
		{"INCRBYFLOAT", "60000", "yes", "ERR countertop: the decimal consent must be 0 or 1, not yes"},
	} {
		t.Run(tc.cmd+" window "+tc.window+" consent "+tc.consent, func(t *testing.T) {
			err := incrScript.Run(context.Background(), rdb, []string{"k"}, tc.cmd, "1", tc.window, tc.consent).Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s with window %q: %v, want an error saying %q", tc.cmd, tc.window, err, tc.want)
			}
		})
	}
	if s.Do(t, "EXISTS", "k") != int64(0) {
		t.Error("the script wrote before it refused its arguments")
	}
}

// TestFieldIncrScriptChecksBeforeWriting runs the hash field script with
// arguments IncrField never sends: it refuses them before its first write.
func TestFieldIncrScriptChecksBeforeWriting(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rdb := s.Client(t)
	for _, tc := range []struct{ cmd, field, window, consent, perField, want string }{
		{"HSET", "f", "60000", "0", "0", "ERR countertop: HSET is not HINCRBY or HINCRBYFLOAT"},
		{"HINCRBY", "", "60000", "0", "0", "a hash increment needs the field to add to"},
		{"HINCRBY", "f", "1.5", "0", "0", "the window must be a whole number of milliseconds, not 1.5"},
		{"HINCRBY", "f", "0x10", "0", "0", "not 0x10"},
		{"HINCRBYFLOAT", "f", "60000", "yes", "0", "the decimal consent must be 0 or 1, not yes"},
		{"HINCRBY", "f", "60000", "0", "yes", "whether the hash counts per field must be 0 or 1, not yes"},
	} {
		t.Run(tc.cmd+" field "+tc.field+" window "+tc.window+" consent "+tc.consent+" per field "+tc.perField, func(t *testing.T) {
			err := fieldIncrScript.Run(context.Background(), rdb, []string{"k"}, tc.cmd, tc.field, "1", tc.window, tc.consent, tc.perField).Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %q with window %q: %v, want an error saying %q", tc.cmd, tc.field, tc.window, err, tc.want)
			}
		})
	}
	if s.Do(t, "EXISTS", "k") != int64(0) {
		t.Error("the script wrote before it refused its arguments")
	}
}

// TestExpireScriptChecksItsArguments runs the repair script with arguments
// Expire never sends: it runs no other command than PEXPIRE, and needs a
// shape to check, refusing the rest before it writes anything.
func TestExpireScriptChecksItsArguments(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rdb := s.Client(t)
	s.Do(t, "SET", "k", "5")
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"string", "1", "DEL"}, "ERR countertop: DEL is neither PEXPIRE nor HPEXPIRE"},
		{[]any{"string", "1", "pexpire", "60000", "NX"}, "ERR countertop: pexpire is neither PEXPIRE nor HPEXPIRE"},
		{[]any{"", "1", "PEXPIRE", "60000", "NX"}, "a repair needs the type the key must have and 0 or 1 for a number"},
		{[]any{"string", "yes", "PEXPIRE", "60000", "NX"}, "a repair needs the type the key must have and 0 or 1 for a number"},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			err := expireScript.Run(context.Background(), rdb, []string{"k"}, tc.args...).Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
			}
		})
	}
	if s.Do(t, "EXISTS", "k") != int64(1) || s.Do(t, "PTTL", "k") != int64(-1) {
		t.Error("the script wrote before it refused its arguments")
	}
}
