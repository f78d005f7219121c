package model

// ShardGroup is servers that are shards of one limiter (a client-side
// ring, a proxy's partitions): each of its keys belongs on one of them,
// and the same key on two counts the limit once on each.
type ShardGroup struct {
	Name    string   // as the config names the group
	Servers []string // the servers' names (Counter.Server), two or more
}
