package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// A plan compiles at most maxPlanPatternBytes of "/re/" names, then refuses
// the plan (413) rather than hold more.
func TestPlanPatternsBounded(t *testing.T) {
	var tasks []Task
	for i := range 700 { // each some 97 KB compiled: 68 MB together
		tasks = append(tasks, Task{ID: fmt.Sprint("t", i), Type: TypeShell, Roles: []string{fmt.Sprintf("/[a-z]{999}[0-9]{990}%d/", i)}})
	}
	nodes := []PlanNode{{ClusterNode: ClusterNode{ID: "1", Roles: []string{"compute"}}}}
	p, err := arrange(tasks, nodes, NewRules(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	err = checkNodeTasks(p, 1)
	if !errs.Is(err, errs.TooLarge) || !strings.Contains(errs.Message(err), "compile to over 67108864 bytes") || p.patternBytes > maxPlanPatternBytes+100_000 {
		t.Errorf("%v, after compiling %d bytes of names", err, p.patternBytes)
	}
}
