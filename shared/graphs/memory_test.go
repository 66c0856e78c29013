package graphs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
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
	if compiled := compiledBytes(tasks); compiled < 100*48_000 || s.decoded.Cost() < compiled {
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
	_, err := ParseTasks(patternTasks(400))
	if !errs.Is(err, errs.TooLarge) || !strings.Contains(errs.Message(err), "over the limit of 16777216") {
		t.Errorf("400 patterns: %v", err)
	}
	_, err = ParseTasks(json.RawMessage(`[{"id":"a","type":"shell","roles":["/[a-z]{3000}/"]}]`))
	if !errs.Is(err, errs.Invalid) || !strings.Contains(errs.Message(err), `tasks[0].roles[0] (task "a"): invalid regular expression`) {
		t.Errorf("an oversized role pattern: %v", err)
	}
}

// Plans compile their "/re/" names once for the service, within its share of
// the cache budget.
func TestPlansShareCompiledNames(t *testing.T) {
	s := NewService(nil, nil, nil, WithCacheBytes(16<<20))
	tasks := []Task{{ID: "a", Type: TypeShell, Roles: []string{"/^comp/"}}, {ID: "b", Type: TypeShell, Roles: []string{"/[a-z]{1000}/"}}}
	nodes := []PlanNode{{ClusterNode: ClusterNode{ID: "1", Roles: []string{"compute"}}}}
	for range 2 {
		p, err := arrange(tasks, nodes, newTagRules(), s.patterns, false)
		if err != nil {
			t.Fatal(err)
		}
		if !p.applies[0][0] || p.applies[0][1] {
			t.Fatalf("placed %v", p.applies)
		}
	}
	if hits, _ := s.patterns.Stats(); s.patterns.Len() != 2 || hits != 2 || s.patterns.Cost() < 48_000 || s.patterns.Cost() > 1<<20 {
		t.Errorf("patterns: %d entries, %d hits, %d bytes", s.patterns.Len(), hits, s.patterns.Cost())
	}
}

// A plan compiles at most maxPlanPatternBytes of "/re/" names, then refuses
// the plan (413) rather than hold more.
func TestPlanPatternsBounded(t *testing.T) {
	var tasks []Task
	for i := range 700 { // each some 97 KB compiled: 68 MB together
		tasks = append(tasks, Task{ID: fmt.Sprint("t", i), Type: TypeShell, Roles: []string{fmt.Sprintf("/[a-z]{999}[0-9]{990}%d/", i)}})
	}
	nodes := []PlanNode{{ClusterNode: ClusterNode{ID: "1", Roles: []string{"compute"}}}}
	p, err := arrange(tasks, nodes, newTagRules(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	err = PlanLimits{NodeTasks: 1}.checkNodeTasks(p)
	if !errs.Is(err, errs.TooLarge) || !strings.Contains(errs.Message(err), "compile to over 67108864 bytes") || p.patternBytes > maxPlanPatternBytes+100_000 {
		t.Errorf("%v, after compiling %d bytes of names", err, p.patternBytes)
	}
}
