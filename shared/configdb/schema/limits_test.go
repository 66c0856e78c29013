package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// bombSchema is the schema of the adversarial run: a $defs chain whose every
// level holds allOf [$ref next, $ref next], so one value meets 2^depth subschemas.
func bombSchema(depth int) string {
	defs := map[string]any{fmt.Sprintf("d%d", depth): map[string]any{"type": "object"}}
	for i := range depth {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{next, next}}
	}
	b, _ := json.Marshal(map[string]any{"$defs": defs, "$ref": "#/$defs/d0"})
	return string(b)
}

// defineWithSchema saves a definition "checked" of component fuel with schema.
func defineWithSchema(t *testing.T, s *configdb.Service, schema string) error {
	t.Helper()
	_, err := s.CreateResourceDefinition(context.Background(), configdb.NewResourceDefinition{Name: "checked", Component: "fuel", Content: json.RawMessage(`{"schema":` + schema + `}`)})
	return err
}

// processCPU is the CPU time this process has used.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSchemaBombRefused: the bomb at depth 40 (2.8 KB) is refused when the
// definition is saved, naming the limit, in well under a second.
func TestSchemaBombRefused(t *testing.T) {
	s := newTestService(t)
	cpu, start := processCPU(t), time.Now()
	err := defineWithSchema(t, s, bombSchema(40))
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "limit: schema fan-out") {
		t.Fatalf("saving the bomb: %v, want a 400 naming the fan-out limit", err)
	}
	if took, used := time.Since(start), processCPU(t)-cpu; took > time.Second || used > time.Second {
		t.Fatalf("refusing the bomb took %v (%v of CPU)", took, used)
	}
	t.Logf("bomb of depth 40 refused in %v", time.Since(start))
}

func TestSchemaLimitsNamed(t *testing.T) {
	refChain := func(n int) string { // n $refs: the root's to d0, d0's to d1, ..., to d(n-1)
		defs := map[string]any{fmt.Sprintf("d%d", n-1): map[string]any{"type": "integer"}}
		for i := range n - 1 {
			defs[fmt.Sprintf("d%d", i)] = map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		}
		b, _ := json.Marshal(map[string]any{"$defs": defs, "$ref": "#/$defs/d0"})
		return string(b)
	}
	for _, c := range []struct {
		name, schema, limit string
	}{
		{"fan-out", bombSchema(20), "limit: schema fan-out"},
		{"ref chain", refChain(maxRefChain + 1), "limit: $ref chain depth"},
		{"size", `{"description":"` + strings.Repeat("x", maxSchemaBytes) + `"}`, "limit: schema size"},
		{"regex", `{"properties":{"a":{"pattern":"^(abcd){900}$"}}}`, "limit: regex complexity"},
		{"regex of a property name", `{"patternProperties":{"^(abcd){900}$":true}}`, "limit: regex complexity"},
		{"regex in $defs", `{"$defs":{"x":{"pattern":"^(abcd){900}$"}}}`, "limit: regex complexity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := defineWithSchema(t, newTestService(t), c.schema)
			if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), c.limit) {
				t.Fatalf("saving: %v, want a 400 naming %q", err, c.limit)
			}
		})
	}
	// Just inside every limit, and ordinary recursion, are fine.
	for _, ok := range []string{
		bombSchema(12),
		refChain(maxRefChain),
		`{"properties":{"a":{"pattern":"^[a-z0-9-]{1,63}$"}}}`,
		`{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`,
	} {
		if err := defineWithSchema(t, newTestService(t), ok); err != nil {
			t.Fatalf("saving %.60s: %v", ok, err)
		}
	}
}

// recursiveBomb passes every static check (its recursion repeats with the
// document's depth, which no check of the schema alone sees) but doubles the
// work at every level of a document nested as deep as it.
const recursiveBomb = `{"allOf":[{"properties":{"a":{"$ref":"#"}}},{"properties":{"a":{"$ref":"#"}}}]}`

func nestedDoc(depth int) []byte {
	return []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
}

// TestValidationBudget: a write whose validation would take 2^40 steps is
// refused within the budget (under a second), naming the limit, and nothing
// keeps running after it.
func TestValidationBudget(t *testing.T) {
	s := newTestService(t)
	if err := defineWithSchema(t, s, recursiveBomb); err != nil {
		t.Fatal(err)
	}
	ref := configdb.DocRef{Env: "1", Resource: "checked"}
	if _, err := s.PutDocument(context.Background(), ref, configdb.Values, nestedDoc(8), ""); err != nil {
		t.Fatalf("a shallow document validates: %v", err)
	}
	cpu, start := processCPU(t), time.Now()
	_, err := s.PutDocument(context.Background(), ref, configdb.Values, nestedDoc(40), "")
	took, used := time.Since(start), processCPU(t)-cpu
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "limit: validation budget") {
		t.Fatalf("the deep document: %v, want a 400 naming the validation budget", err)
	}
	if took > time.Second {
		t.Fatalf("stopping the validation took %v", took)
	}
	t.Logf("validation stopped by the budget after %v (%v of CPU)", took, used)
	idleAfter(t)
}

// TestValidationStopsWithRequest: the validation stops when its request's
// context ends, long before the budget.
func TestValidationStopsWithRequest(t *testing.T) {
	s := newTestService(t)
	if err := defineWithSchema(t, s, recursiveBomb); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.PutDocument(ctx, configdb.DocRef{Env: "1", Resource: "checked"}, configdb.Values, nestedDoc(40), "")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("after its context ended: %v after %v", err, time.Since(start))
	}
	idleAfter(t)
}

// idleAfter fails when the process keeps a core busy after the validation.
func idleAfter(t *testing.T) {
	t.Helper()
	runtime.GC()
	cpu := processCPU(t)
	time.Sleep(300 * time.Millisecond)
	if used := processCPU(t) - cpu; used > 100*time.Millisecond {
		t.Fatalf("the process used %v of CPU in the 300 ms after the validation", used)
	}
}

// newTestService returns a service that checks schemas, on a fresh in-memory
// store with component "fuel" and environment 1 of it.
func newTestService(t testing.TB) *configdb.Service {
	t.Helper()
	b := mem.New()
	s := configdb.NewService(b.Index, b.Blobs, configdb.WithSchemas(Compile))
	ctx := context.Background()
	if _, err := s.CreateComponent(ctx, configdb.NewComponent{Name: "fuel"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEnvironment(ctx, configdb.NewEnvironment{ID: 1, Components: []string{"fuel"}, Levels: []string{"role", "nodes"}}); err != nil {
		t.Fatal(err)
	}
	return s
}
