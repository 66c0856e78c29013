package lambdamain_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFunctionsLeaveOutWhatTheyDoNotUse: package initialization is start-up
// time for every function that links a package (docs/aws.md, Bootstraps), so
// no function links Prometheus (API Gateway routes no /metrics: the functions
// write EMF lines) and only the config function, which writes documents,
// links the JSON Schema library, which compiles every draft's metaschema at
// start. go test puts its own go first on PATH.
func TestFunctionsLeaveOutWhatTheyDoNotUse(t *testing.T) {
	list := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "../../functions/...")
	var stderr strings.Builder
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	const module = "github.com/tuningbox/tuningbox/functions/"
	seen := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		fn, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		seen++
		schemas := false
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, "github.com/prometheus/") || strings.HasPrefix(dep, "google.golang.org/protobuf/") {
				t.Errorf("function %s links %s", fn, dep)
			}
			schemas = schemas || dep == "github.com/santhosh-tekuri/jsonschema/v6"
		}
		if schemas != (fn == "config") {
			t.Errorf("function %s links the JSON Schema library: %v, want %v", fn, schemas, fn == "config")
		}
	}
	if seen < 7 {
		t.Fatalf("go list named %d functions, want 7 or more:\n%s", seen, out)
	}
}
