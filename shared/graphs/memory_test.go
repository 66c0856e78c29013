package graphs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
)

// patternTasks is n tasks whose conditions each hold a regular expression of
// some 1,000 instructions: 80 bytes of JSON, 49 KB compiled.
func patternTasks(n int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":"t%d","type":"shell","condition":{"yaql_exp":"$.a.matches('[a-z]{1000}%d')"}}`, i, i)
	}
	return []byte("[" + strings.Join(items, ",") + "]")
}

// Issue 35: four 293 KB graphs kept 1.57 GB resident against a 256 MiB budget,
// their compiled regular expressions uncounted. Decoded tasks now cost what
// their expressions compile to.
func TestDecodedTasksCountCompiledExpressions(t *testing.T) {
	raw := patternTasks(100)
	s := NewService(nil, nil, nil, WithCacheBytes(64<<20))
	tasks, err := s.decodeTasks(raw)
	if err != nil {
		t.Fatal(err)
	}
	if compiled := planner.CompiledBytes(tasks); compiled < 100*48_000 || s.decoded.Cost() < compiled {
		t.Errorf("the cache counts %d bytes for %d of JSON compiling to %d", s.decoded.Cost(), len(raw), compiled)
	}
	// A cache whose share is smaller keeps none of it.
	s = NewService(nil, nil, nil, WithCacheBytes(4<<20))
	if _, err := s.decodeTasks(raw); err != nil || s.decoded.Len() != 0 {
		t.Errorf("a 4 MiB budget kept %d entries (%v)", s.decoded.Len(), err)
	}
}

// A task list whose expressions compile to over MaxCompiledBytes is refused on
// upload, as soon as the sum passes it.
func TestParseTasksBoundsCompiledBytes(t *testing.T) {
	_, err := planner.ParseTasks(patternTasks(400))
	if !errs.Is(err, errs.TooLarge) || !strings.Contains(errs.Message(err), "over the limit of 16777216") {
		t.Errorf("400 patterns: %v", err)
	}
	_, err = planner.ParseTasks(json.RawMessage(`[{"id":"a","type":"shell","roles":["/[a-z]{3000}/"]}]`))
	if !errs.Is(err, errs.Invalid) || !strings.Contains(errs.Message(err), `tasks[0].roles[0] (task "a"): invalid regular expression`) {
		t.Errorf("an oversized role pattern: %v", err)
	}
}

// Plans compile their "/re/" names once for the service, within its share of
// the cache budget.
func TestPlansShareCompiledNames(t *testing.T) {
	s := NewService(nil, nil, nil, WithCacheBytes(16<<20))
	tasks := []planner.Task{{ID: "a", Type: planner.TypeShell, Roles: []string{"/^comp/"}}, {ID: "b", Type: planner.TypeShell, Roles: []string{"/[a-z]{1000}/"}}}
	nodes := []planner.PlanNode{{ClusterNode: planner.ClusterNode{ID: "1", Roles: []string{"compute"}}}}
	for range 2 {
		p, err := planner.Plan(context.Background(), tasks, nodes, planner.NewRules(), planner.Options{
			Patterns: s.patterns, MaxNodeTasks: DefaultPlanNodeTasks, MaxWaits: DefaultPlanEdges,
		})
		if err != nil {
			t.Fatal(err)
		}
		if steps := p.Steps["1"]; len(steps) != 1 || steps[0].Task != 0 {
			t.Fatalf("placed %v", p.Steps)
		}
	}
	if hits, _ := s.patterns.Stats(); s.patterns.Len() != 2 || hits != 2 || s.patterns.Cost() < 48_000 || s.patterns.Cost() > 1<<20 {
		t.Errorf("patterns: %d entries, %d hits, %d bytes", s.patterns.Len(), hits, s.patterns.Cost())
	}
}
