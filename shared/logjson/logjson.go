// Package logjson is slog's JSON handler with a fast path for the line a
// server writes most: the request log line, one per request. A record whose
// message and attributes are plain (strings of printable ASCII that JSON
// leaves unescaped, integers, booleans, durations), logged through a handler
// with no groups or preset attributes, is appended directly: byte for byte
// what slog.JSONHandler writes, in about half its time (BenchmarkHandle).
// Every other record, and every handler derived by WithAttrs or WithGroup, is
// slog.JSONHandler's own.
package logjson

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/tuningbox/tuningbox/shared/logwriter"
)

// New returns a handler writing JSON lines to w, as slog.NewJSONHandler(w,
// opts) does. Options that rewrite lines (ReplaceAttr, AddSource) leave it
// slog.JSONHandler alone.
func New(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	if opts.ReplaceAttr != nil || opts.AddSource {
		return slog.NewJSONHandler(w, opts)
	}
	// One lock for both paths, as slog.JSONHandler takes for its own writes:
	// lines never interleave, whatever w is.
	locked := logwriter.Locked(w)
	level := opts.Level
	if level == nil {
		level = slog.LevelInfo
	}
	return &handler{slow: slog.NewJSONHandler(locked, opts), out: locked, level: level}
}

type handler struct {
	slow  slog.Handler
	out   io.Writer
	level slog.Leveler
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler { return h.slow.WithAttrs(attrs) }

func (h *handler) WithGroup(name string) slog.Handler { return h.slow.WithGroup(name) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	buf := buffers.Get().(*[]byte)
	line, ok := appendPlain((*buf)[:0], r)
	var err error
	if ok {
		_, err = h.out.Write(line)
	}
	if cap(line) <= maxKept {
		*buf = line[:0]
		buffers.Put(buf)
	}
	if !ok {
		return h.slow.Handle(ctx, r)
	}
	return err
}

// buffers holds line buffers; one grown past maxKept by a long line is
// dropped rather than kept for lines that need a tenth of it.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxKept = 16 << 10

// appendPlain appends r as slog.JSONHandler writes it, or reports false when
// r holds anything it would escape, format or nest: those lines are slog's.
func appendPlain(b []byte, r slog.Record) ([]byte, bool) {
	b = append(b, '{')
	if !r.Time.IsZero() {
		t := r.Time.Round(0)
		if y := t.Year(); y < 0 || y >= 10000 {
			return b, false // slog writes an error beside it
		}
		b = append(b, `"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"level":"`...)
	b = append(b, r.Level.String()...)
	b = append(b, `","msg":`...)
	var ok bool
	if b, ok = appendPlainString(b, r.Message); !ok {
		return b, false
	}
	r.Attrs(func(a slog.Attr) bool {
		b = append(b, ',')
		if b, ok = appendPlainString(b, a.Key); !ok {
			return false
		}
		b = append(b, ':')
		switch v := a.Value; v.Kind() {
		case slog.KindString:
			b, ok = appendPlainString(b, v.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		case slog.KindDuration:
			b = strconv.AppendInt(b, int64(v.Duration()), 10) // as json.Marshal and slog write a Duration
		default: // floats, times, groups, values to resolve, empty attributes
			ok = false
		}
		return ok
	})
	if !ok {
		return b, false
	}
	return append(b, "}\n"...), true
}

// appendPlainString appends s quoted, or reports false when JSON would
// escape any of its bytes.
func appendPlainString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// plainByte holds the bytes JSON strings hold as they are: printable ASCII
// but the quote and the backslash.
var plainByte = func() (set [256]bool) {
	for c := ' '; c <= '~'; c++ {
		set[c] = c != '"' && c != '\\'
	}
	return set
}()
