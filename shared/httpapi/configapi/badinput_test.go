package configapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

func TestBadInput(t *testing.T) {
	a := newAPI(t, httpapi.Options{MaxBody: 1024})
	a.seed()
	doc := node1 + "/resources/astute/values"
	big := `{"x":"` + strings.Repeat("a", 2000) + `"}`
	tests := []struct {
		name        string
		method      string
		path        string
		body        string
		contentType string
		status      int
	}{
		{"malformed JSON document", "PUT", doc, `{"a":`, "", 400},
		{"document not an object", "PUT", doc, `[1,2]`, "", 400},
		{"document a string", "PUT", doc, `"x"`, "", 400},
		{"empty body", "PUT", doc, ` `, "", 400},
		{"trailing data", "PUT", doc, `{} {}`, "", 400},
		{"oversize document", "PUT", doc, big, "", 413},
		{"oversize component", "POST", "/components", `{"name":"` + strings.Repeat("a", 2000) + `"}`, "", 413},
		{"YAML content type", "PUT", doc, `{"a":1}`, "application/yaml", 415},
		{"text content type", "POST", "/components", `{"name":"x"}`, "text/plain", 415},
		{"component name of a wrong type", "POST", "/components", `{"name":5}`, "", 400},
		{"component without a name", "POST", "/components", `{}`, "", 400},
		{"unknown field", "POST", "/components", `{"name":"x","colour":"red"}`, "", 400},
		{"levels of a wrong type", "POST", "/environments", `{"components":[],"hierarchy_levels":"nodes"}`, "", 400},
		{"environment id of a wrong type", "POST", "/environments", `{"id":"one","components":[]}`, "", 400},
		{"negative environment id", "POST", "/environments", `{"id":-1,"components":[]}`, "", 400},
		{"environment id above 2^53-1", "POST", "/environments", `{"id":9007199254740992,"components":[]}`, "", 400},
		{"environment id of int64's maximum", "POST", "/environments", `{"id":9223372036854775807,"components":[]}`, "", 400},
		{"environment id beyond int64", "POST", "/environments", `{"id":9223372036854775808,"components":[]}`, "", 400},
		{"component ref of a wrong type", "POST", "/environments", `{"components":[true]}`, "", 400},
		{"keys body not a list", "PATCH", doc + "/keys/set", `{"a":1}`, "", 400},
		{"definition name ../x", "POST", "/resource_definitions", `{"name":"../x","component_id":1}`, "", 400},
		{"definition name with empty segment", "POST", "/resource_definitions", `{"name":"a//b","component_id":1}`, "", 400},
		{"definition name with a control character", "POST", "/resource_definitions", `{"name":"a\u0001b"}`, "", 400},
		{"definition name too long", "POST", "/resource_definitions", `{"name":"` + strings.Repeat("n", 256) + `"}`, "", 400},
		{"definition name like an id", "POST", "/resource_definitions", `{"name":"42"}`, "", 400},
		{"component name ..", "POST", "/components", `{"name":".."}`, "", 400},
		{"traversal in the resource name", "PUT", env1 + "/resources/../x/values", `{"a":1}`, "", 400},
		{"encoded traversal in the resource name", "PUT", env1 + "/resources/%2e%2e/values", `{"a":1}`, "", 400},
		{"encoded traversal in a level value", "PUT", env1 + "/role/%2E%2E/resources/astute/values", `{"a":1}`, "", 400},
		{"traversal into another environment", "PUT", "/environments/2/../1/resources/astute/values", `{"a":1}`, "", 400},
		{"encoded traversal in a definition path", "GET", "/resource_definitions/%2e%2e/astute", "", "", 400},
		{"unknown environment", "PUT", "/environments/7/resources/astute/values", `{"a":1}`, "", 404},
		{"unknown level", "PUT", env1 + "/rack/r1/resources/astute/values", `{"a":1}`, "", 404},
		{"too many levels", "PUT", node1 + "/x/y/resources/astute/values", `{"a":1}`, "", 404},
		{"unknown resource", "PUT", node1 + "/resources/nope/values", `{"a":1}`, "", 404},
		{"unknown kind", "PUT", node1 + "/resources/astute/valuez", `{"a":1}`, "", 404},
		{"environment by name", "GET", "/environments/prod", "", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if tt.contentType != "" {
				headers = []string{"Content-Type", tt.contentType}
			}
			r := a.do(tt.method, tt.path, tt.body, headers...)
			if r.status != tt.status {
				t.Fatalf("%s %s: %d, want %d (%s)", tt.method, tt.path, r.status, tt.status, r)
			}
			if r.errorMessage(t) == "" {
				t.Fatal("empty error message")
			}
		})
	}
	// Nothing was stored by any of them.
	for _, p := range []string{env1 + "/resources/astute", doc[:len(doc)-len("/values")], env1 + "/role/x/resources/astute"} {
		expectJSON(t, p, a.get(p+"/values/versions"), `[]`)
	}
	expectJSON(t, "effective", a.get(doc+"?effective"), `{}`)
	if got := a.get("/resource_definitions"); strings.Count(got, `"name"`) != 3 {
		t.Fatalf("definitions: %s", got)
	}
	if got := a.get("/components"); strings.Count(got, `"uuid"`) != 4 { // one component, three definitions
		t.Fatalf("components: %s", got)
	}
	expectJSON(t, "environments", a.get("/environments"), `[`+a.get(env1)+`]`)
	if got := a.get("/environments/1/hierarchy_levels"); strings.Contains(got, `"values":["`) {
		t.Fatalf("level values were recorded: %s", got)
	}
}

// Query parameters come from the route table: a dry run stays a dry run, and a
// misspelt or undeclared parameter is refused before anything is read or stored.
func TestUnknownQueryParameters(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	e, _, _ := a.envPaths() // by UUID, as microversion 1.3 wants
	doc := e + "/resources/astute/values"
	before := a.get(doc, v13...)
	a.must(http.StatusOK, "PUT", doc+"?dry_run=true", `{"dry":1}`, v13...)
	for _, tt := range []struct{ method, target, body, param string }{
		{"GET", doc + "?efective", "", "efective"},
		{"GET", doc + "?effective&explian", "", "explian"},
		{"PUT", doc + "?as_of=2026-01-01T00:00:00Z", `{"a":1}`, "as_of"},
		{"PUT", doc + "?dryrun=true", `{"a":1}`, "dryrun"},
		{"PATCH", doc + "/keys/set?effective", `[["a",1]]`, "effective"},
		{"GET", "/components?name=x", "", "name"},
		{"POST", "/diff?x=1", `{}`, "x"},
	} {
		msg := a.must(http.StatusBadRequest, tt.method, tt.target, tt.body, v13...).errorMessage(t)
		if !strings.Contains(msg, `unknown query parameter "`+tt.param+`"`) {
			t.Errorf("%s %s: %q", tt.method, tt.target, msg)
		}
	}
	if after := a.get(doc, v13...); after != before {
		t.Errorf("the document changed: %s, was %s", after, before)
	}
}

// Every query value is read by its declared type: a flag that is not a
// boolean is refused as ?fetch_related's always was, not read as true; so is
// a dry run whose flag says nothing, before anything is stored.
func TestQueryValuesByType(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	e, _, _ := a.envPaths()
	doc := e + "/resources/astute/values"
	before := a.get(doc, v13...)
	for _, tt := range []struct{ method, target, body, fault string }{
		{"GET", doc + "?effective=nonsense", "", `effective="nonsense": expected a boolean`},
		{"GET", doc + "?effective&show_lookup=maybe", "", `show_lookup="maybe": expected a boolean`},
		{"GET", doc + "?version=first", "", `version="first": expected a positive integer`},
		{"PUT", doc + "?dry_run=perhaps", `{"a":1}`, `dry_run="perhaps": expected a boolean`},
	} {
		msg := a.must(http.StatusBadRequest, tt.method, tt.target, tt.body, v13...).errorMessage(t)
		if !strings.Contains(msg, tt.fault) {
			t.Errorf("%s %s: %q, want %q", tt.method, tt.target, msg, tt.fault)
		}
	}
	expectJSON(t, "effective=0 is the raw document", a.get(doc+"?effective=0", v13...), before)
	expectJSON(t, "effective=yes", a.get(doc+"?effective=yes", v13...), a.get(doc+"?effective", v13...))
	if after := a.get(doc, v13...); after != before {
		t.Errorf("the document changed: %s, was %s", after, before)
	}
}
