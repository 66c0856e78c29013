package yaql

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// appendYAML's documents read back, as Puppet's Psych reads YAML 1.1, as the
// very data written: strings that look like booleans, nulls, numbers,
// base-60 times, dates or flow syntax stay strings.
func TestYAMLReadsBackAsWritten(t *testing.T) {
	data := map[string]any{
		"plain": "node-7.example.com", "path": "/etc/puppet/modules", "spaced": "OpenStack Access",
		"yes": "yes", "On": "On", "tilde": "~", "null-word": "null", "empty": "", "int-like": "0755", "float-like": "1.0",
		"time": "1:30", "date": "2016-04-01", "colon": "a: b", "hash": "a #b", "lead": " x", "trail": "x ", "quote": `say "hi"`,
		"multi": "line one\nline two\n", "unicode": "héllo ✓", "flow": "[1, 2]", "dash": "- x", "star": "*anchor",
		"key: odd": 1, "9": "nine", "whole": float64(3757668), "half": 0.5, "big": 1e300, "neg": float64(-3), "t": true, "f": false, "nil": nil,
		"nested": map[string]any{"list": []any{"a", map[string]any{"b": 1, "c": []any{}}, []any{"x", "y"}, map[string]any{}}, "empty": map[string]any{}},
		"lists":  []any{[]any{[]any{"deep"}}, []any{}},
	}
	out := appendYAML(nil, data, math.MaxInt)
	got, err := puppetyaml.Decode(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want, gotJSON := canonical(t, data), canonical(t, got)
	if !reflect.DeepEqual(want, gotJSON) {
		t.Errorf("read back:\n%s\nwant\n%s\nfrom\n%s", gotJSON, want, out)
	}
	for v, text := range map[any]string{"s": "s\n", math.Inf(1): ".inf\n", int64(7): "7\n"} {
		if got := string(appendYAML(nil, v, math.MaxInt)); got != text {
			t.Errorf("appendYAML(%v) = %q, want %q", v, got, text)
		}
	}
	if got := string(appendYAML(nil, map[string]any{"old": []any{int64(1), int64(2)}, "m": map[string]any{"k": "v"}}, math.MaxInt)); got != "m:\n  k: v\nold:\n- 1\n- 2\n" {
		t.Errorf("PyYAML's layout: %q", got)
	}
}

// canonical is v as JSON, numbers by value (1.0e+300 and 1e+300 alike).
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var decoded any
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(decoded); err != nil {
		t.Fatal(err)
	}
	return string(b)
}
