// Package redisclient is everything in countertop that talks to Redis:
// connecting, discovering keys with SCAN, fetching their values and TTLs in
// pipelines, following their changes into model.Batches for the dashboard,
// writing, and holding all of it to a budget of commands. Errors it
// returns are explained for people (see Explain) and never carry passwords.
//
// Its five parts are one package, each file named by the part it belongs
// to (the parts share the Client and the reader, which sub-packages would
// have to export), and each test beside the code it tests:
//
//   - Connection, conn*.go: Connect and Options (conn.go), URLs, TLS, a
//     cluster's masters and slots, Sentinel, the topology the header
//     shows, the connections' name, and masters that stall.
//   - Reading, read*.go: the reader that every watcher reads through
//     (read.go: its batches, the feed's state), SCAN and discovery, the
//     pipelined fetch, what each type's layout reads, a hash's fields
//     and their TTLs, listed in pages (read_fields.go), and Snapshot.
//   - Watching, watch*.go: Watch and its options (watch.go: which mode,
//     auto's order), polling (watch_poll.go), and the push modes: the
//     pushWatcher they share (watch_push.go: subscribers, passes, rereads),
//     events (watch_events.go, with the notifications' setting in
//     watch_events_config.go) and tracking (watch_tracking.go), each a
//     pushMode; their subscriptions and the connection a subscription
//     drains (watch_subscribe.go, watch_subconn.go), how far behind they
//     are, flushes, evictions, and the heartbeat that sends the feed's
//     Health. The modes are model.WatchMode; their facts (name, what
//     "fresh" means) are in model's table.
//   - Writing, write*.go: Incr and IncrField, Expire's repair, the burst
//     and the Lua scripts they run.
//   - Budget, budget*.go: the commands a second countertop sends each
//     server on its own, counted, held back, and the unanswered ones that
//     make a server silent.
//
// errors.go explains every part's errors. A new watch mode is an entry in
// model's table and, for a mode that pushes, one pushMode in a
// watch_<mode>.go file and its pushKind in pushKinds (see watch.go).
package redisclient
