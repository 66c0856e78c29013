// Package logwriter batches a long-running server's log lines into few
// writes, and serializes the writes of concurrent loggers (Locked). A request
// log line per request, each its own write(2), was a sizeable part of serving
// a cached read at thousands of reads a second (make bench); batched, a line
// waits at most the flush interval, and Flush (at shutdown) writes what
// waits. Not for Lambda, whose process is frozen between invocations with the
// lines still waiting.
package logwriter

import (
	"io"
	"sync"
	"time"
)

// maxBuffered is the most that waits: a burst of lines goes out in writes of
// about this size, without waiting for the interval.
const maxBuffered = 64 << 10

// Writer keeps what is written to it for one write to its destination per
// interval (or per maxBuffered bytes). It is safe for concurrent use; each
// Write stays whole and in order, as slog's handlers write lines.
type Writer struct {
	out      io.Writer
	interval time.Duration

	mu     sync.Mutex
	buf    []byte
	armed  bool        // a flush is due (timer)
	timer  *time.Timer // flushes interval after the first waiting write
	closed bool
}

// New returns a Writer to out that writes at most interval after each write.
func New(out io.Writer, interval time.Duration) *Writer {
	w := &Writer{out: out, interval: interval}
	w.timer = time.AfterFunc(interval, func() { _ = w.Flush() })
	w.timer.Stop()
	return w
}

// Write keeps p for the next flush; after Close, it writes p at once. Errors
// of the destination show in Flush's answer, not here: a log line that
// cannot be written is not the caller's to handle.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Write(p)
	}
	if len(w.buf)+len(p) > maxBuffered {
		_ = w.flushLocked()
	}
	w.buf = append(w.buf, p...)
	if !w.armed {
		w.armed = true
		w.timer.Reset(w.interval)
	}
	return len(p), nil
}

// Flush writes what waits.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// Close writes what waits; later writes go out at once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.timer.Stop()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	w.armed = false
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	if cap(w.buf) > maxBuffered*2 {
		w.buf = nil // one huge line does not stay allocated
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

// Locked returns w with its writes serialized: writers sharing it (loggers
// of one process, or processes whose lines one process relays) never
// interleave the lines they each write with one Write.
func Locked(w io.Writer) io.Writer { return &locked{w: w} }

type locked struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
