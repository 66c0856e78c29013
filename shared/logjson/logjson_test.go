package logjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

var when = time.Date(2026, 11, 27, 19, 4, 5, 123456789, time.FixedZone("CET", 3600))

// records are lines of every shape: the plain ones the fast path writes and
// every kind it leaves to slog.
var records = map[string]func() slog.Record{
	"request line": func() slog.Record {
		r := slog.NewRecord(when, slog.LevelInfo, "request", 0)
		r.AddAttrs(slog.String("method", "GET"), slog.String("path", "/api/v1/config/environments/1/values"),
			slog.Int("status", 200), slog.Int64("bytes", 31148), slog.Duration("duration", 12345*time.Nanosecond),
			slog.String("request_id", "req-c7677729-0535-414a-8cbb-1106ec288a7d"))
		return r
	},
	"no attributes":    func() slog.Record { return slog.NewRecord(when, slog.LevelWarn, "started", 0) },
	"zero time":        func() slog.Record { return slog.NewRecord(time.Time{}, slog.LevelError, "no time", 0) },
	"monotonic time":   func() slog.Record { return slog.NewRecord(time.Now(), slog.LevelInfo, "now", 0) },
	"odd level":        func() slog.Record { return slog.NewRecord(when, slog.LevelDebug+2, "odd", 0) },
	"year 10000":       func() slog.Record { return slog.NewRecord(when.AddDate(8000, 0, 0), slog.LevelInfo, "far", 0) },
	"empty message":    func() slog.Record { return slog.NewRecord(when, slog.LevelInfo, "", 0) },
	"html characters":  func() slog.Record { return withAttrs(slog.String("<&>", "a<b>&c")) },
	"quote in message": func() slog.Record { return slog.NewRecord(when, slog.LevelInfo, `say "hi"`, 0) },
	"newline":          func() slog.Record { return withAttrs(slog.String("err", "line\nbreak")) },
	"backslash":        func() slog.Record { return withAttrs(slog.String("path", `C:\x`)) },
	"control byte":     func() slog.Record { return withAttrs(slog.String("k", "\x01\x7f")) },
	"unicode":          func() slog.Record { return withAttrs(slog.String("k", "é\u2028")) },
	"invalid utf-8":    func() slog.Record { return withAttrs(slog.String("k", "\xff")) },
	"escaped key":      func() slog.Record { return withAttrs(slog.Int("a\"b", 1)) },
	"empty key":        func() slog.Record { return withAttrs(slog.Int("", 1)) },
	"empty attribute":  func() slog.Record { return withAttrs(slog.Attr{}, slog.Int("n", 1)) },
	"integers": func() slog.Record {
		return withAttrs(slog.Int64("min", math.MinInt64), slog.Uint64("max", math.MaxUint64))
	},
	"booleans":          func() slog.Record { return withAttrs(slog.Bool("t", true), slog.Bool("f", false)) },
	"negative duration": func() slog.Record { return withAttrs(slog.Duration("d", -time.Hour)) },
	"float":             func() slog.Record { return withAttrs(slog.Float64("f", 1e21), slog.Float64("g", 0.5)) },
	"time attribute":    func() slog.Record { return withAttrs(slog.Time("at", when)) },
	"error":             func() slog.Record { return withAttrs(slog.Any("err", errors.New("boom"))) },
	"map":               func() slog.Record { return withAttrs(slog.Any("m", map[string]int{"a": 1})) },
	"group":             func() slog.Record { return withAttrs(slog.Group("g", slog.Int("a", 1)), slog.Int("b", 2)) },
	"empty group":       func() slog.Record { return withAttrs(slog.Group("g"), slog.Int("b", 2)) },
	"log valuer":        func() slog.Record { return withAttrs(slog.Any("v", secret("x"))) },
}

type secret string

func (secret) LogValue() slog.Value { return slog.StringValue("REDACTED") }

func withAttrs(attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(when, slog.LevelInfo, "m", 0)
	r.AddAttrs(attrs...)
	return r
}

// TestSameBytesAsSlog: every record, through every handler shape, is written
// as slog.JSONHandler writes it.
func TestSameBytesAsSlog(t *testing.T) {
	shapes := map[string]func(slog.Handler) slog.Handler{
		"plain":      func(h slog.Handler) slog.Handler { return h },
		"with attrs": func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("function", "config")}) },
		"with group": func(h slog.Handler) slog.Handler { return h.WithGroup("g") },
	}
	for name, record := range records {
		for shape, derive := range shapes {
			var got, want bytes.Buffer
			r := record()
			if err := derive(New(&got, nil)).Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if err := derive(slog.NewJSONHandler(&want, nil)).Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s, %s:\n got %s\nwant %s", name, shape, got.String(), want.String())
			}
		}
	}
}

// TestThePlainPathIsTaken: the request line is appended here, not handed to
// slog (a failure here is not wrong output, but the speed lost).
func TestThePlainPathIsTaken(t *testing.T) {
	for name, plain := range map[string]bool{"request line": true, "no attributes": true, "zero time": true,
		"integers": true, "booleans": true, "html characters": true, "empty key": true,
		"newline": false, "float": false, "group": false, "empty attribute": false, "year 10000": false} {
		if _, ok := appendPlain(nil, records[name]()); ok != plain {
			t.Errorf("%s: plain path %v, want %v", name, ok, plain)
		}
	}
}

func TestOptions(t *testing.T) {
	var got, want bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelWarn}
	h := New(&got, opts)
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelWarn) {
		t.Error("the level option is not kept")
	}
	replace := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "method" {
			a.Value = slog.StringValue("X")
		}
		return a
	}}
	r := records["request line"]()
	for _, o := range []*slog.HandlerOptions{replace, {AddSource: true}} {
		got.Reset()
		want.Reset()
		_ = New(&got, o).Handle(context.Background(), r)
		_ = slog.NewJSONHandler(&want, o).Handle(context.Background(), r)
		if got.String() != want.String() {
			t.Errorf("got %s\nwant %s", got.String(), want.String())
		}
	}
}

// TestLinesDoNotInterleave: lines of both paths, from many goroutines, reach
// the writer one at a time. The writer here has no lock of its own: under the
// race detector (make test runs this package with it), two writes at once
// fail the test.
func TestLinesDoNotInterleave(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(New(&out, nil))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if i%2 == 0 {
					logger.Info("request", "g", g, "i", i, "path", strings.Repeat("p", 3000))
				} else {
					logger.Info("other", "g", g, "f", 0.5, "text", "line\nbreak")
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("not a JSON line: %.200s", l)
		}
	}
}

func FuzzSameBytesAsSlog(f *testing.F) {
	f.Add("request", "path", "/api/v1/x", int64(200))
	f.Add("a\"b", "k\n", "\xff\u2028<>", int64(-1))
	f.Fuzz(func(t *testing.T, msg, key, value string, n int64) {
		r := slog.NewRecord(when, slog.LevelInfo, msg, 0)
		r.AddAttrs(slog.String(key, value), slog.Int64("n", n), slog.Duration(key, time.Duration(n)))
		var got, want bytes.Buffer
		_ = New(&got, nil).Handle(context.Background(), r)
		_ = slog.NewJSONHandler(&want, nil).Handle(context.Background(), r)
		if got.String() != want.String() {
			t.Errorf("got %s\nwant %s", got.String(), want.String())
		}
	})
}

// BenchmarkHandle: the request line, as the middleware logs it, through this
// handler and through slog.JSONHandler.
func BenchmarkHandle(b *testing.B) {
	for name, h := range map[string]slog.Handler{"logjson": New(io.Discard, nil), "slog": slog.NewJSONHandler(io.Discard, nil)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := slog.NewRecord(when, slog.LevelInfo, "request", 0)
				r.AddAttrs(slog.String("method", "GET"), slog.String("path", "/api/v1/config/environments/1/role/controller/nodes/node-1/resources/astute/values"),
					slog.Int("status", 200), slog.Int64("bytes", 31148), slog.Duration("duration", 12345*time.Nanosecond),
					slog.String("request_id", "req-c7677729-0535-414a-8cbb-1106ec288a7d"))
				_ = h.Handle(context.Background(), r)
			}
		})
	}
}
