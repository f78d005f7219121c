// Package bench holds countertop's end-to-end benchmarks: each starts its
// own redis-server, drives traffic at it and measures what a person at the
// dashboard would notice. They run only with -bench; see BENCHMARKS.md for
// the scripts and the figures.
package bench
