package redisclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// fieldShape is what a field's row is read as: a hash whose field holds a
// number.
var fieldShape = model.Shape{Layout: model.LayoutCounter, Type: "hash", Number: true}

// TestExpireFieldSendsWhatItShows: a field's repair runs HPEXPIRE on that
// field alone, from the repair script, as the screen shows it, and the
// hash itself gets no TTL.
func TestExpireFieldSendsWhatItShows(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.RequireFieldTTL(t)
	ctx := context.Background()
	hashOfFieldTTLs(t, s, "quota:u1")
	e := model.Expiry{Key: "quota:u1", Window: time.Minute, Shape: fieldShape, Field: "login"}
	m := s.Monitor(t)
	got, obs, err := c.Expire(ctx, e)
	if err != nil || got != model.ExpirySet {
		t.Fatalf("Expire(%s) = %v, %v; want set", e, got, err)
	}
	ranAsShown(t, m, e)
	if p := pttl(t, s, "quota:u1"); p != model.PTTLNoExpiry {
		t.Errorf("the hash's own PTTL is %d after a field's repair; want none: a key TTL would end every field", p)
	}
	ttls := s.Do(t, "HPTTL", "quota:u1", "FIELDS", "1", "login").([]any)
	if ttl := ttls[0].(int64); ttl <= 0 || ttl > 60000 || obs.PTTL <= 0 || obs.Field != "login" {
		t.Errorf("login's TTL is %d (the repair said %d, field %q); want at most a minute", ttl, obs.PTTL, obs.Field)
	}
	// Again: the field has a TTL now, and it is not pushed back.
	if got, _, err := c.Expire(ctx, e); err != nil || got != model.ExpiryHadTTL {
		t.Errorf("a second repair of the field = %v, %v; want had a TTL", got, err)
	}
	for field, want := range map[string]model.ExpiryOutcome{"gone": model.ExpiryGone} {
		if got, _, err := c.Expire(ctx, model.Expiry{Key: "quota:u1", Window: time.Minute, Shape: fieldShape, Field: field}); err != nil || got != want {
			t.Errorf("repair of field %q = %v, %v; want %v", field, got, err, want)
		}
	}
}

// TestExpireNeverEndsAHashOfFieldTTLs: a key's repair of a hash whose
// fields carry TTLs sends no PEXPIRE: it would delete every field a
// window later.
func TestExpireNeverEndsAHashOfFieldTTLs(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.RequireFieldTTL(t)
	hashOfFieldTTLs(t, s, "quota:u2")
	repairLeavesAlone(t, s, c, "quota:u2")
}

// repairLeavesAlone checks that the key's repair of the hash key, whose
// fields carry TTLs, leaves it alone (model.ExpiryFieldTTLs) and gives
// it no TTL.
func repairLeavesAlone(t *testing.T, s *redistest.Server, c *redisclient.Client, key string) {
	t.Helper()
	e := model.Expiry{Key: key, Window: time.Minute, Shape: model.Shape{Layout: model.LayoutCounter, Type: "hash"}}
	got, _, err := c.Expire(context.Background(), e)
	if err != nil || got != model.ExpiryFieldTTLs {
		t.Errorf("Expire(%s) = %v, %v; want left alone for its field TTLs", e, got, err)
	}
	if p := pttl(t, s, key); p != model.PTTLNoExpiry {
		t.Errorf("the hash got a TTL of %dms: every field would go with it", p)
	}
}

// TestExpireLeavesAHashItMayNotCheck: a user whose ACL predates field TTLs
// (no HPTTL) can neither read a hash's field TTLs nor check them before a
// repair: the hash is read whole, as on an older server, and its key's
// repair leaves it alone rather than risk ending fields that have TTLs.
func TestExpireLeavesAHashItMayNotCheck(t *testing.T) {
	t.Parallel()
	s, _ := startConnected(t)
	s.RequireFieldTTL(t)
	ctx := context.Background()
	hashOfFieldTTLs(t, s, "quota:u3")
	c := connectAs(t, s, "+@all", "-hpttl")
	if _, err := c.Fetch(ctx, []string{"quota:u3"}); err != nil {
		t.Fatalf("a user who may not run HPTTL could not read the hash: %v", err)
	}
	repairLeavesAlone(t, s, c, "quota:u3")
}
