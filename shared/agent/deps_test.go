package agent

import (
	"os/exec"
	"strings"
	"testing"
)

// The node agent links no planner: the facts it shares with the server (task
// types, statuses, the default task timeout) are wire's, so the planner, yaql
// and the store stay out of its binary.
func TestAgentLinksNoPlanner(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch strings.TrimPrefix(pkg, "github.com/tuningbox/tuningbox/") {
		case "shared/graphs", "shared/yaql", "shared/store":
			t.Errorf("the agent links %s", pkg)
		}
	}
}
