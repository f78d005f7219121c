package redisclient

import "time"

// SetScanBudget sets how long each poll cycle takes discovery on, in place
// of a quarter of the interval, so that a test can spread a pass over many
// cycles without a million keys. A budget of a nanosecond is one SCAN a
// cycle.
func (o *PollOptions) SetScanBudget(d time.Duration) { o.scanBudget = d }
