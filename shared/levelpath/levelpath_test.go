package levelpath

import (
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		path   string
		levels []Level
		rest   string
		err    string
	}{
		{"resources/astute/values", nil, "astute/values", ""},
		{"role/compute/nodes/node-1/resources/a/b/overrides/keys/set", []Level{{"role", "compute"}, {"nodes", "node-1"}}, "a/b/overrides/keys/set", ""},
		{"role/compute", nil, "", "expected .../resources/"},
		{"role", nil, "", `level "role" has no value`},
		{"role/resources/resources/x/values", []Level{{"role", "resources"}}, "x/values", ""},
	}
	for _, tc := range tests {
		levels, rest, err := Split(strings.Split(tc.path, "/"))
		if tc.err != "" {
			if !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Split(%q) = %v, want a NotFound %q", tc.path, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(levels, tc.levels) || strings.Join(rest, "/") != tc.rest {
			t.Errorf("Split(%q) = %v, %q, %v; want %v, %q", tc.path, levels, rest, err, tc.levels, tc.rest)
		}
	}
	for name, want := range map[string]bool{"nodes": true, "node": true, "Nodes": false, "role": false} {
		if IsNodeLevel(name) != want {
			t.Errorf("IsNodeLevel(%q) = %v", name, !want)
		}
	}
}
