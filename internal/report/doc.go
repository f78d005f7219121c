// Package report writes countertop's one-shot output: the snapshot as a
// table, JSON or CSV, the check's problem lines, the key order both use,
// and the write path around them (pipe size, cores while reading).
package report
