package httpapi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoLambdaDependency: the HTTP layer is the same for the local server and
// the Lambda functions, so no package under shared/httpapi depends on Lambda's
// event types or the API proxy, even indirectly; shared/lambdaadapter
// translates them. go test puts its own go first on PATH.
func TestNoLambdaDependency(t *testing.T) {
	forbidden := []string{"github.com/aws/aws-lambda-go", "github.com/awslabs/aws-lambda-go-api-proxy"}
	list := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...")
	var stderr strings.Builder
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	packages := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(packages) < 2 || !strings.HasPrefix(packages[0], "github.com/tuningbox/tuningbox/shared/httpapi") {
		t.Fatalf("go list named no packages under shared/httpapi: %q", out)
	}
	for _, line := range packages {
		pkg, deps, _ := strings.Cut(line, " ")
		for _, dep := range strings.Fields(deps) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
