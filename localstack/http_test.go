package localstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	tbclient "github.com/tuningbox/tuningbox/client"
)

// The HTTP black-box suite: the main ConfigDB flows, through HTTP only, against
// any server at TUNINGBOX_URL (run-integration.sh points it at `tuningbox serve
// --backend aws` on the emulators; it runs just as well against `make run`).
// Every case makes its own component and environment with unique names, so the
// suite can run repeatedly against a server that keeps its data.

// client talks to the server under test and checks the properties every response must have.
type client struct {
	t      *testing.T
	server string // scheme://host:port
	prefix string // the prefix of every path: /api/v1/config
	api    *tbclient.Client
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// newClient returns a client of the server at TUNINGBOX_URL, or skips the test when
// it is not set. Like the CLI, it authenticates with TUNINGBOX_TOKEN (Bearer) or
// TUNINGBOX_USER and TUNINGBOX_PASSWORD (Basic); the suite needs an administrator.
func newClient(t *testing.T) *client {
	t.Helper()
	base := os.Getenv("TUNINGBOX_URL")
	if base == "" {
		t.Skip("no server: set TUNINGBOX_URL (e.g. http://127.0.0.1:8080) to run the HTTP black-box suite")
	}
	user, password, token := os.Getenv("TUNINGBOX_USER"), os.Getenv("TUNINGBOX_PASSWORD"), os.Getenv("TUNINGBOX_TOKEN")
	switch {
	case token != "":
		return clientFor(t, base, tbclient.WithToken(token))
	case user != "":
		return clientFor(t, base, tbclient.WithBasicAuth(user, password))
	}
	return clientFor(t, base)
}

// clientFor returns a client of the server at base, which must be on the loopback interface.
func clientFor(t *testing.T, base string, opts ...tbclient.Option) *client {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil || !loopback(u.Hostname()) {
		t.Fatalf("server %q: the tests only talk to servers on the loopback interface", base)
	}
	server := strings.TrimSuffix(base, "/")
	c, err := tbclient.New(server, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, server: server, prefix: "/api/v1/config", api: c}
}

// under returns the client for paths below prefix (e.g. /api/v1) instead of /api/v1/config.
func (c *client) under(prefix string) *client {
	d := *c
	d.prefix = prefix
	return &d
}

// send sends a request through api, whatever the answer; header holds name, value pairs.
func (c *client) send(api *tbclient.Client, method, path string, body any, header ...string) response {
	c.t.Helper()
	req := tbclient.Request{Method: method, Path: path, Header: http.Header{}}
	if s, ok := body.(string); ok {
		req.Body = []byte(s)
	} else if body != nil {
		req.Body = body
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// Not the test's context: the fixture's clean-up requests run after it is cancelled.
	res, err := api.Do(context.WithoutCancel(c.t.Context()), req)
	if apiErr := (*tbclient.Error)(nil); err != nil && !errors.As(err, &apiErr) {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return response{status: res.Status, header: res.Header, body: res.Body}
}

// do sends a request below the client's prefix; body is JSON-encoded unless it
// is a string (sent as is, as JSON). header holds name, value pairs.
func (c *client) do(method, path string, body any, header ...string) response {
	c.t.Helper()
	r := c.send(c.api, method, c.prefix+path, body, header...)
	if r.status >= 400 {
		c.checkErrorBody(method, path, r)
	}
	return r
}

// checkErrorBody: every error is a JSON body {"error":{"code":status,"message":...}}.
func (c *client) checkErrorBody(method, path string, r response) {
	c.t.Helper()
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || json.Unmarshal(r.body, &e) != nil ||
		e.Error.Code != r.status || e.Error.Message == "" {
		c.t.Fatalf("%s %s: %d with Content-Type %q and body %q; want a JSON error body with code %d",
			method, path, r.status, r.header.Get("Content-Type"), r.body, r.status)
	}
}

// want sends a request and fails the test unless the status is status.
func (c *client) want(status int, method, path string, body any, header ...string) response {
	c.t.Helper()
	r := c.do(method, path, body, header...)
	if r.status != status {
		c.t.Fatalf("%s %s = %d %s, want %d", method, path, r.status, r.body, status)
	}
	return r
}

// wantJSON sends a request, wants 200 and a body equal (as JSON) to want.
func (c *client) wantJSON(method, path string, want string) response {
	c.t.Helper()
	r := c.want(http.StatusOK, method, path, nil)
	if !jsonEqual(r.body, []byte(want)) {
		c.t.Fatalf("%s %s = %s, want %s", method, path, r.body, want)
	}
	return r
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// fixture is one environment with three levels (zone, role, nodes) and a component
// with the resource definitions "astute" and "override/plugins".
type fixture struct {
	*client
	component struct {
		ID                  int64  `json:"id"`
		Name                string `json:"name"`
		ResourceDefinitions []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"resource_definitions"`
	}
	env struct {
		ID              int64    `json:"id"`
		UUID            string   `json:"uuid"`
		Components      []int64  `json:"components"`
		HierarchyLevels []string `json:"hierarchy_levels"`
	}
	// node is registered in env at zone z1, role compute, by registerNode.
	node struct {
		ID   int64  `json:"id"`
		UUID string `json:"uuid"`
		FQDN string `json:"fqdn"`
	}
}

func newFixture(t *testing.T) *fixture { return setUp(t, newClient(t)) }

// setUp creates the fixture's component and environment through c, and deletes them when t ends.
func setUp(t *testing.T, c *client) *fixture {
	f := &fixture{client: c}
	name := "bb-" + randomSuffix()
	c.want(http.StatusCreated, "POST", "/components", map[string]any{
		"name":                 name,
		"resource_definitions": []map[string]any{{"name": "astute"}, {"name": "override/plugins", "content": map[string]any{"x": 1}}},
	}).decode(t, &f.component)
	if f.component.Name != name || len(f.component.ResourceDefinitions) != 2 {
		t.Fatalf("created component %+v", f.component)
	}
	c.want(http.StatusCreated, "POST", "/environments", map[string]any{
		"components": []string{name}, "hierarchy_levels": []string{"zone", "role", "nodes"},
	}).decode(t, &f.env)
	if !slices.Equal(f.env.Components, []int64{f.component.ID}) || !slices.Equal(f.env.HierarchyLevels, []string{"zone", "role", "nodes"}) {
		t.Fatalf("created environment %+v", f.env)
	}
	t.Cleanup(func() {
		// Deleting twice shows the delete took: the second is a 404.
		for _, status := range []int{http.StatusNoContent, http.StatusNotFound} {
			c.want(status, "DELETE", fmt.Sprintf("/environments/%d", f.env.ID), nil)
			c.want(status, "DELETE", fmt.Sprintf("/components/%d", f.component.ID), nil)
		}
	})
	return f
}

// registerNode registers f.node in the fixture's environment at zone z1, role compute.
func (f *fixture) registerNode(t *testing.T) {
	var registered struct {
		Node json.RawMessage `json:"node"`
	}
	nodes := f.under("/api/v1")
	nodes.want(http.StatusCreated, "POST", "/nodes", map[string]any{
		"fqdn": "bb-" + randomSuffix() + ".example.com", "environment_id": f.env.ID, "levels": map[string]string{"zone": "z1", "role": "compute"},
	}).decode(t, &registered)
	if err := json.Unmarshal(registered.Node, &f.node); err != nil || f.node.ID == 0 {
		t.Fatalf("registered node %s: %v", registered.Node, err)
	}
	t.Cleanup(func() { nodes.want(http.StatusNoContent, "DELETE", "/nodes/"+f.node.UUID, nil) })
}

// doc returns the path of resource's document of kind at the level path given as name, value pairs.
func (f *fixture) doc(resource, kind string, levels ...string) string {
	p := fmt.Sprintf("/environments/%d", f.env.ID)
	for _, l := range levels {
		p += "/" + url.PathEscape(l)
	}
	return p + "/resources/" + resource + "/" + kind
}

func TestHTTPEffectiveValues(t *testing.T) {
	f := newFixture(t)
	f.registerNode(t)
	id := strconv.FormatInt(f.node.ID, 10)
	node := []string{"zone", "z1", "role", "compute", "nodes", id}
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values"), `{"debug":false,"ntp":{"servers":["a","b"]},"region":"One","zone_name":"none"}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", "zone", "z1"), `{"zone_name":"z1","ntp":{"servers":["z"]}}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", "zone", "z2"), `{"zone_name":"z2","leak":true}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "overrides"), `{"region":"Two","debug":"global override"}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", node...), `{"debug":true}`)

	// Non-effective reads return one level's document; {} where nothing was stored.
	f.wantJSON("GET", f.doc("astute", "values", node...), `{"debug":true}`)
	f.wantJSON("GET", f.doc("astute", "values", "zone", "z1", "role", "compute"), `{}`)
	f.wantJSON("GET", f.doc("astute", "overrides"), `{"region":"Two","debug":"global override"}`)

	// Effective: global -> node, values then overrides per level; the deeper value beats the
	// global override; the sibling zone z2 does not leak; resources by id or by name.
	want := `{"debug":true,"ntp":{"servers":["z"]},"region":"Two","zone_name":"z1"}`
	f.wantJSON("GET", f.doc("astute", "values", node...)+"?effective", want)
	f.wantJSON("GET", f.doc(fmt.Sprint(f.component.ResourceDefinitions[0].ID), "values", node...)+"?effective", want)
	f.wantJSON("GET", f.doc("astute", "values", node...)+"?effective&show_lookup",
		`{"debug":[true,"/zone/z1/role/compute/nodes/`+id+`/"],"ntp":[{"servers":["z"]},"/zone/z1/"],"region":["Two","/"],"zone_name":["z1","/zone/z1/"]}`)
	f.wantJSON("GET", f.doc("astute", "values", node...)+"?effective&key=ntp.servers.0", `"z"`)
	// The node level takes the node by FQDN (any case) or UUID too, and the short
	// path takes zone and role from the node's placement: the same documents.
	f.wantJSON("GET", f.doc("astute", "values", "zone", "z1", "role", "compute", "nodes", strings.ToUpper(f.node.FQDN))+"?effective", want)
	f.wantJSON("GET", f.doc("astute", "values", "nodes", f.node.UUID)+"?effective", want)
	f.wantJSON("GET", f.doc("astute", "values", "nodes", f.node.FQDN), `{"debug":true}`)
	f.want(http.StatusNotFound, "PUT", f.doc("astute", "values", "nodes", "unregistered-"+f.node.FQDN), `{"a":1}`)
	f.want(http.StatusConflict, "GET", f.doc("astute", "values", node...)+"?effective&key=ntp.nope", nil)
	f.want(http.StatusConflict, "GET", f.doc("astute", "values", node...)+"?show_lookup", nil)

	// A name with a slash addresses the second resource definition.
	f.want(http.StatusNoContent, "PUT", f.doc("override/plugins", "values", "zone", "z1"), `{"plugin":"on"}`)
	f.wantJSON("GET", f.doc("override/plugins", "values", node...)+"?effective", `{"plugin":"on"}`)

	// The levels list shows the values documents were stored under.
	var levels []struct {
		Name   string   `json:"name"`
		Values []string `json:"values"`
	}
	f.want(http.StatusOK, "GET", fmt.Sprintf("/environments/%d/hierarchy_levels", f.env.ID), nil).decode(t, &levels)
	if len(levels) != 3 || levels[0].Name != "zone" || !slices.Equal(levels[0].Values, []string{"z1", "z2"}) ||
		!slices.Equal(levels[2].Values, []string{id}) {
		t.Fatalf("hierarchy levels %+v", levels)
	}
}

func TestHTTPVersionsAndConditionalRequests(t *testing.T) {
	f := newFixture(t)
	path := f.doc("astute", "values", "zone", "z1")
	f.want(http.StatusNoContent, "PUT", path, `{"v":1}`)
	f.want(http.StatusNoContent, "PUT", path, `{"v":2}`)
	f.wantJSON("GET", path+"?version=1", `{"v":1}`)
	f.wantJSON("GET", path+"?version=2", `{"v":2}`)
	f.want(http.StatusNotFound, "GET", path+"?version=3", nil)
	var versions []struct {
		Version int    `json:"version"`
		SHA256  string `json:"sha256"`
	}
	f.want(http.StatusOK, "GET", path+"/versions", nil).decode(t, &versions)
	if len(versions) != 2 || versions[0].Version != 2 || versions[1].Version != 1 || versions[0].SHA256 == versions[1].SHA256 {
		t.Fatalf("versions %+v, want 2 then 1 with different hashes", versions)
	}

	// Strong ETags: If-None-Match gives 304, a stale If-Match gives 412.
	r := f.wantJSON("GET", path, `{"v":2}`)
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	f.want(http.StatusNotModified, "GET", path, nil, "If-None-Match", etag)
	eff := f.want(http.StatusOK, "GET", path+"?effective", nil).header.Get("ETag")
	f.want(http.StatusNotModified, "GET", path+"?effective", nil, "If-None-Match", eff)
	f.want(http.StatusNoContent, "PUT", path, `{"v":3}`, "If-Match", etag)
	f.want(http.StatusPreconditionFailed, "PUT", path, `{"v":4}`, "If-Match", etag)
	f.wantJSON("GET", path, `{"v":3}`)
	f.want(http.StatusOK, "GET", path+"?effective", nil, "If-None-Match", eff) // changed: a full answer
}

func TestHTTPKeyOperations(t *testing.T) {
	f := newFixture(t)
	path := f.doc("astute", "overrides", "zone", "z1")
	f.want(http.StatusNotFound, "PATCH", path+"/keys/set", `[["a","x"]]`) // nothing stored at this level yet
	f.want(http.StatusNoContent, "PUT", path, `{"a":{"b":1},"l":[1,2]}`)
	f.want(http.StatusNoContent, "PATCH", path+"/keys/set", `[["a","b",2],["c","new"]]`)
	f.wantJSON("GET", path, `{"a":{"b":2},"c":"new","l":[1,2]}`)
	f.want(http.StatusConflict, "PATCH", path+"/keys/set", `[["c","new","z"]]`) // through a string
	f.want(http.StatusConflict, "PATCH", path+"/keys/set", `[["x","y","z"]]`)   // at 1.0, as tuning-box: x must exist
	// From 1.4 keys/set adds the missing objects (spec 000); 1.2 on name the environment by UUID.
	byUUID := strings.Replace(path, fmt.Sprintf("/environments/%d/", f.env.ID), "/environments/"+f.env.UUID+"/", 1)
	f.want(http.StatusNoContent, "PATCH", byUUID+"/keys/set", `[["x","y","z"]]`, "OpenStack-API-Version", "config 1.4")
	f.want(http.StatusConflict, "PATCH", path+"/keys/delete", `[["c"],["missing"]]`) // all or nothing
	f.want(http.StatusNoContent, "PATCH", path+"/keys/delete", `[["c"],["a","b"]]`)  // both exist
	f.wantJSON("GET", path, `{"a":{},"l":[1,2],"x":{"y":"z"}}`)
	var versions []any // every batch made a version
	f.want(http.StatusOK, "GET", path+"/versions", nil).decode(t, &versions)
	if len(versions) != 4 {
		t.Fatalf("%d versions after a PUT and three key batches, want 4", len(versions))
	}
}

func TestHTTPErrors(t *testing.T) {
	f := newFixture(t)
	env := fmt.Sprintf("/environments/%d", f.env.ID)
	f.want(http.StatusNotFound, "GET", "/environments/999999999/resources/astute/values", nil)
	f.want(http.StatusNotFound, "GET", env+"/role/compute/resources/astute/values", nil) // "role" is not the first level
	f.want(http.StatusNotFound, "GET", env+"/zone/z/role/r/nodes/1/extra/x/resources/astute/values", nil)
	f.want(http.StatusNotFound, "GET", env+"/resources/nope/values", nil)
	f.want(http.StatusBadRequest, "PUT", f.doc("astute", "values"), `{"broken":`)
	f.want(http.StatusUnsupportedMediaType, "PUT", f.doc("astute", "values"), `{"a":1}`, "Content-Type", "text/plain")
	f.want(http.StatusConflict, "POST", "/components", map[string]any{"name": f.component.Name})
	f.want(http.StatusConflict, "POST", "/environments", map[string]any{"id": f.env.ID, "components": []int64{}, "hierarchy_levels": []string{}})
	// A GET never creates the level value it names.
	f.wantJSON("GET", f.doc("astute", "values", "zone", "ghost"), `{}`)
	var level struct {
		Values []string `json:"values"`
	}
	f.want(http.StatusOK, "GET", env+"/hierarchy_levels/zone", nil).decode(t, &level)
	if slices.Contains(level.Values, "ghost") {
		t.Fatalf("a GET created the level value: %v", level.Values)
	}
}

func TestHTTPEntities(t *testing.T) {
	f := newFixture(t)
	comp := fmt.Sprintf("/components/%d", f.component.ID)
	env := fmt.Sprintf("/environments/%d", f.env.ID)
	var comps []struct {
		ID int64 `json:"id"`
	}
	f.want(http.StatusOK, "GET", "/components", nil).decode(t, &comps)
	if !slices.ContainsFunc(comps, func(c struct {
		ID int64 `json:"id"`
	}) bool {
		return c.ID == f.component.ID
	}) {
		t.Fatalf("component %d not listed", f.component.ID)
	}
	f.want(http.StatusOK, "GET", comp, nil)
	f.want(http.StatusOK, "GET", env, nil)
	f.want(http.StatusOK, "GET", fmt.Sprintf("/resource_definitions/%d", f.component.ResourceDefinitions[1].ID), nil)

	// Renaming a level moves no data: documents are keyed by level values.
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", "zone", "z1"), `{"k":"v"}`)
	f.want(http.StatusNoContent, "PUT", env+"/hierarchy_levels/zone", map[string]string{"name": "region"})
	f.wantJSON("GET", f.doc("astute", "values", "region", "z1"), `{"k":"v"}`)
	f.want(http.StatusNotFound, "GET", f.doc("astute", "values", "zone", "z1"), nil)

	// Resource definition content keys.
	rd := fmt.Sprintf("/resource_definitions/%d", f.component.ResourceDefinitions[1].ID)
	f.want(http.StatusNoContent, "PATCH", rd+"/keys/set", `[["y",2]]`)
	var def struct {
		Content map[string]int `json:"content"`
	}
	f.want(http.StatusOK, "GET", rd, nil).decode(t, &def)
	if def.Content["x"] != 1 || def.Content["y"] != 2 {
		t.Fatalf("content %v, want x=1 y=2", def.Content)
	}
}

// TestHTTPNodeUserConfined: a node user reads its own node's documents by every
// path form and gets 403 for another environment, role or node.
func TestHTTPNodeUserConfined(t *testing.T) {
	f := newFixture(t)
	f.registerNode(t)
	other := setUp(t, f.client)
	other.registerNode(t)
	id := strconv.FormatInt(f.node.ID, 10)
	own := []string{"zone", "z1", "role", "compute", "nodes", id}
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values"), `{"scope":"global"}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", "zone", "z1", "role", "controller"), `{"secret":"CONTROLLER"}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", own...), `{"own":"OWN"}`)
	f.want(http.StatusNoContent, "PUT", other.doc("astute", "values", "zone", "z1", "role", "compute", "nodes", strconv.FormatInt(other.node.ID, 10)), `{"other":"OTHER-NODE"}`)

	admin := f.under("/api/v1")
	user, password := "bb-node-"+randomSuffix(), "pw-"+randomSuffix()+randomSuffix()
	admin.want(http.StatusCreated, "POST", "/users", map[string]any{"name": user, "password": password, "role": "node", "node": f.node.FQDN})
	t.Cleanup(func() { admin.want(http.StatusNoContent, "DELETE", "/users/"+user, nil) })
	node := clientFor(t, f.server, tbclient.WithBasicAuth(user, password))

	for _, path := range []string{
		f.doc("astute", "values", own...) + "?effective",
		f.doc("astute", "values", "nodes", f.node.FQDN) + "?effective",
		f.doc("astute", "values", "nodes", strings.ToUpper(f.node.FQDN)) + "?effective&show_lookup",
		f.doc("astute", "values", "node", f.node.UUID) + "?effective",
		f.doc("astute", "values", "zone", "z1", "role", "compute", "nodes", f.node.FQDN),
	} {
		if r := node.want(http.StatusOK, "GET", path, nil); !strings.Contains(string(r.body), "OWN") || strings.Contains(string(r.body), "CONTROLLER") {
			t.Errorf("own %s: %s", path, r.body)
		}
	}
	otherID := strconv.FormatInt(other.node.ID, 10)
	for _, path := range []string{
		other.doc("astute", "values", "nodes", f.node.FQDN) + "?effective",                              // other environment
		other.doc("astute", "values", "zone", "z1", "role", "compute", "nodes", otherID) + "?effective", // other environment's node
		f.doc("astute", "values", "zone", "z1", "role", "controller", "nodes", id) + "?effective",       // other role
		f.doc("astute", "values", "zone", "z2", "role", "compute", "nodes", f.node.FQDN) + "?effective", // other zone
		f.doc("astute", "values", "zone", "z1", "role", "controller"),                                   // a role level alone
		f.doc("astute", "values"), // global
		f.doc("astute", "values", "nodes", other.node.FQDN) + "?effective",             // other node
		f.doc("astute", "values", "nodes", "unregistered-"+f.node.FQDN) + "?effective", // no such node
	} {
		node.want(http.StatusForbidden, "GET", path, nil)
	}
	node.want(http.StatusForbidden, "PUT", f.doc("astute", "values", own...), `{"own":"changed"}`)
}

// TestHTTPStoreGC: the blob garbage collector over HTTP (admin): a sweep counts
// the version just written as referenced and leaves it readable; a bad min_age
// is a 400, and the bare /api/v1/store path a JSON 404 (through API Gateway,
// where no route takes that path, API Gateway's own refusal).
func TestHTTPStoreGC(t *testing.T) {
	f := newFixture(t)
	path := f.doc("astute", "values")
	f.want(http.StatusNoContent, "PUT", path, `{"swept":false}`)
	store := f.client.under("/api/v1/store")
	var rep struct {
		Referenced, Unreferenced, Removed *int
	}
	store.want(http.StatusOK, "POST", "/gc?min_age=0s", nil).decode(t, &rep)
	if rep.Referenced == nil || *rep.Referenced < 1 || rep.Unreferenced == nil || rep.Removed == nil {
		t.Fatalf("gc answer %+v", rep)
	}
	f.wantJSON("GET", path, `{"swept":false}`)
	store.want(http.StatusBadRequest, "POST", "/gc?min_age=soon", nil)
	apiType := os.Getenv("TUNINGBOX_GATEWAY")
	if apiType == "" {
		store.want(http.StatusNotFound, "GET", "", nil)
		return
	}
	r := store.send(store.api, "GET", "/api/v1/store", nil)
	if want := map[string]int{"http": http.StatusNotFound, "rest": http.StatusForbidden}[apiType]; r.status != want || r.header.Get("x-amzn-ErrorType") == "" {
		t.Errorf("GET /api/v1/store through API Gateway = %d (x-amzn-ErrorType %q), want API Gateway's %d", r.status, r.header.Get("x-amzn-ErrorType"), want)
	}
}
