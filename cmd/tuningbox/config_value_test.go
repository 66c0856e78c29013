package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
)

func TestTypedValue(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name  string
		typ   string
		value *string
		stdin string
		want  string // canonical JSON
	}{
		{"int", "int", str("2"), "", "2"},
		{"big int", "int", str("123456789012345678901"), "", "123456789012345678901"},
		{"str keeps digits a string", "str", str("2"), "", `"2"`},
		{"bool", "bool", str("true"), "", "true"},
		{"null without value", "null", nil, "", "null"},
		{"json value", "json", str(`{"a":[1,2]}`), "", `{"a":[1,2]}`},
		{"json from stdin", "json", nil, `["x", 1]`, `["x",1]`},
		{"yaml from stdin", "yaml", nil, "a: 1\nb: [x]\n", `{"a":1,"b":["x"]}`},
		{"no type: int", "", str("2"), "", "2"},
		{"no type: bool", "", str("false"), "", "false"},
		{"no type: float", "", str("1.5"), "", "1.5"},
		{"no type: text", "", str("node-1.domain.tld"), "", `"node-1.domain.tld"`},
		{"no type: list-looking text stays text", "", str("[a, b]"), "", `"[a, b]"`},
		{"no type: empty", "", str(""), "", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := typedValue(tt.typ, tt.value, strings.NewReader(tt.stdin))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := canonicalJSON(v)
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestTypedValueErrors(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name  string
		typ   string
		value *string
	}{
		{"int not a number", "int", str("two")},
		{"bool not a bool", "bool", str("maybe")},
		{"null with a value", "null", str("x")},
		{"int without value", "int", nil},
		{"no type and no value", "", nil},
		{"unknown type", "float", str("1")},
		{"json from empty stdin", "json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := typedValue(tt.typ, tt.value, strings.NewReader(""))
			if exitCode(err) != 2 {
				t.Fatalf("err = %v (exit %d), want a usage error", err, exitCode(err))
			}
		})
	}
}

func TestRenderPlain(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"text", "text\n"},
		{json.Number("5"), "5\n"},
		{true, "true\n"},
		{nil, "null\n"},
		{map[string]any{"a": json.Number("1")}, "{\n  \"a\": 1\n}\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := render(&b, tt.in, formatPlain); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("render(%v) = %q, want %q", tt.in, b.String(), tt.want)
		}
	}
}

func TestParseLevels(t *testing.T) {
	tests := []struct {
		in      string
		want    client.LevelPath
		wantErr bool
	}{
		{"", nil, false},
		{"nodes=7", client.LevelPath{{Name: "nodes", Value: "7"}}, false},
		{"role=controller, nodes=node-1.domain.tld", client.LevelPath{{Name: "role", Value: "controller"}, {Name: "nodes", Value: "node-1.domain.tld"}}, false},
		{"a=b=c", client.LevelPath{{Name: "a", Value: "b=c"}}, false},
		{"nodes", nil, true},
		{"=7", nil, true},
		{"nodes=", nil, true},
	}
	for _, tt := range tests {
		got, err := parseLevels(tt.in)
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseLevels(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDiffDocuments(t *testing.T) {
	old := map[string]any{
		"same":    json.Number("1"),
		"changed": "a",
		"removed": true,
		"nested":  map[string]any{"x": json.Number("1"), "y": json.Number("2"), "gone": "z"},
		"list":    []any{json.Number("1"), json.Number("2")},
		"shape":   map[string]any{"k": "v"},
	}
	cur := map[string]any{
		"same":    json.Number("1"),
		"changed": "b",
		"added":   nil,
		"nested":  map[string]any{"x": json.Number("1"), "y": json.Number("3"), "new": []any{}},
		"list":    []any{json.Number("1"), json.Number("2"), json.Number("3")},
		"shape":   "flat",
	}
	var b strings.Builder
	if err := writeDiff(&b, diffDocuments(old, cur)); err != nil {
		t.Fatal(err)
	}
	want := `+ added: null
~ changed: "a" -> "b"
~ list: [1,2] -> [1,2,3]
- nested.gone: "z"
+ nested.new: []
~ nested.y: 2 -> 3
- removed: true
~ shape: {"k":"v"} -> "flat"
4 changed, 2 added, 2 removed
`
	if b.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := writeDiff(&b, diffDocuments(old, old)); err != nil {
		t.Fatal(err)
	}
	if b.String() != "no differences\n" {
		t.Errorf("diff of equal documents = %q", b.String())
	}
}

func TestHieraFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"astute.yaml", "globals.yml", "override/plugins.yaml", "override/configuration/role.yaml", "README", ".hidden/x.yaml", "override/.swp.yaml"} {
		writeTreeFile(t, dir, name, "a: 1\n")
	}
	// /etc/hiera/astute.yaml is usually a symlink to /etc/astute.yaml.
	elsewhere := t.TempDir()
	writeTreeFile(t, elsewhere, "target.yaml", "x: 1\n")
	if err := os.Symlink(filepath.Join(elsewhere, "target.yaml"), filepath.Join(dir, "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	files, err := hieraFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Resource)
	}
	want := []string{"astute", "globals", "linked", "override/configuration/role", "override/plugins"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resources = %v, want %v", got, want)
	}

	writeTreeFile(t, dir, "globals.yaml", "b: 2\n")
	if _, err := hieraFiles(dir); err == nil || !strings.Contains(err.Error(), "both map to data source globals") {
		t.Errorf("globals.yaml next to globals.yml: err = %v", err)
	}
}

func writeTreeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPlanUploads(t *testing.T) {
	files := []hieraFile{
		{Path: "a.yaml", Resource: "astute"},
		{Path: "n.yaml", Resource: "override/node"},
		{Path: "n1.yaml", Resource: "override/node/node-1.domain.tld"},
		{Path: "n2.yaml", Resource: "override/node/node-2.domain.tld"},
		{Path: "c.yaml", Resource: "override/class/nova::api"},
		{Path: "p.yaml", Resource: "override/plugins"},
		{Path: "x.yaml", Resource: "undefined/thing"},
	}
	defined := map[string]bool{"astute": true, "override/node": true, "override/class": true, "override/plugins": true}
	var got []string
	for _, u := range planUploads(files, defined) {
		got = append(got, fmt.Sprintf("%s whole=%q keyed=%v", u.resource, u.whole, u.keyed))
	}
	want := []string{
		`astute whole="a.yaml" keyed=map[]`,
		`override/class whole="" keyed=map[nova::api:c.yaml]`,
		`override/node whole="n.yaml" keyed=map[node-1.domain.tld:n1.yaml node-2.domain.tld:n2.yaml]`,
		`override/plugins whole="p.yaml" keyed=map[]`,
		`undefined/thing whole="x.yaml" keyed=map[]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
