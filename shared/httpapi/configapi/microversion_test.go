package configapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/ident"
)

func TestUUIDIdentities(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	a.put(node1+"/resources/override/plugins/values", `{"a":1}`)
	v12 := []string{"OpenStack-API-Version", "config 1.2"}

	// Before 1.2: integer ids, the UUID alongside.
	var legacy struct {
		ID              int    `json:"id"`
		UUID            string `json:"uuid"`
		Components      []int  `json:"components"`
		HierarchyLevels []string
	}
	a.must(http.StatusOK, "GET", env1, "").json(t, &legacy)
	if legacy.ID != 1 || !ident.IsUUID(legacy.UUID) || len(legacy.Components) != 1 {
		t.Fatalf("1.0 environment: %+v", legacy)
	}

	// From 1.2: every id is the UUID, and there is no separate uuid field.
	var env struct {
		ID         string   `json:"id"`
		UUID       *string  `json:"uuid"`
		Components []string `json:"components"`
	}
	a.must(http.StatusOK, "GET", "/environments/"+legacy.UUID, "", v12...).json(t, &env)
	if env.ID != legacy.UUID || env.UUID != nil || len(env.Components) != 1 || !ident.IsUUID(env.Components[0]) {
		t.Fatalf("1.2 environment: %+v", env)
	}
	var comp struct {
		ID                  string `json:"id"`
		ResourceDefinitions []struct {
			ID          string `json:"id"`
			ComponentID string `json:"component_id"`
		} `json:"resource_definitions"`
	}
	a.must(http.StatusOK, "GET", "/components/"+env.Components[0], "", v12...).json(t, &comp)
	if comp.ID != env.Components[0] || comp.ResourceDefinitions[0].ComponentID != comp.ID || !ident.IsUUID(comp.ResourceDefinitions[0].ID) {
		t.Fatalf("1.2 component: %+v", comp)
	}
	var levels []struct {
		ID            string  `json:"id"`
		EnvironmentID string  `json:"environment_id"`
		Parent        *string `json:"parent"`
	}
	a.must(http.StatusOK, "GET", "/environments/"+env.ID+"/hierarchy_levels", "", v12...).json(t, &levels)
	if len(levels) != 2 || levels[0].EnvironmentID != env.ID || levels[1].Parent == nil || *levels[1].Parent != levels[0].ID {
		t.Fatalf("1.2 levels: %+v", levels)
	}
	created := a.must(http.StatusCreated, "POST", "/environments", `{"components":["`+comp.ID+`"],"hierarchy_levels":[]}`, v12...)
	if !strings.Contains(created.header.Get("Location"), "/environments/") || !ident.IsUUID(quoteField(created.String(), "id")[1:37]) {
		t.Fatalf("1.2 create: %s (Location %s)", created, created.header.Get("Location"))
	}

	// Path ids must be UUIDs from 1.2; names stay allowed where entities have them.
	defUUID := comp.ResourceDefinitions[2].ID
	envPath := "/environments/" + env.ID + "/role/controller/nodes/node-1/resources/"
	for _, p := range []string{
		envPath + "override/plugins/values",
		envPath + defUUID + "/values",
		"/components/fuel",
		"/resource_definitions/override/plugins",
		"/resource_definitions/" + defUUID,
		"/environments/" + env.ID + "/hierarchy_levels/nodes",
		"/environments/" + env.ID + "/hierarchy_levels/" + levels[1].ID,
	} {
		a.must(http.StatusOK, "GET", p, "", v12...)
	}
	for _, p := range []string{
		"/environments/1",
		"/environments/1/resources/astute/values",
		envPath + "3/values",
		"/components/1",
		"/resource_definitions/3",
		"/environments/" + env.ID + "/hierarchy_levels/2",
		"/environments/prod",
	} {
		r := a.must(http.StatusBadRequest, "GET", p, "", v12...)
		if msg := r.errorMessage(t); !strings.HasPrefix(msg, "Invalid uuid ") {
			t.Errorf("GET %s: %q", p, msg)
		}
	}
	// Ids in bodies follow the same rule (spec 004); names stay allowed where entities have them.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/environments", `{"components":[1],"hierarchy_levels":[]}`},
		{"POST", "/environments", `{"components":["1"],"hierarchy_levels":[]}`},
		{"PUT", "/environments/" + env.ID, `{"components":[1]}`},
		{"POST", "/resource_definitions", `{"name":"extra","component_id":1}`},
		{"PATCH", "/resource_definitions/" + defUUID, `{"component_id":1}`},
		{"PATCH", "/components/fuel", `{"resource_definitions":[{"id":3}]}`},
	} {
		r := a.must(http.StatusBadRequest, c.method, c.path, c.body, v12...)
		if msg := r.errorMessage(t); !strings.Contains(msg, "Invalid uuid 1") && !strings.Contains(msg, "Invalid uuid 3") {
			t.Errorf("%s %s %s at 1.2: %q", c.method, c.path, c.body, msg)
		}
	}
	a.must(http.StatusCreated, "POST", "/environments", `{"components":["fuel","`+comp.ID+`"],"hierarchy_levels":[]}`, v12...)
	a.must(http.StatusBadRequest, "GET", "/resource_definitions?component_id=1", "", v12...)
	a.must(http.StatusOK, "GET", "/resource_definitions?component_id="+comp.ID, "", v12...)
	a.must(http.StatusOK, "GET", "/resource_definitions?component_id=fuel", "", v12...)
	a.must(http.StatusBadRequest, "DELETE", "/components/1", "", v12...)
	a.must(http.StatusBadRequest, "PUT", "/environments/1/resources/astute/values", `{"a":1}`, v12...)

	// Below 1.2 both integer ids and UUIDs work.
	for _, p := range []string{envPath + "3/values", "/environments/1/role/controller/nodes/node-1/resources/" + defUUID + "/values", "/components/" + comp.ID} {
		a.must(http.StatusOK, "GET", p, "")
	}
	// An unsupported version is refused by the shared middleware.
	a.must(http.StatusNotAcceptable, "GET", env1, "", "OpenStack-API-Version", "config 9.9")
}

// TestHieraRead is what stock hiera_http sends (GET, Accept */*, no body, Connection: close):
// a JSON object per node with names containing "/", 404 for an unknown resource
// (ignore_404), {} where nothing is stored, and 304 for a repeated compile.
func TestHieraRead(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	a.must(http.StatusCreated, "POST", "/environments", `{"id":2,"components":["fuel"],"hierarchy_levels":["nodes"]}`)
	a.put("/environments/2/resources/astute/values", `{"deployment_id":1,"nested":{"a":[1,2]},"nothing":null}`)
	a.put("/environments/2/nodes/node-1.domain.tld/resources/astute/values", `{"fqdn":"node-1.domain.tld"}`)
	a.put("/environments/2/nodes/node-1.domain.tld/resources/override/plugins/values", `{"p":true}`)
	hiera := []string{"Accept", "*/*", "User-Agent", "Ruby", "Connection", "close"}
	base := "/environments/2/nodes/node-1.domain.tld/resources/"

	r := a.must(http.StatusOK, "GET", base+"astute/values?effective", "", hiera...)
	expectJSON(t, "astute", r.String(), `{"deployment_id":1,"fqdn":"node-1.domain.tld","nested":{"a":[1,2]},"nothing":null}`)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	a.must(http.StatusNotModified, "GET", base+"astute/values?effective", "", append(hiera, "If-None-Match", r.header.Get("ETag"))...)
	expectJSON(t, "override/plugins", a.get(base+"override/plugins/values?effective", hiera...), `{"p":true}`)
	// A resource the environment has but with nothing at this node or above: an empty object, so every key is "not found".
	expectJSON(t, "globals", a.get(base+"globals/values?effective", hiera...), `{}`)
	// A node never seen reads the levels above it.
	expectJSON(t, "new node", a.get("/environments/2/nodes/new.domain.tld/resources/astute/values?effective", hiera...),
		`{"deployment_id":1,"nested":{"a":[1,2]},"nothing":null}`)
	a.must(http.StatusNotFound, "GET", base+"no-such-source/values?effective", "", hiera...)
	a.must(http.StatusNotFound, "GET", "/environments/3/nodes/x/resources/astute/values?effective", "", hiera...)
}

// keys/set at each microversion: up to 1.3 a missing object on a key's path is
// tuning-box's 409 and nothing is stored; from 1.4 the missing objects are
// created. The same holds for a resource definition's content and for a dry
// run (which exists from 1.3); a path through existing objects works at every version.
func TestKeysSetCreatesThePathFrom14(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	env, _, _ := a.envPaths() // by UUID, which every version takes
	doc := env + "/resources/astute/values"
	a.put(doc, `{"present":{}}`)
	const definition = "/resource_definitions/pinned"
	a.must(http.StatusCreated, "POST", "/resource_definitions", `{"name":"pinned","content":{"present":{}}}`)
	for v := httpapi.MinVersion; !httpapi.MaxVersion.Less(v); v.Minor++ {
		at := []string{"OpenStack-API-Version", "config " + v.String()}
		key := "v" + strings.ReplaceAll(v.String(), ".", "_")
		missing := `[["missing_` + key + `","x",1]]`
		creates := v.AtLeast(httpapi.V1_4)
		for _, target := range []string{doc, definition} {
			before := a.get(target, at...)
			if creates {
				a.must(http.StatusNoContent, "PATCH", target+"/keys/set", missing, at...)
				if got := a.get(target, at...); !strings.Contains(got, `"missing_`+key+`":{"x":1}`) {
					t.Errorf("%s at %s: missing objects not created: %s", target, v, got)
				}
			} else {
				msg := a.must(http.StatusConflict, "PATCH", target+"/keys/set", missing, at...).errorMessage(t)
				if want := "Keys path missing_" + key + ".x doesn't exist"; !strings.HasPrefix(msg, want) {
					t.Errorf("%s at %s: %q, want %q", target, v, msg, want)
				}
				if after := a.get(target, at...); after != before {
					t.Errorf("%s at %s: a refused batch changed it: %s, was %s", target, v, after, before)
				}
			}
			a.must(http.StatusNoContent, "PATCH", target+"/keys/set", `[["present","`+key+`",1]]`, at...)
		}
		if v.AtLeast(httpapi.V1_3) {
			want := http.StatusConflict
			if creates {
				want = http.StatusOK
			}
			a.must(want, "PATCH", doc+"/keys/set?dry_run=true", `[["dry_`+key+`","x",1]]`, at...)
		}
	}
}
