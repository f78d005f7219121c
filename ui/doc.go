// Package ui is countertop's dashboard: a Bubble Tea v2 program that shows
// the counters in a model.Store, keeps it current from a feed of
// model.Batches, and sends the writes a user asks for (test increments,
// expiry repairs, deletes) through a Writer.
//
// # State
//
// New returns a *Model, the program's only copy of the dashboard's state.
// Update changes it in place and returns the same pointer; View only reads
// it. The Model owns the Store it is given: nothing else may change it
// once the program runs.
//
// # Routing a key press
//
// Update hands a tea.KeyPressMsg to the first of these that wants it:
//
//  1. ctrl+c quits, whatever is on screen.
//  2. An open confirmation dialog: y runs what it asks about, n or esc
//     closes it, and every other key is ignored.
//  3. An open prompt (filter, amount, key name, window): esc cancels,
//     enter submits once the prompt's check lets the answer through, ↑
//     and ↓ walk the filter's history, and every other key edits the
//     input, so q is typed rather than quitting.
//  4. The help screen: q quits, ? or esc closes it, the movement keys
//     scroll it, and other keys are ignored.
//  5. Keys that work on either screen: q quits, ? opens the help, p pauses
//     or resumes.
//  6. The detail screen: esc or enter goes back to the table, the movement
//     keys scroll it, c copies the name of the key it shows, and + - i e d
//     act on that key.
//  7. The table: the movement keys, / filter, esc clears the filter, s
//     sort, S reverses it, o shows or hides the overview, enter opens the
//     detail, c copies the selected key's name, and + - i e d act on the
//     selected key.
//
// n (a key by name) and E (every problem in view) work on both screens.
// Every write key is refused, saying why, when writes are off.
//
// With Options.Mouse the wheel scrolls the table, the help or the detail
// screen, a click on a row selects it, and a click on a column's title
// sorts by that column; while a dialog or a prompt is open the mouse does
// nothing.
//
// Messages Update has no case of its own for (a paste, the cursor's
// blink) go to the open prompt, if there is one.
//
// # What Update may do
//
// Update never blocks and does no I/O. Waiting on the feed, ticking the
// clock and every write to Redis run in tea.Cmds, and their results come
// back to Update as messages. Update is also the only place where what
// the Store holds changes: when a batch from the feed arrives (or, while
// paused, when the pause ends), when a write's result arrives, when the
// filter or the sort changes, and at a tick, where the rates of keys the
// keyspace events left alone fade (model.Store.QuietUntil). While the
// Store is still applying a new filter or working out a new sort, a step
// per read, Update asks for one frame more at a time, and none once it is
// done.
package ui
