package configapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

func TestComponents(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	var comp struct {
		ID                  int    `json:"id"`
		UUID                string `json:"uuid"`
		Name                string `json:"name"`
		ResourceDefinitions []struct {
			ID          int    `json:"id"`
			Name        string `json:"name"`
			ComponentID int    `json:"component_id"`
		} `json:"resource_definitions"`
	}
	r := a.must(http.StatusCreated, "POST", "/components",
		`{"name":"fuel","resource_definitions":[{"name":"astute","content":{"k":1}},{"name":"override/plugins"}]}`)
	r.json(t, &comp)
	if comp.ID != 1 || comp.UUID == "" || len(comp.ResourceDefinitions) != 2 || comp.ResourceDefinitions[1].Name != "override/plugins" || comp.ResourceDefinitions[1].ComponentID != 1 {
		t.Fatalf("created component: %s", r)
	}
	if loc := r.header.Get("Location"); loc != "/api/v1/config/components/1" {
		t.Errorf("Location %q", loc)
	}
	// The same component by id, UUID and name.
	for _, ref := range []string{"1", comp.UUID, "fuel"} {
		expectJSON(t, "component by "+ref, a.get("/components/"+ref), string(r.body))
	}
	a.must(http.StatusConflict, "POST", "/components", `{"name":"fuel"}`)
	a.must(http.StatusConflict, "POST", "/components", `{"name":"other","resource_definitions":[{"name":"x"},{"name":"x"}]}`)
	a.must(http.StatusNotFound, "GET", "/components/99", "")

	// Rename, and set exactly which definitions it has: astute stays, override/plugins is detached.
	a.must(http.StatusNoContent, "PUT", "/components/1", `{"name":"fuel2","resource_definitions":[{"id":1}]}`)
	got := a.get("/components/fuel2")
	if !strings.Contains(got, `"name":"fuel2"`) || strings.Contains(got, "override/plugins") {
		t.Fatalf("after update: %s", got)
	}
	a.must(http.StatusNotFound, "GET", "/components/fuel", "")
	unattached := a.get("/resource_definitions?component_id=")
	if !strings.Contains(unattached, `"name":"override/plugins"`) || !strings.Contains(unattached, `"component_id":null`) {
		t.Fatalf("unattached definitions: %s", unattached)
	}
	// Attach it again with PATCH.
	a.must(http.StatusNoContent, "PATCH", "/components/1", `{"resource_definitions":[{"id":1},{"id":2}]}`)
	if got := a.get("/resource_definitions?component_id=1"); strings.Count(got, `"component_id":1`) != 2 {
		t.Fatalf("definitions of component 1: %s", got)
	}
	expectJSON(t, "no unattached definitions left", a.get("/resource_definitions?component_id="), `[]`)

	// Delete cascades to the definitions; ids are never reused.
	a.must(http.StatusNoContent, "DELETE", "/components/1", "")
	expectJSON(t, "definitions after delete", a.get("/resource_definitions"), `[]`)
	expectJSON(t, "components after delete", a.get("/components"), `[]`)
	var again struct {
		ID                  int `json:"id"`
		ResourceDefinitions []struct {
			ID int `json:"id"`
		} `json:"resource_definitions"`
	}
	a.must(http.StatusCreated, "POST", "/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`).json(t, &again)
	// (Ids of failed creates are skipped too, so only "greater" is certain.)
	if again.ID <= 1 || again.ResourceDefinitions[0].ID <= 2 {
		t.Fatalf("ids after delete: component %d, definition %d; want ids never used before", again.ID, again.ResourceDefinitions[0].ID)
	}
}

func TestResourceDefinitions(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.must(http.StatusCreated, "POST", "/components", `{"name":"fuel"}`)
	r := a.must(http.StatusCreated, "POST", "/resource_definitions", `{"name":"override/node","component_id":1,"content":{"a":{"b":1},"l":[1,2]}}`)
	expectJSON(t, "created", r.String(), `{"id":1,"uuid":`+quoteField(r.String(), "uuid")+`,"name":"override/node","component_id":1,"content":{"a":{"b":1},"l":[1,2]}}`)
	a.must(http.StatusCreated, "POST", "/resource_definitions", `{"name":"free"}`)
	a.must(http.StatusConflict, "POST", "/resource_definitions", `{"name":"override/node","component_id":1}`)
	a.must(http.StatusNotFound, "POST", "/resource_definitions", `{"name":"x","component_id":9}`)

	// Addressed by id, UUID or name (with "/").
	for _, ref := range []string{"1", quoteField(r.String(), "uuid")[1:37], "override/node"} {
		if got := a.get("/resource_definitions/" + ref); !strings.Contains(got, `"name":"override/node"`) {
			t.Fatalf("definition by %s: %s", ref, got)
		}
	}
	// keys/set and keys/delete edit the content, all or nothing.
	a.must(http.StatusNoContent, "PATCH", "/resource_definitions/override/node/keys/set", `[["a","b",2],["a","c","new"]]`)
	a.must(http.StatusNoContent, "PATCH", "/resource_definitions/1/keys/delete", `[["l","0"]]`)
	a.must(http.StatusConflict, "PATCH", "/resource_definitions/1/keys/set", `[["a","z",1],["a","b","x",1]]`) // through a number: nothing applied
	a.must(http.StatusConflict, "PATCH", "/resource_definitions/1/keys/delete", `[["nope"]]`)
	if got := a.get("/resource_definitions/1"); !strings.Contains(got, `"content":{"a":{"b":2,"c":"new"},"l":[2]}`) {
		t.Fatalf("content after keys: %s", got)
	}
	// Partial update: rename, detach, replace content.
	a.must(http.StatusNoContent, "PATCH", "/resource_definitions/1", `{"name":"renamed","component_id":null,"content":[1]}`)
	expectJSON(t, "unattached", a.get("/resource_definitions?component_id="),
		`[{"id":1,"uuid":`+quoteField(r.String(), "uuid")+`,"name":"renamed","component_id":null,"content":[1]},`+
			`{"id":2,"uuid":`+quoteField(a.get("/resource_definitions/2"), "uuid")+`,"name":"free","component_id":null,"content":{}}]`)
	a.must(http.StatusConflict, "PUT", "/resource_definitions/2", `{"name":"renamed"}`)
	a.must(http.StatusNoContent, "DELETE", "/resource_definitions/renamed", "")
	a.must(http.StatusNotFound, "GET", "/resource_definitions/1", "")
	a.must(http.StatusNotFound, "DELETE", "/resource_definitions/1", "")
}

// quoteField returns the JSON-quoted string value of a top-level field of body.
func quoteField(body, field string) string {
	i := strings.Index(body, `"`+field+`":"`)
	if i < 0 {
		return `""`
	}
	rest := body[i+len(field)+3:]
	return rest[:strings.Index(rest[1:], `"`)+2]
}

func TestEnvironments(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.must(http.StatusCreated, "POST", "/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`)
	a.must(http.StatusCreated, "POST", "/components", `{"name":"other"}`)

	// Client-chosen id, components by name and by id.
	r := a.must(http.StatusCreated, "POST", "/environments", `{"id":9,"components":["fuel",2],"hierarchy_levels":["role","nodes"]}`)
	expectJSON(t, "created", r.String(), `{"id":9,"uuid":`+quoteField(r.String(), "uuid")+`,"components":[1,2],"hierarchy_levels":["role","nodes"]}`)
	envUUID := quoteField(r.String(), "uuid")[1:37]
	a.must(http.StatusConflict, "POST", "/environments", `{"id":9,"components":[],"hierarchy_levels":[]}`)
	// A generated id never collides with a chosen one.
	var gen struct{ ID int }
	a.must(http.StatusCreated, "POST", "/environments", `{"components":[1],"hierarchy_levels":["nodes"]}`).json(t, &gen)
	if gen.ID != 10 {
		t.Fatalf("generated id %d, want 10", gen.ID)
	}
	a.must(http.StatusNotFound, "POST", "/environments", `{"components":["nope"],"hierarchy_levels":[]}`)
	a.must(http.StatusConflict, "POST", "/environments", `{"components":[],"hierarchy_levels":["a","a"]}`)
	a.must(http.StatusBadRequest, "POST", "/environments", `{"components":[],"hierarchy_levels":["resources"]}`)

	expectJSON(t, "by uuid", a.get("/environments/"+envUUID), r.String())
	if got := a.get("/environments"); strings.Count(got, `"hierarchy_levels"`) != 2 {
		t.Fatalf("list: %s", got)
	}

	// Hierarchy levels: list, show by id, UUID and name, rename.
	a.put("/environments/9/role/controller/nodes/node-1/resources/astute/values", `{"a":1}`)
	var levels []struct {
		ID            int      `json:"id"`
		UUID          string   `json:"uuid"`
		Name          string   `json:"name"`
		EnvironmentID int      `json:"environment_id"`
		Parent        *int     `json:"parent"`
		Values        []string `json:"values"`
	}
	a.must(http.StatusOK, "GET", "/environments/9/hierarchy_levels", "").json(t, &levels)
	if len(levels) != 2 || levels[0].Name != "role" || levels[0].Parent != nil || levels[1].Parent == nil || *levels[1].Parent != levels[0].ID ||
		levels[1].EnvironmentID != 9 || len(levels[1].Values) != 1 || levels[1].Values[0] != "node-1" {
		t.Fatalf("levels: %+v", levels)
	}
	for _, ref := range []string{"nodes", levels[1].UUID, strconv.Itoa(levels[1].ID)} {
		if got := a.get("/environments/9/hierarchy_levels/" + ref); !strings.Contains(got, `"name":"nodes"`) {
			t.Fatalf("level %s: %s", ref, got)
		}
	}
	a.must(http.StatusNotFound, "GET", "/environments/9/hierarchy_levels/nope", "")
	a.must(http.StatusNoContent, "PUT", "/environments/9/hierarchy_levels/nodes", `{"name":"node"}`)
	a.must(http.StatusConflict, "PUT", "/environments/9/hierarchy_levels/node", `{"name":"role"}`)
	// Renaming moved nothing: the document is still there under the new name.
	expectJSON(t, "after rename", a.get("/environments/9/role/controller/node/node-1/resources/astute/values"), `{"a":1}`)

	// Levels with documents cannot move; new levels may be added after them.
	a.must(http.StatusConflict, "PATCH", "/environments/9", `{"hierarchy_levels":["node","role"]}`)
	a.must(http.StatusNoContent, "PATCH", "/environments/9", `{"hierarchy_levels":["role","node","extra"]}`)
	a.must(http.StatusNoContent, "PUT", "/environments/9", `{"components":[1]}`)
	expectJSON(t, "updated", a.get("/environments/9"), `{"id":9,"uuid":"`+envUUID+`","components":[1],"hierarchy_levels":["role","node","extra"]}`)

	// Deleting retires the id: it cannot be chosen again, so old documents never reappear.
	a.must(http.StatusNoContent, "DELETE", "/environments/9", "")
	a.must(http.StatusNotFound, "GET", "/environments/9", "")
	a.must(http.StatusNotFound, "GET", "/environments/9/resources/astute/values", "")
	a.must(http.StatusConflict, "POST", "/environments", `{"id":9,"components":[1],"hierarchy_levels":[]}`)
}

// TestLargestChosenEnvironmentID: an environment id a client chooses is at
// most 2^31-1 (Nailgun's cluster ids); after the largest, deleted, generated
// ids go on (they are never exhausted, and never reuse it).
func TestLargestChosenEnvironmentID(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	for _, id := range []string{"2147483648", "9007199254740991"} {
		if r := a.must(http.StatusBadRequest, "POST", "/environments", `{"id":`+id+`,"components":[],"hierarchy_levels":[]}`); !strings.Contains(r.String(), "from 1 to 2147483647") {
			t.Fatalf("id %s: %s", id, r)
		}
	}
	a.must(http.StatusCreated, "POST", "/environments", `{"id":2147483647,"components":[],"hierarchy_levels":[]}`)
	a.must(http.StatusNoContent, "DELETE", "/environments/2147483647", "")
	a.must(http.StatusConflict, "POST", "/environments", `{"id":2147483647,"components":[],"hierarchy_levels":[]}`)
	for i := range 3 {
		var gen struct{ ID int64 }
		a.must(http.StatusCreated, "POST", "/environments", `{"components":[],"hierarchy_levels":[]}`).json(t, &gen)
		if gen.ID != 1<<31+int64(i) {
			t.Fatalf("generated id %d after the largest chosen one, want %d", gen.ID, 1<<31+int64(i))
		}
	}
}
