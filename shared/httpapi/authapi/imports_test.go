package authapi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoGroupDependency: the policy and the audit read their facts from the
// route table and from what the writing code noted (audit.Note), so authapi
// depends on no endpoint group, neither its handlers nor its domain, even
// indirectly. go test puts its own go first on PATH.
func TestNoGroupDependency(t *testing.T) {
	const module = "github.com/tuningbox/tuningbox/shared/"
	groups := []string{
		"httpapi/configapi", "httpapi/graphsapi", "httpapi/nodesapi", "httpapi/templatesapi", "httpapi/overridesapi", "httpapi/storeapi",
		"configdb", "graphs", "nodes", "templates", "overrides",
	}
	list := exec.Command("go", "list", "-deps", ".")
	var stderr strings.Builder
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list named too few dependencies: %q", out)
	}
	for _, dep := range deps {
		for _, g := range groups {
			if dep == module+g {
				t.Errorf("authapi depends on %s", dep)
			}
		}
	}
}
