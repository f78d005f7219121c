package report

import (
	"runtime"
	"sync"
)

// ReadOnHalfTheCores lets the Go code of a pass use half the cores until
// the returned function is called: a pass needs a fraction of one, and given
// every core the runtime's threads keep a Redis on the same machine waiting.
// Passes may overlap; the last to end gives back what the first found.
func ReadOnHalfTheCores() (restore func()) {
	passes.Lock()
	defer passes.Unlock()
	if passes.n == 0 {
		passes.procs = runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)/2))
	}
	passes.n++
	return func() {
		passes.Lock()
		defer passes.Unlock()
		if passes.n--; passes.n == 0 {
			runtime.GOMAXPROCS(passes.procs)
		}
	}
}

// passes counts the passes on half the cores, and keeps the setting the
// first of them found.
var passes struct {
	sync.Mutex
	n, procs int
}
