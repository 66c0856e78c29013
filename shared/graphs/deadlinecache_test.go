package graphs

import (
	"fmt"
	"testing"
	"time"
)

// The deadline checks remembered take a sixty-fourth of the service's cache
// budget, counted in bytes: past it the least recently checked are forgotten.
func TestDeadlineChecksCountBytes(t *testing.T) {
	s := NewService(nil, nil, nil, WithCacheBytes(64*10*deadlineCheckBytes))
	now := time.Now()
	for i := range 50 {
		s.deadlineChecks.Add(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), now)
	}
	if n, cost := s.deadlineChecks.Len(), s.deadlineChecks.Cost(); n != 10 || cost != 10*deadlineCheckBytes {
		t.Fatalf("%d checks in %d bytes kept, want the 10 that fit in %d", n, cost, 10*deadlineCheckBytes)
	}
	if _, ok := s.deadlineChecks.Get("00000049-0000-4000-8000-000000000000"); !ok {
		t.Error("the latest check was forgotten")
	}
}
