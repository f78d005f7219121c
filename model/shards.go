package model

// ShardGroup is servers that are shards of one limiter (a client-side
// ring, a proxy's partitions): each of its keys belongs on one of them,
// and the same key on two counts the limit once on each.
type ShardGroup struct {
	Name    string   // as the config names the group
	Servers []string // the servers' names (Counter.Server), two or more
}

// Shared is a row that more than one server of a shard group holds: the
// same key (or hash field, see Counter.ID), each copy counting the limit
// on its own, so that a client whose hits are spread over the copies gets
// up to len(Copies) times its limit.
type Shared struct {
	Group  string     // the group's name
	Copies []*Counter // one per server that holds it, in the order the group names its servers
}

// SharedKeys returns the rows held by more than one server of the same
// group, in the order of their first copy in rows: rows in key order give
// them in key order. Rows of servers in no group, and the same name on
// servers of different groups (regions with limits of their own), are
// never shared. A server whose row comes twice counts once, with its
// first.
func SharedKeys(rows []*Counter, groups []ShardGroup) []Shared {
	type place struct{ group, pos int } // a server's group, and its place in it
	places := make(map[string]place)
	for g, group := range groups {
		for pos, server := range group.Servers {
			places[server] = place{g, pos}
		}
	}
	if len(places) == 0 {
		return nil
	}
	type row struct {
		group int
		id    string
	}
	var (
		found []Shared
		at    = make(map[row]int) // index in found of each row of a group seen
	)
	for _, c := range rows {
		p, ok := places[c.Server]
		if !ok {
			continue
		}
		r := row{p.group, c.NameID()}
		i, seen := at[r]
		if !seen {
			at[r] = len(found)
			found = append(found, Shared{Group: groups[p.group].Name, Copies: []*Counter{c}})
			continue
		}
		copies := found[i].Copies
		j := 0 // where c goes, by its server's place in the group
		for j < len(copies) && places[copies[j].Server].pos < p.pos {
			j++
		}
		if j < len(copies) && copies[j].Server == c.Server {
			continue // the same server again
		}
		found[i].Copies = append(copies[:j], append([]*Counter{c}, copies[j:]...)...)
	}
	shared := found[:0]
	for _, s := range found {
		if len(s.Copies) > 1 {
			shared = append(shared, s)
		}
	}
	return shared
}
