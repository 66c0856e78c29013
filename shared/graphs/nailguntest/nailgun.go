// Package nailguntest runs the planner's reference for the tests of graphs and
// its planner: testdata/nailgun_cluster.py builds fuel-library's default
// graph, its release metadata and a cluster of real nodes' astute.yaml (from
// testdata/fuel at the repository root), and testdata/nailgun_plan.py plans
// them as Nailgun's LCM serializer does, an independent port on Debian's
// python3-yaql.
package nailguntest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Input is nailgun_plan.py's input.
type Input struct {
	Tasks         json.RawMessage            `json:"tasks"`
	RolesMetadata map[string]json.RawMessage `json:"roles_metadata"`
	TagsMetadata  map[string]json.RawMessage `json:"tags_metadata"`
	Nodes         []struct {
		UID   string   `json:"uid"`
		Roles []string `json:"roles"`
		Data  any      `json:"data"`
		Old   any      `json:"old"`
	} `json:"nodes"`
}

// Node is nailgun_plan.py's output for one node.
type Node struct {
	Placed   []string          `json:"placed"`
	Run      []string          `json:"run"`
	Skipped  map[string]string `json:"skipped"`
	Strategy map[string]struct {
		Type   string
		Amount *int
	} `json:"strategy"`
	Requires    map[string][][2]*string `json:"requires"`
	RequiredFor map[string][][2]*string `json:"required_for"`
}

// Testdata is the directory of the reference's scripts (shared/graphs/testdata),
// wherever the test that runs them is.
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Cluster returns nailgun_cluster.py's cluster with the nodes' old data as
// state says ("first": none, "same": as now, "glance": glance's changed),
// as JSON and decoded.
func Cluster(t testing.TB, state string) ([]byte, Input) {
	raw := Python(t, nil, filepath.Join(Testdata(), "nailgun_cluster.py"), "--old", state)
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	return raw, in
}

// Python runs python3 with args and stdin, and returns its output.
func Python(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 %v: %v\n%s\n(the reference needs Debian's python3-yaql: apt-get install -y --no-install-recommends python3-yaql)", args, err, stderr.Bytes())
	}
	return out
}
