package model

// A hash whose fields carry TTLs of their own (HEXPIRE, Redis 7.4 and
// later) holds one counter a field, each with its own window: a field
// left without a TTL never resets and keeps the whole hash alive, while
// the key itself has none. Such a hash is read as one row a field that
// holds a number (Rows), named "key › field"; a whole key's row has no
// field. A field's row is found under RowID, which keeps it apart from
// its key's and from its siblings'.

// FieldMark separates a hash's key from its field in a row's name.
const FieldMark = " › "

// Rows returns the rows o is read as: o itself, or, for a hash whose
// fields carry TTLs, one observation a field holding a number, in the
// order read (Fields' order), each with Field set, that field alone in
// Fields and its own PTTL. A hash none of whose fields holds a number is
// o itself, read whole (no counter, but a key the patterns watch). Bounded
// by what was read of the hash.
func Rows(o *Observation) []Observation {
	if !o.FieldTTLs || o.Type != "hash" {
		return []Observation{*o}
	}
	rows := make([]Observation, 0, len(o.Fields))
	for k, f := range o.Fields {
		if ParseValue(f.Value).Kind == KindNone || f.PTTL == PTTLMissing { // no number, or gone since read
			continue
		}
		r := *o
		r.Field, r.Fields, r.PTTL, r.Len, r.FieldTTLs = f.Name, o.Fields[k:k+1:k+1], f.PTTL, 1, false
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return []Observation{*o}
	}
	return rows
}

// Expand returns obs with each hash whose fields carry TTLs replaced by
// its Rows; obs itself when none has them.
func Expand(obs []Observation) []Observation {
	for i := range obs {
		if obs[i].FieldTTLs {
			out := append([]Observation(nil), obs[:i]...)
			for j := i; j < len(obs); j++ {
				out = append(out, Rows(&obs[j])...)
			}
			return out
		}
	}
	return obs
}

// FieldKeepsHashAlive is what the dashboard says of a field's row with no
// TTL (no-expiry, stuck): the bug is that one field, not its hash, and a
// repair of the hash's key would end every field. A clause: it takes the
// sentence's end.
const FieldKeepsHashAlive = "This one field has no TTL while other fields of its hash have theirs: it never resets, and it keeps the whole hash alive"

// RowID is what tells rows apart: the key, or for a field's row the key
// and the field with a NUL between, which no glob pattern matches.
func RowID(key, field string) string {
	if field == "" {
		return key
	}
	return key + "\x00" + field
}

// RowName is a row's name for people, escaped: "quota:u1 › login" for a
// field's row, the key alone for a whole key's.
func RowName(key, field string) string {
	if field == "" {
		return Printable(key)
	}
	return Printable(key) + FieldMark + Printable(field)
}
