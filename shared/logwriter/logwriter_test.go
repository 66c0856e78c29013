package logwriter_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tuningbox/tuningbox/shared/logwriter"
)

// destination records each write it gets.
type destination struct {
	mu     sync.Mutex
	writes []string
}

func (d *destination) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes = append(d.writes, string(p))
	return len(p), nil
}

func (d *destination) snapshot() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.writes...)
}

func TestLinesGoOutTogetherWithinTheInterval(t *testing.T) {
	synctest.Test(t, testLinesGoOutTogetherWithinTheInterval)
}

func testLinesGoOutTogetherWithinTheInterval(t *testing.T) {
	var d destination
	w := logwriter.New(&d, 50*time.Millisecond)
	for i := range 3 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if got := d.snapshot(); len(got) != 0 {
		t.Fatalf("written before the interval: %q", got)
	}
	time.Sleep(50 * time.Millisecond) // the interval
	synctest.Wait()                   // the flush it started is done
	if got := d.snapshot(); len(got) != 1 || got[0] != "line 0\nline 1\nline 2\n" {
		t.Fatalf("writes %q, want the three lines in one", got)
	}
}

func TestCloseWritesWhatWaitsAndLaterLinesAtOnce(t *testing.T) {
	var d destination
	w := logwriter.New(&d, time.Hour)
	fmt.Fprintln(w, "before")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(w, "after")
	if got := d.snapshot(); len(got) != 2 || got[0] != "before\n" || got[1] != "after\n" {
		t.Fatalf("writes %q", got)
	}
}

// A burst larger than the buffer goes out in bounded writes, in order, and
// nothing is lost or split inside a line.
func TestBurstsGoOutInBoundedWholeWrites(t *testing.T) {
	var d destination
	w := logwriter.New(&d, time.Hour)
	var want bytes.Buffer
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				line := fmt.Sprintf("{\"g\":%d,\"i\":%d,\"pad\":%q}\n", g, i, strings.Repeat("x", 40))
				mu.Lock()
				want.WriteString(line)
				_, _ = w.Write([]byte(line))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got := d.snapshot()
	if len(got) < 2 {
		t.Fatalf("%d writes for %d bytes: the burst waited whole", len(got), want.Len())
	}
	for _, write := range got {
		if len(write) > 64<<10 || !strings.HasSuffix(write, "\n") {
			t.Fatalf("a write of %d bytes, ending %q", len(write), write[len(write)-1:])
		}
	}
	if strings.Join(got, "") != want.String() {
		t.Fatal("the lines came out otherwise than they were written")
	}
}

// TestLockedWritesWhole: writers sharing a Locked writer never interleave
// their writes, over a destination that takes each in small pieces.
func TestLockedWritesWhole(t *testing.T) {
	var dst piecewise
	out := logwriter.Locked(&dst)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			line := strings.Repeat(string(rune('a'+g)), 500) + "\n"
			for range 100 {
				if _, err := out.Write([]byte(line)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(dst.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if len(l) != 500 || strings.Trim(l, l[:1]) != "" {
			t.Fatalf("an interleaved line: %.80s...", l)
		}
	}
}

// piecewise takes a write in pieces of 16 bytes, yielding between them.
type piecewise struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (p *piecewise) Write(b []byte) (int, error) {
	for i := 0; i < len(b); i += 16 {
		p.mu.Lock()
		p.buf.Write(b[i:min(i+16, len(b))])
		p.mu.Unlock()
		runtime.Gosched()
	}
	return len(b), nil
}

func (p *piecewise) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}
