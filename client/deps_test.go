package client

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The client links the API's bodies (shared/wire) and the id syntax
// (shared/ident), no domain package: a program talking to tuningbox does not
// carry its server (bcrypt, JSON Schema, JSON Patch, the planner).
func TestNoDomainDependency(t *testing.T) {
	const module = "github.com/tuningbox/tuningbox/"
	list := exec.Command("go", "list", "-deps", ".")
	var stderr strings.Builder
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var own []string
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module) {
			own = append(own, strings.TrimPrefix(dep, module))
		}
	}
	slices.Sort(own)
	if want := []string{"client", "shared/ident", "shared/wire"}; !slices.Equal(own, want) {
		t.Errorf("the client depends on %q, want only %q", own, want)
	}
}
