package main

import "github.com/countertop/countertop/bench/measure"

// The probe of another client's PING latency, and latencies, are shared
// with bench/cmd/load.
type latencies = measure.Latencies

var startProbe = measure.StartProbe
