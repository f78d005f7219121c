// Package model is countertop's pure domain: counters, the layouts rate
// limiters write (Read), rules, statuses, rates, and the Store that the
// dashboard renders from. It does no I/O and imports neither Bubble Tea nor
// go-redis: redisclient produces Batches of Observations, the ui applies
// them to a Store, and everything a user sees (layout, status, TTL left, %
// of limit, rate, order, filter) is computed here.
//
// # Files
//
// Each file holds one concern, and its tests sit beside it (x_test.go).
//
// What a key holds:
//   - observation.go: Observation and Batch, what redisclient read, and the PTTL sentinels.
//   - layout.go: Reading and Read, a reading's layout, value and what remains of the limit.
//   - layouts.go: Layout and its table, every fact the code asks of a layout.
//   - detect.go: how Read tells a string's or a hash's layout.
//   - clue.go: why Read chose a layout, kept as a byte, and its clue's text.
//   - layout_words.go: the sentences a layout's writes and check say.
//   - value.go: Value and Kind, a stored value read as Redis reads numbers.
//   - window.go: WindowName, the window a window key's name spells.
//   - epoch.go: times held as numbers, and a log's window (CountInWindow).
//   - logfall.go: when a log's count falls with no write (LogFalls).
//
// What countertop says of it:
//   - rule.go: Rule and Rules, the glob that matches keys to them.
//   - status.go: Status, the one verdict, and Evaluate.
//   - counter.go: Counter, what the Store knows of a key: TTL left, % of limit.
//   - fields.go: Rows, a hash whose fields carry TTLs read as a row a field: RowID, RowName.
//   - note.go: Note, what readings suggest beyond the status.
//
// The Store:
//   - store.go: the Store and its entries: Apply, Get, Len, RuleOf, EachProblem.
//   - keyindex.go: the hash table from key name (a row's ID) to entry.
//   - store_fields.go: a hash whose fields carry TTLs held as a row a field, each under its RowID.
//   - store_layout.go: what an entry keeps of a Reading, and the Reading rebuilt.
//   - rate.go: the rate: decayed sums, a fall that is a new window, QuietUntil.
//   - history.go: past readings of the keys that change, and the extending rule.
//   - trend.go, trend_park.go: a key's last minute (Trend), kept while its key is gone.
//   - store_age.go, store_until.go: the oldest reading, and what a feed vouches for until when.
//   - store_overview.go: Overview, the keys by status and by % of limit.
//   - store_tally.go: Tally, the keys by rule, layout and status, and each rule's highest fill (serve's metrics).
//   - store_window.go: WindowSiblings, a client's other window keys.
//
// The rows, in order and filtered:
//   - store_rows.go: what the ui asks: SetSort, SetReverse, Visible, Rows, IndexOf, Counts.
//   - sorts.go: SortKey, one spec per sort: its number, its compare.
//   - natural.go: CompareKeys, key names as people read them.
//   - order.go: the order: the entries in blocks, and which pass the filter.
//   - order_refresh.go: the order brought up to date: moved keys placed, or all sorted.
//   - order_fade.go: sorted by rate, the ends sorted again as quiet rates fade.
//   - names.go, sortkeys.go: a sort of every key, from the order by name, as a radix sort.
//   - sortjob.go: a sort of many keys, a step per read (Sorting).
//   - filter.go: SetFilter: the query parsed, and whether a filter keeps a key.
//   - filter_sweep.go: a new filter applied a step per read (Filtering).
//
// Writes, repairs and text:
//   - amount.go: Amount, a test increment, and what it did.
//   - expiry.go: Shape, Expiry and RepairTally, what a repair sends and counts.
//   - column.go: Column, one title per fact in every table.
//   - text.go, cut.go: Printable, untrusted bytes escaped; Cells, text cut to the terminal.
//   - duration.go: FormatDuration, a time left as countertop shows it.
package model
