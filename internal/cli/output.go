package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// output is stdout as Run hands it to a command: it keeps the first write
// error, so that a full disk or a closed pipe fails the command (with one
// sentence, in Run) even where the command printed and went on; after it,
// every write fails at once with the same error.
type output struct {
	w   io.Writer
	err *writeError
}

func (o *output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = &writeError{err: err}
		return n, o.err
	}
	return n, nil
}

// writeError is a write to stdout that failed: the command's output is
// incomplete.
type writeError struct{ err error }

func (e *writeError) Error() string {
	cause := e.err
	if pe := (*os.PathError)(nil); errors.As(cause, &pe) {
		cause = pe.Err // "no space left on device", not "write /dev/stdout: ..."
	}
	if errors.Is(cause, syscall.ENOSPC) {
		return fmt.Sprintf("could not write to stdout (%v), so the output is incomplete: free some space, or write it elsewhere", cause)
	}
	return fmt.Sprintf("could not write to stdout (%v), so the output is incomplete", cause)
}

func (e *writeError) Unwrap() error { return e.err }

// stdoutFailed returns the error of the first write to stdout that
// failed, nil while none has (or when stdout is not Run's).
func stdoutFailed(stdout io.Writer) error {
	if o, ok := stdout.(*output); ok && o.err != nil {
		return o.err
	}
	return nil
}

// fileOf returns the file stdout writes to, nil when it is not one.
func fileOf(stdout io.Writer) *os.File {
	if o, ok := stdout.(*output); ok {
		stdout = o.w
	}
	f, _ := stdout.(*os.File)
	return f
}

// errStdoutClosed is the sentence for a command started with its stdout
// closed (`>&-`). Go's runtime gives such a process /dev/null in its
// place, so without this every write would succeed and the command exit 0
// having written nothing anyone can read.
var errStdoutClosed = errors.New("stdout is closed (or is /dev/null opened read-write, which is what Go makes of a closed one), " +
	"so nothing countertop writes could be read: give it a file or a pipe, or >/dev/null to discard the output")
