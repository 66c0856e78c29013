package overridesapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
	"github.com/tuningbox/tuningbox/shared/overrides"
)

// fakeSource serves one effective document and records what it was asked for.
type fakeSource struct {
	doc      string
	err      error
	env      string
	levels   []overrides.Level
	resource string
}

func (f *fakeSource) EffectiveJSON(_ context.Context, env string, levels []overrides.Level, resource string) ([]byte, error) {
	f.env, f.levels, f.resource = env, levels, resource
	return []byte(f.doc), f.err
}

func newServer(t *testing.T, src *fakeSource) *httptest.Server {
	t.Helper()
	router := routes.NewRouter(1 << 20)
	Register(router, overrides.NewService(src))
	srv := httptest.NewServer(routestest.Validating(t, httpapi.Wrap(router, httpapi.Options{})))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, srv *httptest.Server, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(srv.URL+"/api/v1/config/overrides/apply", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("response is not a JSON object: %v", err)
	}
	return resp.StatusCode, out
}

func errorMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

const reportCatalog = `[{"type": "package", "title": "mc", "parameters": {"ensure": "installed"}}]`

func TestApplyInlineData(t *testing.T) {
	srv := newServer(t, &fakeSource{})
	status, body := post(t, srv, `{"catalog": `+reportCatalog+`,
	  "data": {"configuration": {"package": {"mc": {"ensure": "absent"}}, "service": {"httpd": {"require": "Package[mc]"}}},
	           "configuration_options": {"create": true}}}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, body)
	}
	var want map[string]any
	_ = json.Unmarshal([]byte(`{
	  "catalog": [{"type": "package", "title": "mc", "parameters": {"ensure": "absent"}},
	              {"type": "service", "title": "httpd", "parameters": {"require": ["Package[mc]"]}}],
	  "report": {"updated": [{"type": "package", "title": "mc", "parameters": ["ensure"], "reason": "found in the catalog"}],
	             "created": [{"type": "service", "title": "httpd", "parameters": ["require"], "reason": "create is true"}],
	             "skipped": [], "unchecked_types": ["service"]}}`), &want)
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %v\nwant %v", body, want)
	}
}

func TestApplyFromConfigDB(t *testing.T) {
	tests := []struct {
		name       string
		source     string
		wantEnv    string
		wantLevels []overrides.Level
	}{
		{"levels as an object keep their order", `{"env": 9, "levels": {"role": "compute", "nodes": 3}, "resource": "override-configuration"}`,
			"9", []overrides.Level{{Name: "role", Value: "compute"}, {Name: "nodes", Value: "3"}}},
		{"levels as a path with escaped values", `{"env": "9", "levels": "/role/compute/nodes/node%2F1.example/", "resource": "override-configuration"}`,
			"9", []overrides.Level{{Name: "role", Value: "compute"}, {Name: "nodes", Value: "node/1.example"}}},
		{"no levels is the global level", `{"env": "0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2c", "resource": "override-configuration"}`,
			"0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2c", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{doc: `{"configuration": {"package": {"mc": {"ensure": "absent"}}}}`}
			status, body := post(t, newServer(t, src), `{"catalog": `+reportCatalog+`, "source": `+tt.source+`}`)
			if status != http.StatusOK {
				t.Fatalf("status %d: %v", status, body)
			}
			if src.env != tt.wantEnv || src.resource != "override-configuration" || !reflect.DeepEqual(src.levels, tt.wantLevels) {
				t.Errorf("source asked for env %q levels %v resource %q", src.env, src.levels, src.resource)
			}
			catalog := body["catalog"].([]any)
			if got := catalog[0].(map[string]any)["parameters"].(map[string]any)["ensure"]; got != "absent" {
				t.Errorf("ensure = %v, want absent", got)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name       string
		src        fakeSource
		body       string
		wantStatus int
		wantMsg    string
	}{
		{"malformed inline data names the path", fakeSource{},
			`{"catalog": [], "data": {"configuration": {"package": {"mc": "absent"}}}}`,
			400, "data.configuration.package.mc: parameters must be a map"},
		{"configuration not a map", fakeSource{},
			`{"catalog": [], "data": {"configuration": ["package"]}}`,
			400, "data.configuration: Configuration data should contain a resources hash!"},
		{"bad catalog element", fakeSource{},
			`{"catalog": [{"type": "package", "title": "mc", "parameters": "x"}], "data": {}}`,
			400, "catalog[0].parameters: must be a map"},
		{"dependency cycle", fakeSource{},
			`{"catalog": [], "data": {"configuration": {"file": {"a": {"notify": "File[b]"}, "b": {"notify": "File[a]"}}}, "configuration_options": {"create": true}}}`,
			400, "dependency cycle: File[a] -> File[b] -> File[a]; the catalog was left unchanged"},
		{"catalog missing", fakeSource{}, `{"data": {}}`,
			400, "catalog is required: a list of resources {type, title, parameters}"},
		{"neither data nor source", fakeSource{}, `{"catalog": []}`,
			400, "either data (override data) or source (a ConfigDB resource holding it) is required"},
		{"both data and source", fakeSource{}, `{"catalog": [], "data": {}, "source": {"env": 1, "resource": "r"}}`,
			400, "give either data or source, not both"},
		{"unknown field", fakeSource{}, `{"catalog": [], "overrides": {}}`,
			400, `unknown field "overrides"`},
		{"source without resource", fakeSource{}, `{"catalog": [], "source": {"env": 1}}`,
			400, "source.resource is required"},
		{"odd level path", fakeSource{}, `{"catalog": [], "source": {"env": 1, "levels": "nodes", "resource": "r"}}`,
			400, `invalid request body: source.levels path "nodes" is not name/value pairs`},
		{"empty level value", fakeSource{}, `{"catalog": [], "source": {"env": 1, "levels": {"nodes": ""}, "resource": "r"}}`,
			400, "source.levels[0]: a level needs a name and a value"},
		{"unknown environment", fakeSource{err: errs.NotFoundf("environment 7 not found")},
			`{"catalog": [], "source": {"env": 7, "resource": "r"}}`,
			404, "environment 7 not found"},
		{"unknown type among known_types", fakeSource{},
			`{"catalog": [], "known_types": ["file"], "data": {"configuration": {"no_such_type_xyz": {"x": {}}}}}`,
			400, "No_such_type_xyz[x]: unknown resource type no_such_type_xyz: it is not in the catalog nor among the known types; nothing was applied"},
		{"known_types not names", fakeSource{}, `{"catalog": [], "known_types": ["file", "a b"], "data": {}}`,
			400, `known_types[1]: "a b" is not a resource type name such as package`},
		{"malformed stored values", fakeSource{doc: `{"configuration_options": {"defaults": []}}`},
			`{"catalog": [], "source": {"env": 7, "levels": {"nodes": "1"}, "resource": "override"}}`,
			400, `effective values of resource "override" in environment 7: configuration_options.defaults: Defaults data should contain a defaults hash!`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, newServer(t, &tt.src), tt.body)
			if status != tt.wantStatus || errorMessage(body) != tt.wantMsg {
				t.Errorf("got %d %q, want %d %q", status, errorMessage(body), tt.wantStatus, tt.wantMsg)
			}
		})
	}
}

func TestApplyIsPostOnly(t *testing.T) {
	srv := newServer(t, &fakeSource{})
	resp, err := http.Get(srv.URL + "/api/v1/config/overrides/apply")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET = %d Allow %q, want 405 Allow POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestApplyCreateTruthTable asks the API about a resource missing from the
// catalog for every combination of create (unset, true, false) and the two
// exception lists. Spec 001: create defaults to true; with create true the
// lists name what is not created (either suffices), with create false what is.
func TestApplyCreateTruthTable(t *testing.T) {
	tests := []struct {
		create                  string // "" = unset
		typeListed, titleListed bool
		wantCreated             bool
	}{
		{"", false, false, true}, {"", true, false, false}, {"", false, true, false}, {"", true, true, false},
		{"true", false, false, true}, {"true", true, false, false}, {"true", false, true, false}, {"true", true, true, false},
		{"false", false, false, false}, {"false", true, false, true}, {"false", false, true, true}, {"false", true, true, true},
	}
	srv := newServer(t, &fakeSource{})
	for _, tt := range tests {
		options := map[string]any{"types_create_exception": []string{"service"}, "titles_create_exception": []string{"other"}}
		if tt.create != "" {
			options["create"] = tt.create == "true"
		}
		if tt.typeListed {
			options["types_create_exception"] = []string{"service", "file"}
		}
		if tt.titleListed {
			options["titles_create_exception"] = []string{"other", "/etc/motd"}
		}
		body, _ := json.Marshal(map[string]any{
			"catalog":     []any{},
			"known_types": []string{"file"},
			"data": map[string]any{
				"configuration":         map[string]any{"file": map[string]any{"/etc/motd": map[string]any{"content": "hi"}}},
				"configuration_options": options,
			},
		})
		name := fmt.Sprintf("create=%s type_listed=%v title_listed=%v", cmp.Or(tt.create, "unset"), tt.typeListed, tt.titleListed)
		t.Run(name, func(t *testing.T) {
			status, out := post(t, srv, string(body))
			if status != http.StatusOK {
				t.Fatalf("status %d: %v", status, out)
			}
			report := out["report"].(map[string]any)
			created, skipped := len(report["created"].([]any)), len(report["skipped"].([]any))
			catalog := out["catalog"].([]any)
			if tt.wantCreated != (created == 1 && skipped == 0 && len(catalog) == 1) || !tt.wantCreated != (skipped == 1 && created == 0 && len(catalog) == 0) {
				t.Errorf("report %v, catalog %v; want created=%v", report, catalog, tt.wantCreated)
			}
		})
	}
}

// From microversion 1.2 on the source's environment is a UUID, as in paths (spec 004).
func TestApplySourceEnvAtV12(t *testing.T) {
	srv := newServer(t, &fakeSource{doc: `{}`})
	for env, want := range map[string]int{`9`: http.StatusBadRequest, `"9"`: http.StatusBadRequest, `"0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2c"`: http.StatusOK} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/config/overrides/apply",
			strings.NewReader(`{"catalog": [], "source": {"env": `+env+`, "resource": "override-configuration"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("OpenStack-API-Version", "config 1.2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want || want == http.StatusBadRequest && !strings.Contains(errorMessage(body), "source.env: Invalid uuid 9") {
			t.Errorf("env %s at 1.2: %d %v, want %d", env, resp.StatusCode, body, want)
		}
	}
}
