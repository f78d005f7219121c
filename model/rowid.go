package model

// A row is a server, a key and a field: the same key read on two servers
// is two rows, as a hash's fields are (RowID). The Store tells its rows
// apart by one string, the row's ID: with one server (Server "") the key,
// or RowID's key and field; with several, the key and its server with
// serverMark between (ServerKey), and then the field. Server names never
// hold serverMark (config refuses control characters in them), so the last
// one in a server's key is the mark; a Store splits an ID only once it has
// held a row of a named server (Store.named), so that a key that holds the
// byte, read on one server, stays whole.

// serverMark separates a key from its server in a row's ID.
const serverMark = '\x01'

// ServerKey is key as the Store holds it when read on server: key itself
// when server is "" (one server), else the key, serverMark and the server.
func ServerKey(server, key string) string {
	if server == "" {
		return key
	}
	return key + string(serverMark) + server
}

// RowOf is the ID of the row of field of key on server (Counter.ID):
// RowID of its ServerKey.
func RowOf(server, key, field string) string {
	return RowID(ServerKey(server, key), field)
}

// splitServer is the key and the server of a ServerKey of a Store that
// holds named servers' rows.
func splitServer(k string) (key, server string) {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == serverMark {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}
