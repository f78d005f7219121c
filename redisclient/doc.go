// Package redisclient is everything in countertop that talks to Redis:
// connecting, discovering keys with SCAN, fetching their values and TTLs in
// pipelines, and polling them into model.Batches for the dashboard. Errors it
// returns are explained for people (see Explain) and never carry passwords.
package redisclient
