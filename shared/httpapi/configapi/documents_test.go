package configapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

const (
	env1       = "/environments/1"
	controller = env1 + "/role/controller"
	node1      = controller + "/nodes/node-1"
	node2      = controller + "/nodes/node-2"
)

func TestLevelsInURL(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	a.put(env1+"/resources/astute/values", `{"g":1}`)
	tests := []struct {
		path    string
		status  int
		message string
	}{
		{env1 + "/resources/astute/values", http.StatusOK, ""},
		{controller + "/resources/astute/values?effective", http.StatusOK, ""},
		{node1 + "/resources/astute/values?effective", http.StatusOK, ""},
		{env1 + "/nodes/node-1/resources/astute/values", http.StatusNotFound, "Unexpected level name 'nodes'. Expected 'role'."},
		{controller + "/rack/r1/resources/astute/values", http.StatusNotFound, "Unexpected level name 'rack'. Expected 'nodes'."},
		{node1 + "/extra/x/resources/astute/values", http.StatusNotFound, ""},
		{env1 + "/role/resources/astute/values", http.StatusNotFound, ""},
		{env1 + "/resources/unknown/values", http.StatusNotFound, ""},
		{"/environments/2/resources/astute/values", http.StatusNotFound, ""},
		{env1 + "/resources/astute/nothing", http.StatusNotFound, ""},
		{env1 + "/resources/values", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		r := a.do("GET", tt.path, "")
		if r.status != tt.status {
			t.Errorf("GET %s: %d, want %d (%s)", tt.path, r.status, tt.status, r)
			continue
		}
		if tt.status != http.StatusOK {
			if msg := r.errorMessage(t); tt.message != "" && msg != tt.message {
				t.Errorf("GET %s: message %q, want %q", tt.path, msg, tt.message)
			}
		}
	}
	// A GET never creates the level value it names.
	expectJSON(t, "level values", a.get("/environments/1/hierarchy_levels/nodes"), a.get("/environments/1/hierarchy_levels/nodes"))
	if got := a.get("/environments/1/hierarchy_levels"); strings.Contains(got, "node-1") || strings.Contains(got, "controller") {
		t.Fatalf("GETs created level values: %s", got)
	}
}

func TestPrecedenceAndIsolation(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	a.put(env1+"/resources/astute/values", `{"a":"global","b":{"x":1,"y":2},"c":"global","d":"global","e":"global"}`)
	a.put(env1+"/resources/astute/overrides", `{"c":"global-override","d":"global-override"}`)
	a.put(controller+"/resources/astute/values", `{"d":"role","e":"role"}`)
	a.put(controller+"/resources/astute/override", `{"e":"role-override"}`) // the spec's spelling
	a.put(node1+"/resources/astute/values", `{"b":{"x":10},"n":1}`)
	a.put(node2+"/resources/astute/values", `{"a":"node-2","only2":true}`)
	a.put(env1+"/role/compute/resources/astute/values", `{"a":"compute"}`)

	// Shallow merge; override beats values of its own level and above; deeper values beat shallower overrides.
	expectJSON(t, "node-1 effective", a.get(node1+"/resources/astute/values?effective"),
		`{"a":"global","b":{"x":10},"c":"global-override","d":"role","e":"role-override","n":1}`)
	// Siblings never leak into each other.
	expectJSON(t, "node-2 effective", a.get(node2+"/resources/astute/values?effective"),
		`{"a":"node-2","b":{"x":1,"y":2},"c":"global-override","d":"role","e":"role-override","only2":true}`)
	expectJSON(t, "compute effective", a.get(env1+"/role/compute/resources/astute/values?effective"),
		`{"a":"compute","b":{"x":1,"y":2},"c":"global-override","d":"global-override","e":"global"}`)
	// Without effective: just that level's values, overrides never mixed in; {} where nothing is stored.
	expectJSON(t, "controller values", a.get(controller+"/resources/astute/values"), `{"d":"role","e":"role"}`)
	expectJSON(t, "controller overrides", a.get(controller+"/resources/astute/overrides"), `{"e":"role-override"}`)
	expectJSON(t, "empty level", a.get(env1+"/role/compute/nodes/x/resources/astute/values"), `{}`)
	// The same answer from the overrides URL with effective.
	expectJSON(t, "effective via overrides", a.get(node1+"/resources/astute/overrides?effective"), a.get(node1+"/resources/astute/values?effective"))

	// show_lookup: where each key was last set.
	expectJSON(t, "show_lookup", a.get(node1+"/resources/astute/values?effective&show_lookup"),
		`{"a":["global","/"],"b":[{"x":10},"/role/controller/nodes/node-1/"],"c":["global-override","/"],`+
			`"d":["role","/role/controller/"],"e":["role-override","/role/controller/"],"n":[1,"/role/controller/nodes/node-1/"]}`)
	if msg := a.must(http.StatusConflict, "GET", node1+"/resources/astute/values?show_lookup", "").errorMessage(t); msg == "" {
		t.Fatal("show_lookup without effective: empty message")
	}

	// Key paths, with effective, show_lookup and list indexes.
	a.put(env1+"/resources/globals/values", `{"ntp":{"servers":["0.pool","1.pool"]},"n":1.50}`)
	keyTests := []struct {
		query  string
		status int
		want   string
	}{
		{"?effective&key=ntp.servers.1", 200, `"1.pool"`},
		{"?effective&key=ntp", 200, `{"servers":["0.pool","1.pool"]}`},
		{"?effective&key=n", 200, `1.50`},
		{"?effective&key=ntp.servers.1&show_lookup", 200, `["1.pool","/"]`},
		{"?key=ntp.servers.0", 409, ""}, // node-1's own globals values are empty
		{"?effective&key=ntp.servers.2", 409, ""},
		{"?effective&key=missing", 409, ""},
		{"?effective&key=n.x", 409, ""},
	}
	expectJSON(t, "key without effective", a.get(env1+"/resources/globals/values?key=ntp.servers.0"), `"0.pool"`)
	for _, kt := range keyTests {
		r := a.must(kt.status, "GET", node1+"/resources/globals/values"+kt.query, "")
		if kt.status == 200 {
			expectJSON(t, kt.query, r.String(), kt.want)
		} else if msg := r.errorMessage(t); msg != "Keys path doesn't exist" {
			t.Errorf("%s: message %q", kt.query, msg)
		}
	}
}

func TestKeysSetDelete(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	doc := node1 + "/resources/astute/values"
	// Nothing stored at that level: 404, for set and delete, values and overrides.
	for _, p := range []string{doc + "/keys/set", doc + "/keys/delete", node1 + "/resources/astute/overrides/keys/set"} {
		body := `[["a"]]`
		if strings.HasSuffix(p, "set") {
			body = `[["a",1]]`
		}
		a.must(http.StatusNotFound, "PATCH", p, body)
	}
	a.put(doc, `{"a":{"b":"old"},"list":[1,2,3],"s":"scalar"}`)
	a.must(http.StatusNoContent, "PATCH", doc+"/keys/set", `[["a","b","new"],["a","c",{"deep":true}],["list","0",10],["top",null]]`)
	expectJSON(t, "after set", a.get(doc), `{"a":{"b":"new","c":{"deep":true}},"list":[10,2,3],"s":"scalar","top":null}`)
	a.must(http.StatusNoContent, "PATCH", doc+"/keys/delete", `[["a","c"],["list","1"],["top"]]`)
	expectJSON(t, "after delete", a.get(doc), `{"a":{"b":"new"},"list":[10,3],"s":"scalar"}`)

	// Bad paths: 409, and the batch is all or nothing (no new version).
	before := a.get(doc + "/versions")
	for _, bad := range []struct{ op, body string }{
		{"set", `[["a","b","ok"],["s","y","z",1]]`}, // through a scalar, after a good set
		{"set", `[["list","5",1]]`},                 // no append to a list
		{"set", `[["s","x",1]]`},                    // through a scalar
		{"set", `[["only"]]`},                       // no key, just a value
		{"delete", `[["a","b"],["a","b"]]`},         // second delete finds nothing
		{"delete", `[["nope"]]`},
		{"delete", `[["list","x"]]`},
	} {
		r := a.must(http.StatusConflict, "PATCH", doc+"/keys/"+bad.op, bad.body)
		r.errorMessage(t)
	}
	a.must(http.StatusBadRequest, "PATCH", doc+"/keys/set", `{"a":1}`)
	a.must(http.StatusBadRequest, "PATCH", doc+"/keys/set", `[[{"k":1},1]]`)
	expectJSON(t, "no version added by failed batches", a.get(doc+"/versions"), before)
	expectJSON(t, "unchanged", a.get(doc), `{"a":{"b":"new"},"list":[10,3],"s":"scalar"}`)
	// PATCH on the document itself is not a route.
	a.must(http.StatusMethodNotAllowed, "PATCH", doc, `[["a",1]]`)
}

func TestNamesWithSlash(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	a.must(http.StatusCreated, "POST", "/resource_definitions", `{"name":"override/configuration/node","component_id":1}`)
	for _, name := range []string{"override/plugins", "override/configuration/node"} {
		base := node1 + "/resources/" + name
		a.put(base+"/values", `{"from":"`+name+`"}`)
		a.put(base+"/override", `{"o":1}`)
		a.must(http.StatusNoContent, "PATCH", base+"/overrides/keys/set", `[["o",2]]`)
		expectJSON(t, name, a.get(base+"/values?effective"), `{"from":"`+name+`","o":2}`)
		if got := a.get(base + "/overrides/versions"); strings.Count(got, `"version"`) != 2 {
			t.Fatalf("%s versions: %s", name, got)
		}
	}
	// The definition id addresses the same documents as its name.
	expectJSON(t, "by id", a.get(node1+"/resources/3/values"), `{"from":"override/plugins"}`)
	// A level value with an escaped "/" stays one value.
	a.put(env1+"/role/a%2Fb/resources/astute/values", `{"r":"a/b"}`)
	expectJSON(t, "escaped level value", a.get(env1+"/role/a%2Fb/resources/astute/values?effective&show_lookup"), `{"r":["a/b","/role/a/b/"]}`)
	if got := a.get("/environments/1/hierarchy_levels/role"); !strings.Contains(got, `"a/b"`) {
		t.Fatalf("level values: %s", got)
	}
}

func TestVersions(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	doc := node1 + "/resources/astute/values"
	expectJSON(t, "no versions yet", a.get(doc+"/versions"), `[]`)
	bodies := []string{`{"v":1}`, `{"v":2,"big":1.000000000000000000001}`, `{"v":3}`}
	for i, b := range bodies {
		r := a.put(doc, b)
		if got := r.header.Get("X-Config-Version"); got != strconv.Itoa(i+1) {
			t.Fatalf("PUT %d: version header %q", i+1, got)
		}
	}
	a.must(http.StatusNoContent, "PATCH", doc+"/keys/set", `[["v",4]]`)
	var versions []struct {
		Version   int    `json:"version"`
		CreatedAt string `json:"created_at"`
		Size      int    `json:"size"`
		SHA256    string `json:"sha256"`
	}
	a.must(http.StatusOK, "GET", doc+"/versions", "").json(t, &versions)
	if len(versions) != 4 {
		t.Fatalf("versions: %+v", versions)
	}
	for i, v := range versions {
		if v.Version != 4-i || v.CreatedAt == "" || len(v.SHA256) != 64 || v.Size == 0 {
			t.Fatalf("version %d: %+v", i, v)
		}
	}
	for i, b := range bodies {
		r := a.must(http.StatusOK, "GET", doc+"?version="+strconv.Itoa(i+1), "")
		expectJSON(t, "version "+strconv.Itoa(i+1), r.String(), b)
		if r.header.Get("ETag") != `"`+versions[3-i].SHA256+`"` || len(r.body) != versions[3-i].Size {
			t.Fatalf("version %d: ETag %s, size %d; listed %+v", i+1, r.header.Get("ETag"), len(r.body), versions[3-i])
		}
	}
	// Numbers round-trip exactly.
	if got := a.get(doc + "?version=2"); !strings.Contains(got, "1.000000000000000000001") {
		t.Fatalf("number changed: %s", got)
	}
	expectJSON(t, "latest", a.get(doc), `{"v":4}`)
	a.must(http.StatusNotFound, "GET", doc+"?version=5", "")
	a.must(http.StatusBadRequest, "GET", doc+"?version=0", "")
	a.must(http.StatusBadRequest, "GET", doc+"?version=x", "")
	// With effective, version picks the addressed level's values; other levels are at their latest.
	a.put(env1+"/resources/astute/values", `{"g":1}`)
	a.put(env1+"/resources/astute/values", `{"g":2}`)
	expectJSON(t, "effective at version 1", a.get(doc+"?effective&version=1"), `{"g":2,"v":1}`)
	expectJSON(t, "effective latest", a.get(doc+"?effective"), `{"g":2,"v":4}`)
	// Versions of overrides are separate.
	expectJSON(t, "override versions", a.get(node1+"/resources/astute/overrides/versions"), `[]`)
}

func TestETags(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	doc := node1 + "/resources/astute/values"
	eff := doc + "?effective"
	for _, p := range []string{doc, eff} {
		r := a.must(http.StatusOK, "GET", p, "")
		etag := r.header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
			t.Fatalf("GET %s: ETag %q is not a strong ETag", p, etag)
		}
		a.must(http.StatusNotModified, "GET", p, "", "If-None-Match", etag)
		a.must(http.StatusNotModified, "GET", p, "", "If-None-Match", `"other", `+etag)
		a.must(http.StatusOK, "GET", p, "", "If-None-Match", `"other"`)
	}
	// If-Match: a write based on what was read succeeds; a stale one gets 412 and stores nothing.
	empty := a.must(http.StatusOK, "GET", doc, "").header.Get("ETag")
	r1 := a.put(doc, `{"a":1}`, "If-Match", empty)
	etag1 := r1.header.Get("ETag")
	if got := a.must(http.StatusOK, "GET", doc, "").header.Get("ETag"); got != etag1 {
		t.Fatalf("ETag of the write %s, of the GET %s", etag1, got)
	}
	effBefore := a.must(http.StatusOK, "GET", eff, "").header.Get("ETag")
	a.put(doc, `{"a":2}`, "If-Match", etag1)
	a.must(http.StatusPreconditionFailed, "PUT", doc, `{"a":3}`, "If-Match", etag1).errorMessage(t)
	a.must(http.StatusPreconditionFailed, "PATCH", doc+"/keys/set", `[["a",3]]`, "If-Match", etag1)
	a.must(http.StatusPreconditionFailed, "PUT", node2+"/resources/astute/values", `{"a":3}`, "If-Match", etag1)
	expectJSON(t, "after 412s", a.get(doc), `{"a":2}`)
	if n := strings.Count(a.get(doc+"/versions"), `"version"`); n != 2 {
		t.Fatalf("%d versions, want 2", n)
	}
	a.put(doc, `{"a":4}`, "If-Match", "*")
	// The effective ETag changes with any layer; the old one no longer gives 304.
	a.must(http.StatusOK, "GET", eff, "", "If-None-Match", effBefore)
	a.put(env1+"/resources/astute/overrides", `{"z":1}`)
	r := a.must(http.StatusOK, "GET", eff, "")
	expectJSON(t, "effective", r.String(), `{"a":4,"z":1}`)
	a.must(http.StatusNotModified, "GET", eff, "", "If-None-Match", r.header.Get("ETag"))
}

func TestConcurrentWriters(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	doc := node1 + "/resources/astute/values"
	a.put(doc, `{"writer":"initial"}`)
	const writers = 32
	versionOf := make([]int, writers)
	var wg sync.WaitGroup
	errs := make(chan string, writers)
	for i := range writers {
		wg.Go(func() {
			r := a.do("PUT", doc, fmt.Sprintf(`{"writer":%d}`, i))
			if r.status != http.StatusNoContent {
				errs <- fmt.Sprintf("writer %d: %d %s", i, r.status, r)
				return
			}
			versionOf[i], _ = strconv.Atoi(r.header.Get("X-Config-Version"))
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Every 204 maps to its own version, and each version holds that writer's body.
	seen := make(map[int]int)
	for i, v := range versionOf {
		if prev, dup := seen[v]; dup {
			t.Fatalf("writers %d and %d both got version %d", prev, i, v)
		}
		seen[v] = i
		expectJSON(t, fmt.Sprintf("version %d", v), a.get(fmt.Sprintf("%s?version=%d", doc, v)), fmt.Sprintf(`{"writer":%d}`, i))
	}
	var versions []struct{ Version int }
	a.must(http.StatusOK, "GET", doc+"/versions", "").json(t, &versions)
	if len(versions) != writers+1 {
		t.Fatalf("%d versions, want %d", len(versions), writers+1)
	}
	for i, v := range versions {
		if v.Version != writers+1-i {
			t.Fatalf("versions list not newest first and gapless: %+v", versions)
		}
	}
	expectJSON(t, "version 1", a.get(doc+"?version=1"), `{"writer":"initial"}`)
}
