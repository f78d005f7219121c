// Package model is countertop's pure domain: counters, the layouts rate
// limiters write (Read), rules, statuses, rates, and the Store that the
// dashboard renders from. It does no I/O and imports neither Bubble Tea nor
// go-redis: redisclient produces Batches of Observations, the ui applies
// them to a Store, and everything a user sees (layout, status, TTL left, %
// of limit, rate, order, filter) is computed here.
package model
