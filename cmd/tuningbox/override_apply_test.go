package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/overridesapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/overrides"
)

// recordingSource serves fixed override data and records the level path it was asked for.
type recordingSource struct {
	env, resource string
	levels        []overrides.Level
}

func (s *recordingSource) EffectiveJSON(_ context.Context, env string, levels []overrides.Level, resource string) ([]byte, error) {
	s.env, s.levels, s.resource = env, levels, resource
	return []byte(`{"configuration": {"package": {"mc": {"ensure": "absent"}}}}`), nil
}

func runOverrideApply(t *testing.T, src *recordingSource, args ...string) (string, error) {
	t.Helper()
	router := routes.NewRouter(1 << 20)
	overridesapi.Register(router, overrides.NewService(src))
	srv := httptest.NewServer(httpapi.Wrap(router, httpapi.Options{}))
	t.Cleanup(srv.Close)
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(append([]string{"--url", srv.URL, "override", "apply"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const cliCatalog = `[{"type": "package", "title": "mc", "parameters": {"ensure": "installed"}}]`

func TestOverrideApplyWithDataFile(t *testing.T) {
	catalog := writeFile(t, "catalog.json", cliCatalog)
	data := writeFile(t, "node.yaml", `
configuration:
  package:
    mc:
      ensure: absent
  service:
    httpd:
      require: Package[mc]
configuration_options:
  create: true
`)
	out, err := runOverrideApply(t, &recordingSource{}, "--catalog", catalog, "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	var got overrides.Result
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not {catalog, report}: %v\n%s", err, out)
	}
	want := []overrides.Resource{
		{Type: "package", Title: "mc", Parameters: map[string]any{"ensure": "absent"}},
		{Type: "service", Title: "httpd", Parameters: map[string]any{"require": []any{"Package[mc]"}}},
	}
	if !reflect.DeepEqual(got.Catalog, want) || len(got.Report.Updated) != 1 || len(got.Report.Created) != 1 {
		t.Errorf("output = %s", out)
	}
}

func TestOverrideApplyFromConfigDB(t *testing.T) {
	src := &recordingSource{}
	catalog := writeFile(t, "catalog.json", cliCatalog)
	_, err := runOverrideApply(t, src, "--catalog", catalog, "--env", "1",
		"--level", "role=compute/large,nodes=7", "--resource", "override/configuration")
	if err != nil {
		t.Fatal(err)
	}
	wantLevels := []overrides.Level{{Name: "role", Value: "compute/large"}, {Name: "nodes", Value: "7"}}
	if src.env != "1" || src.resource != "override/configuration" || !reflect.DeepEqual(src.levels, wantLevels) {
		t.Errorf("server asked for env %q levels %v resource %q", src.env, src.levels, src.resource)
	}
}

func TestOverrideApplyErrors(t *testing.T) {
	catalog := writeFile(t, "catalog.json", cliCatalog)
	data := writeFile(t, "data.json", `{"configuration": {"file": {"a": {"notify": "File[b]"}, "b": {"notify": "File[a]"}}}, "configuration_options": {"create": true}}`)
	tests := []struct {
		name      string
		args      []string
		wantUsage bool
		wantMsg   string
	}{
		{"no catalog", []string{"--data", data}, true, "--catalog is required"},
		{"no data source", []string{"--catalog", catalog}, true, "give either --data FILE or --env"},
		{"both data and env", []string{"--catalog", catalog, "--data", data, "--env", "1", "--resource", "r"}, true, "give either --data FILE or --env"},
		{"env without resource", []string{"--catalog", catalog, "--env", "1"}, true, "--env and --resource are both required"},
		{"bad level", []string{"--catalog", catalog, "--env", "1", "--resource", "r", "--level", "nodes"}, true, `--level "nodes": want name=value`},
		{"unreadable data", []string{"--catalog", catalog, "--data", writeFile(t, "bad.yaml", "a: [")}, true, "is neither JSON nor YAML"},
		{"the API's error", []string{"--catalog", catalog, "--data", data}, false, "dependency cycle: File[a] -> File[b] -> File[a]"},
		{"a type missing from --known-types", []string{"--catalog", catalog, "--data", data, "--known-types", "package,service"}, false,
			"File[a]: unknown resource type file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runOverrideApply(t, &recordingSource{}, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantMsg)
			}
			if isUsage := errors.As(err, new(*usageError)); isUsage != tt.wantUsage {
				t.Errorf("usage error = %v, want %v", isUsage, tt.wantUsage)
			}
		})
	}
}
