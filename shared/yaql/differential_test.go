package yaql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// referencePython is the interpreter Debian's python3-yaql is installed for (a pyenv
// python3 on PATH would not see it).
const referencePython = "/usr/bin/python3"

const installHint = "apt-get install -y --no-install-recommends python3-yaql (make unit installs it: .ci/python3-yaql.sh)"

// fuelDir is Fuel's own data, copied into the repository (testdata/fuel/README.md).
const fuelDir = "../../testdata/fuel"

// extraExpressions holds more expressions for the differential test, one per line.
const extraExpressions = "testdata/extra_expressions.txt"

// extraExpressionsOf reads extraExpressions as reference.py does: the path is the line number.
func extraExpressionsOf(t testing.TB, name string) []taskExpression {
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var found []taskExpression
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
			found = append(found, taskExpression{File: filepath.Base(name), Path: []any{i + 1}, Expr: line})
		}
	}
	return found
}

// taskExpression is one {yaql_exp: ...} of a release file: the file, the path to it (task
// index, then keys) and its text.
type taskExpression struct {
	File string `json:"file"`
	Path []any  `json:"path"`
	Expr string `json:"expr"`
}

func (e taskExpression) id() string { return fmt.Sprintf("%s%v", e.File, e.Path) }

// releaseExpressions walks every release file for yaql_exp values, as reference.py does.
func releaseExpressions(t testing.TB, releaseDir string) []taskExpression {
	names, err := filepath.Glob(filepath.Join(releaseDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var found []taskExpression
	var walk func(v any, path []any, file string)
	walk = func(v any, path []any, file string) {
		switch x := v.(type) {
		case map[string]any:
			if expr, ok := x["yaql_exp"].(string); ok && len(x) == 1 {
				found = append(found, taskExpression{File: file, Path: path, Expr: expr})
				return
			}
			for _, k := range sortedKeys(x) {
				walk(x[k], append(append([]any(nil), path...), k), file)
			}
		case []any:
			for i, item := range x {
				walk(item, append(append([]any(nil), path...), i), file)
			}
		}
	}
	for _, name := range names {
		walk(loadYAML(t, name), nil, filepath.Base(name))
	}
	return found
}

// loadYAML reads a YAML file as tuningbox holds documents: JSON, numbers as json.Number
// (YAML 1.1 as PyYAML reads it; a repeated key keeps its last value, as in the release files).
func loadYAML(t testing.TB, name string) any {
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := puppetyaml.Decode(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func jsonShaped(t testing.TB, v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// oldStates is testdata/old_states.json.
type oldStates struct {
	Vars    map[string]any `json:"vars"`
	Changed []struct {
		Path   []string `json:"path"`
		Value  any      `json:"value"`
		Delete bool     `json:"delete"`
	} `json:"changed"`
}

func readOldStates(t testing.TB) oldStates {
	raw, err := os.ReadFile("testdata/old_states.json")
	if err != nil {
		t.Fatal(err)
	}
	var s oldStates
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// changedCopy is doc with the edits of old_states.json applied, as reference.py applies them.
func (s oldStates) changedCopy(t testing.TB, doc any) any {
	out := jsonShaped(t, doc)
	for _, change := range s.Changed {
		parent, _ := out.(map[string]any)
		for _, key := range change.Path[:len(change.Path)-1] {
			parent, _ = parent[key].(map[string]any)
		}
		if parent == nil {
			continue
		}
		last := change.Path[len(change.Path)-1]
		if change.Delete {
			delete(parent, last)
		} else {
			parent[last] = jsonShaped(t, change.Value)
		}
	}
	return out
}

type referenceResult struct {
	File  string          `json:"file"`
	Path  []any           `json:"path"`
	Node  string          `json:"node"`
	Old   string          `json:"old"`
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// TestDifferentialPython3Yaql evaluates every yaql_exp of the shared release graphs on every
// shared node file with three old states, with python3-yaql and with this package, and
// wants the same value (or an error on both sides) everywhere.
func TestDifferentialPython3Yaql(t *testing.T) {
	if out, err := exec.Command(referencePython, "-c", "import yaql, yaml").CombinedOutput(); err != nil {
		t.Fatalf("the reference engine python3-yaql is missing (%v: %s); install it: %s", err, bytes.TrimSpace(out), installHint)
	}
	releaseDir, hieraDir := filepath.Join(fuelDir, "release"), filepath.Join(fuelDir, "hiera")
	cmd := exec.Command(referencePython, "testdata/reference.py", releaseDir, hieraDir, "testdata/old_states.json", extraExpressions)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference.py: %v\n%s", err, stderr.String())
	}
	var reference struct {
		Expressions []taskExpression  `json:"expressions"`
		Results     []referenceResult `json:"results"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&reference); err != nil {
		t.Fatal(err)
	}

	exprs := releaseExpressions(t, releaseDir)
	released := len(exprs)
	exprs = append(exprs, extraExpressionsOf(t, extraExpressions)...)
	byID := map[string]*Expr{}
	for _, e := range exprs {
		compiled, err := Compile(e.Expr)
		if err != nil {
			t.Fatalf("%s: %v", e.id(), err)
		}
		byID[e.id()] = compiled
	}
	if len(reference.Expressions) != len(exprs) {
		t.Fatalf("reference.py found %d expressions, this test %d", len(reference.Expressions), len(exprs))
	}
	for _, e := range reference.Expressions {
		if byID[normalizePath(e).id()] == nil {
			t.Fatalf("reference.py found %s, this test did not", e.id())
		}
	}

	states := readOldStates(t)
	nodes := map[string]map[string]any{}
	nodeFiles, _ := filepath.Glob(filepath.Join(hieraDir, "*.yaml"))
	for _, name := range nodeFiles {
		doc := loadYAML(t, name)
		nodes[filepath.Base(name)] = map[string]any{"none": nil, "same": doc, "changed": states.changedCopy(t, doc), "new": doc}
	}
	if want := len(exprs) * len(nodeFiles) * 3; len(reference.Results) != want {
		t.Fatalf("reference.py gave %d results, want %d", len(reference.Results), want)
	}

	// One Cache for the whole run, as a plan shares one: its answers must not change any value.
	cache := NewCache()
	var mismatches []string
	for _, r := range reference.Results {
		e := normalizePath(taskExpression{File: r.File, Path: r.Path})
		docs := nodes[r.Node]
		vars := map[string]any{"node": docs["new"]}
		for k, v := range states.Vars {
			vars[k] = v
		}
		got, err := byID[e.id()].Eval(context.Background(), Env{New: docs["new"], Old: docs[r.Old], Vars: vars, Cache: cache})
		where := fmt.Sprintf("%s on %s, old %s: %s", e.id(), r.Node, r.Old, byID[e.id()].Source())
		switch {
		case r.Error != "" && err == nil:
			mismatches = append(mismatches, fmt.Sprintf("%s\n  python: %s\n  go:     %s", where, r.Error, show(got)))
		case r.Error == "" && err != nil:
			mismatches = append(mismatches, fmt.Sprintf("%s\n  python: %s\n  go:     %v", where, r.Value, err))
		case r.Error == "":
			if !sameAsReference(t, byID[e.id()].Source(), r.Value, got) {
				mismatches = append(mismatches, fmt.Sprintf("%s\n  python: %s\n  go:     %s", where, r.Value, show(got)))
			}
		}
	}
	if len(mismatches) > 0 {
		if len(mismatches) > 20 {
			mismatches = append(mismatches[:20], fmt.Sprintf("... and %d more", len(mismatches)-20))
		}
		t.Fatalf("%d of %d values differ from python3-yaql:\n%s", len(mismatches), len(reference.Results), strings.Join(mismatches, "\n"))
	}
	t.Logf("yaql differential: %d expressions (%d of the release, %d of %s) x %d nodes x 3 old states = %d values, all equal to python3-yaql's",
		len(exprs), released, len(exprs)-released, extraExpressions, len(nodeFiles), len(reference.Results))
}

// normalizePath gives JSON-decoded task indexes (json.Number) the int form the Go walker uses.
func normalizePath(e taskExpression) taskExpression {
	path := make([]any, len(e.Path))
	for i, p := range e.Path {
		if n, ok := p.(json.Number); ok {
			idx, _ := n.Int64()
			p = int(idx)
		}
		path[i] = p
	}
	e.Path = path
	return e
}

func show(v any) string {
	if isUndefined(v) {
		return "<undefined>"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(raw)
}

// sameAsReference compares a python3-yaql value (JSON) with ours. toYaml()/toJson() results
// are compared as the data they encode: the layout is the serializer's, not yaql's.
func sameAsReference(t *testing.T, src string, want json.RawMessage, got any) bool {
	var wantValue any
	dec := json.NewDecoder(bytes.NewReader(want))
	dec.UseNumber()
	if err := dec.Decode(&wantValue); err != nil {
		t.Fatal(err)
	}
	trimmed := strings.TrimSpace(src)
	gotText, isText := got.(string)
	wantText, wantIsText := wantValue.(string)
	if isText && wantIsText && (strings.HasSuffix(trimmed, ".toYaml()") || strings.HasSuffix(trimmed, ".toJson()")) {
		w, err := puppetyaml.Decode([]byte(wantText))
		if err != nil {
			t.Fatalf("python's %s: %v", src, err)
		}
		g, err := puppetyaml.Decode([]byte(gotText))
		if err != nil {
			return false
		}
		return jsonEqual(w, finalized(g))
	}
	if m, ok := wantValue.(map[string]any); ok && len(m) == 1 && m["$yaql"] == "undefined" {
		return isUndefined(got)
	}
	return jsonEqual(wantValue, got)
}

// jsonEqual compares decoded JSON (numbers as json.Number) with an Eval result: the same
// structure, the same strings, and numbers of the same kind (int or float) and value.
func jsonEqual(want, got any) bool {
	switch w := want.(type) {
	case nil, bool, string:
		return want == got
	case json.Number:
		isFloat := strings.ContainsAny(string(w), ".eE") || strings.ContainsAny(string(w), "NI")
		switch g := got.(type) {
		case int64:
			return !isFloat && string(w) == fmt.Sprint(g)
		case float64:
			f, err := w.Float64()
			return isFloat && err == nil && f == g
		case json.Number:
			return string(w) == string(g)
		}
		return false
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !jsonEqual(w[i], g[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok || !jsonEqual(v, gv) {
				return false
			}
		}
		return true
	}
	return false
}
