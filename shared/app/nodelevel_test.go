package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// nodeUUID registers a node and returns its UUID.
func (c *client) registerNode(body string) string {
	c.t.Helper()
	var out struct {
		Node struct {
			UUID string `json:"uuid"`
		} `json:"node"`
	}
	if err := json.Unmarshal([]byte(c.do("POST", "/api/v1/nodes", body, 201, "")), &out); err != nil || out.Node.UUID == "" {
		c.t.Fatalf("register %s: %v", body, err)
	}
	return out.Node.UUID
}

// seedNodeLevels builds environment 1 (levels [nodes]) and environment 2
// (levels [role, nodes]), node 7 in environment 1, node 8 (role compute) and
// node 9 (no placement) in environment 2. It returns node 7's UUID.
func seedNodeLevels(c *client) string {
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, 201, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["nodes"]}`, 201, "")
	c.do("POST", "/api/v1/config/environments", `{"id":2,"components":["fuel"],"hierarchy_levels":["role","nodes"]}`, 201, "")
	uuid7 := c.registerNode(`{"id":7,"fqdn":"node-7.domain.tld","environment_id":1}`)
	c.registerNode(`{"id":8,"fqdn":"node-8.domain.tld","environment_id":2,"levels":{"role":"compute"}}`)
	c.registerNode(`{"id":9,"fqdn":"node-9.domain.tld","environment_id":2}`)
	return uuid7
}

// TestNodeLevelOneDocumentSet addresses node 7's documents by id, FQDN (any
// case) and UUID, and under both level names, for every operation: each form
// writes the next version of the same document and reads the same answer.
func TestNodeLevelOneDocumentSet(t *testing.T) {
	c := newClient(t)
	uuid7 := seedNodeLevels(c)
	const env = "/api/v1/config/environments/1"
	c.do("PUT", env+"/resources/astute/values", `{"region":"RegionOne","debug":false}`, 204, "")
	forms := []string{"nodes/7", "nodes/NODE-7.Domain.TLD", "nodes/" + uuid7, "nodes/" + strings.ToUpper(uuid7), "node/node-7.domain.tld", "node/7"}
	doc := func(form string) string { return env + "/" + form + "/resources/astute/values" }

	// write: one PUT, one keys/set and one override per form, each the next version.
	for i, form := range forms {
		c.do("PUT", doc(form), fmt.Sprintf(`{"debug":true,"written":%d}`, i), 204, "")
		c.do("PATCH", doc(form)+"/keys/set", fmt.Sprintf(`[["set_by",%q]]`, form), 204, "")
		c.do("PUT", env+"/"+form+"/resources/astute/overrides", fmt.Sprintf(`{"override":%d}`, i), 204, "")
	}
	last := len(forms) - 1
	wantValues := fmt.Sprintf(`{"debug":true,"set_by":%q,"written":%d}`, forms[last], last)
	wantEffective := fmt.Sprintf(`{"debug":true,"override":%d,"region":"RegionOne","set_by":%q,"written":%d}`, last, forms[last], last)
	wantLookup := fmt.Sprintf(`{"debug":[true,"/nodes/7/"],"override":[%d,"/nodes/7/"],"region":["RegionOne","/"],"set_by":[%q,"/nodes/7/"],"written":[%d,"/nodes/7/"]}`, last, forms[last], last)
	var firstVersions string
	for _, form := range forms {
		t.Run(form, func(t *testing.T) {
			sub := &client{t: t, url: c.url, api: c.api}
			if got := sub.do("GET", doc(form), "", 200, ""); got != wantValues {
				t.Errorf("values = %s, want %s", got, wantValues)
			}
			if got := sub.do("GET", doc(form)+"?effective", "", 200, ""); got != wantEffective {
				t.Errorf("effective = %s, want %s", got, wantEffective)
			}
			if got := sub.do("GET", doc(form)+"?effective&show_lookup", "", 200, ""); got != wantLookup {
				t.Errorf("show_lookup = %s, want %s", got, wantLookup)
			}
			if got := sub.do("GET", doc(form)+"?effective&key=set_by", "", 200, ""); got != fmt.Sprintf("%q", forms[last]) {
				t.Errorf("key = %s", got)
			}
			if got := sub.do("GET", doc(form)+"?version=1", "", 200, ""); got != `{"debug":true,"written":0}` {
				t.Errorf("version 1 = %s", got)
			}
			versions := sub.do("GET", doc(form)+"/versions", "", 200, "")
			var list []struct {
				Version int `json:"version"`
			}
			if err := json.Unmarshal([]byte(versions), &list); err != nil || len(list) != 2*len(forms) || list[0].Version != 2*len(forms) {
				t.Errorf("versions = %s (%v), want %d", versions, err, 2*len(forms))
			}
			if firstVersions == "" {
				firstVersions = versions
			} else if versions != firstVersions {
				t.Errorf("versions differ between forms:\n%s\n%s", versions, firstVersions)
			}
			sub.do("GET", env+"/"+form+"/resources/astute/overrides/versions", "", 200, fmt.Sprintf(`"version":%d`, len(forms)))
		})
	}
	// One level value was recorded, the node's id; the audit log has every write.
	c.do("GET", env+"/hierarchy_levels/nodes", "", 200, `"values":["7"]`)
	audit := c.do("GET", "/api/v1/audit?environment=1&limit=1000", "", 200, "")
	if n := strings.Count(audit, `"method":"PUT"`) + strings.Count(audit, `"method":"PATCH"`); n != 1+3*len(forms) {
		t.Errorf("audit has %d document writes, want %d", n, 1+3*len(forms))
	}
}

// TestNodeLevelRefusesUnknownAndForeignNodes: an unregistered node, and a node
// registered in another environment, are 404 for every operation, and nothing is stored.
func TestNodeLevelRefusesUnknownAndForeignNodes(t *testing.T) {
	c := newClient(t)
	seedNodeLevels(c)
	cases := []struct{ path, msg string }{
		{"/api/v1/config/environments/1/nodes/77", "node 77 not found"},
		{"/api/v1/config/environments/1/nodes/node-77.domain.tld", "node node-77.domain.tld not found"},
		{"/api/v1/config/environments/1/nodes/0b5a2c1e-0000-4000-8000-000000000077", "not found"},
		{"/api/v1/config/environments/1/nodes/8", "node 8 is not assigned to environment 1"},
		{"/api/v1/config/environments/1/node/node-8.domain.tld", "node node-8.domain.tld is not assigned to environment 1"},
		{"/api/v1/config/environments/2/role/compute/nodes/7", "node 7 is not assigned to environment 2"},
		{"/api/v1/config/environments/2/nodes/7", "node 7 is not assigned to environment 2"},
	}
	for _, tc := range cases {
		doc := tc.path + "/resources/astute/values"
		c.do("PUT", doc, `{"a":1}`, 404, tc.msg)
		c.do("PATCH", doc+"/keys/set", `[["a",1]]`, 404, tc.msg)
		c.do("PUT", tc.path+"/resources/astute/overrides", `{"a":1}`, 404, tc.msg)
		c.do("GET", doc, "", 404, tc.msg)
		c.do("GET", doc+"?effective", "", 404, tc.msg)
		c.do("GET", doc+"/versions", "", 404, tc.msg)
	}
	for _, env := range []string{"1", "2"} {
		c.do("GET", "/api/v1/config/environments/"+env+"/hierarchy_levels/nodes", "", 200, `"values":[]`)
	}
	// Free-form levels keep free values.
	c.do("PUT", "/api/v1/config/environments/2/role/anything-at-all/resources/astute/values", `{"a":1}`, 204, "")
}

// TestShortNodePath reads a node's whole effective document from the
// registry's placement, as stock hiera_http does with %{trusted.certname}.
func TestShortNodePath(t *testing.T) {
	c := newClient(t)
	seedNodeLevels(c)
	const env = "/api/v1/config/environments/2"
	c.do("PUT", env+"/resources/astute/values", `{"region":"RegionOne","debug":false}`, 204, "")
	c.do("PUT", env+"/role/compute/resources/astute/values", `{"role":"compute","debug":"role"}`, 204, "")
	c.do("PUT", env+"/role/controller/resources/astute/values", `{"role":"controller","secret":"CONTROLLER-ONLY"}`, 204, "")
	c.do("PUT", env+"/role/compute/nodes/8/resources/astute/values", `{"debug":true}`, 204, "")

	want := `{"debug":[true,"/role/compute/nodes/8/"],"region":["RegionOne","/"],"role":["compute","/role/compute/"]}`
	for _, form := range []string{"nodes/8", "nodes/node-8.domain.tld", "node/NODE-8.domain.tld", "role/compute/nodes/node-8.domain.tld"} {
		if got := c.do("GET", env+"/"+form+"/resources/astute/values?effective&show_lookup", "", 200, ""); got != want {
			t.Errorf("%s: %s, want %s", form, got, want)
		}
	}
	// Writes through the short path land in the same document.
	c.do("PATCH", env+"/nodes/node-8.domain.tld/resources/astute/values/keys/set", `[["ntp","pool"]]`, 204, "")
	c.do("GET", env+"/role/compute/nodes/8/resources/astute/values", "", 200, `"ntp":"pool"`)
	// An administrator may still name another role explicitly (tuning-box's full path).
	c.do("GET", env+"/role/controller/nodes/8/resources/astute/values?effective", "", 200, "CONTROLLER-ONLY")
	// A node without a value for a level above it: 409 naming the level.
	c.do("GET", env+"/nodes/node-9.domain.tld/resources/astute/values?effective", "", 409, `no value for level \"role\"`)
	// Placement changes take effect at once (the cached resolution is confirmed on each read).
	c.do("PUT", "/api/v1/nodes/8", `{"levels":{"role":"controller"}}`, 200, `"levels":{"role":"controller"}`)
	c.do("GET", env+"/nodes/8/resources/astute/values?effective", "", 200, "CONTROLLER-ONLY")
	c.do("PUT", "/api/v1/nodes/8", `{"environment_id":1}`, 200, "")
	c.do("GET", env+"/nodes/8/resources/astute/values?effective", "", 404, "not assigned to environment 2")
	c.do("DELETE", "/api/v1/nodes/8", "", 204, "")
	c.do("GET", "/api/v1/config/environments/1/nodes/8/resources/astute/values?effective", "", 404, "node 8 not found")
}

// TestStockHieraHTTPRequest sends the request stock hiera_http makes (through
// lookup_http and Ruby's Net::HTTP) to a certname URI, in a [nodes] and a
// [role, nodes] environment: the answer is the node's data written by id.
func TestStockHieraHTTPRequest(t *testing.T) {
	c := newClient(t)
	seedNodeLevels(c)
	c.do("PUT", "/api/v1/config/environments/1/resources/astute/values", `{"region":"One"}`, 204, "")
	c.do("PUT", "/api/v1/config/environments/1/nodes/7/resources/astute/values", `{"written_by":"id 7"}`, 204, "")
	c.do("PUT", "/api/v1/config/environments/2/role/compute/resources/astute/values", `{"role":"compute"}`, 204, "")
	c.do("PUT", "/api/v1/config/environments/2/role/compute/nodes/8/resources/astute/values", `{"written_by":"id 8"}`, 204, "")
	for certname, want := range map[string]string{
		"/api/v1/config/environments/1/nodes/node-7.domain.tld/resources/astute/values?effective": `{"region":"One","written_by":"id 7"}`,
		"/api/v1/config/environments/2/nodes/node-8.domain.tld/resources/astute/values?effective": `{"role":"compute","written_by":"id 8"}`,
	} {
		req, err := http.NewRequest(http.MethodGet, c.url+certname, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = http.Header{"Accept": {"*/*"}, "User-Agent": {"Ruby"}, "Accept-Encoding": {"gzip;q=1.0,deflate;q=0.6,identity;q=0.3"}}
		req.Close = true // Connection: close, as Net::HTTP sends outside a session
		req.SetBasicAuth("admin", "wiring-test-password")
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(body) != want {
			t.Errorf("GET %s: %d %s %s, want 200 %s", certname, resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
	}
}
