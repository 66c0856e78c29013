package nodesapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi/templatesapitest"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
)

// create registers a node at 1.0 and returns its view there.
func create(a *templatesapitest.Client, fqdn string, env int) map[string]any {
	return a.Expect(a.Do("POST", "/api/v1/nodes", "1.0", fmt.Sprintf(`{"fqdn":%q,"environment_id":%d,"roles":["compute"]}`, fqdn, env)), http.StatusCreated, "").Node()
}

const unknownUUID = "8221f906-208b-44a5-b575-f8e8a59c4a84"

// Microversions (reference "Microversions").
func TestMicroversions(t *testing.T) {
	a := templatesapitest.NewServer(t)
	create(a, "node-1.example.com", 1)
	latest := httpapi.MaxVersion.String()
	beyond := httpapi.Version{Major: httpapi.MaxVersion.Major, Minor: httpapi.MaxVersion.Minor + 1}.String()

	t.Run("1 header forms, latest and default", func(t *testing.T) {
		for _, tc := range []struct {
			header, value, want string
		}{
			{"", "", "1.0"},
			{"OpenStack-API-Version", "config 1.1", "1.1"},
			{"OpenStack-API-Version", "config latest", latest},
			{"OpenStack-API-Version", "compute 2.53, config 1.2", "1.2"},
			{"X-OpenStack-Config-API-Version", "1.2", "1.2"},
		} {
			req, _ := http.NewRequest("GET", a.URL+"/api/v1/nodes/1", nil)
			if tc.header != "" {
				req.Header.Set(tc.header, tc.value)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("OpenStack-API-Version"); got != "config "+tc.want {
				t.Errorf("%s: %s -> echoed %q, want config %s", tc.header, tc.value, got, tc.want)
			}
			if got := resp.Header.Get("X-OpenStack-Config-API-Version"); got != tc.want {
				t.Errorf("%s: %s -> legacy header %q", tc.header, tc.value, got)
			}
		}
	})
	t.Run("2 malformed 400, out of range 406", func(t *testing.T) {
		a.Expect(a.Do("GET", "/api/v1/nodes", "one.two", ""), http.StatusBadRequest, "invalid API version")
		a.Expect(a.Do("GET", "/api/v1/nodes", beyond, ""), http.StatusNotAcceptable,
			"Version "+beyond+" is not supported by the API. Minimum is 1.0 and maximum is "+latest+".")
		a.Expect(a.Do("GET", "/api/v1/nodes", "0.9", ""), http.StatusNotAcceptable, "Minimum is 1.0")
	})
	t.Run("4 every response echoes the version and Vary", func(t *testing.T) {
		for _, r := range []templatesapitest.Reply{a.Do("GET", "/api/v1/nodes", "1.2", ""), a.Do("GET", "/api/v1/nodes/abc", "1.2", ""), a.Do("GET", "/api/v1/nodes", "9.9", "")} {
			if r.Header.Get("OpenStack-API-Version") == "" || !strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "OpenStack-API-Version") {
				t.Errorf("%d answer lacks version echo or Vary: %v", r.Status, r.Header)
			}
		}
	})
	t.Run("5 microversion document lists min and max", func(t *testing.T) {
		r := a.Do("GET", routes.VersionsPath, "", "")
		v, _ := r.Body["version"].(map[string]any)
		if v["min_version"] != "1.0" || v["version"] != latest {
			t.Errorf("root document %v", r.Body)
		}
	})
}

// UUID identities (reference "UUIDs (Nova 2.53)").
func TestUUIDIdentities(t *testing.T) {
	a := templatesapitest.NewServer(t)
	legacy := create(a, "node-1.example.com", 3)
	uuid := legacy["uuid"].(string)

	t.Run("1 id is the UUID from 1.2 on, the integer before", func(t *testing.T) {
		if legacy["id"] != float64(1) || !ident.IsUUID(uuid) || legacy["environment_id"] != float64(3) {
			t.Fatalf("1.0 view %v", legacy)
		}
		for _, r := range []templatesapitest.Reply{
			a.Do("GET", "/api/v1/nodes/"+uuid, "1.2", ""),
			a.Do("PUT", "/api/v1/nodes/"+uuid, "1.2", `{"maintenance":true}`),
			a.Do("POST", "/api/v1/nodes", "1.2", `{"fqdn":"node-2.example.com","environment_id":"`+nodestest.EnvironmentUUID(3)+`"}`),
		} {
			n := r.Node()
			if r.Status >= 300 || !ident.IsUUID(fmt.Sprint(n["id"])) || n["uuid"] != nil || n["environment_id"] != nodestest.EnvironmentUUID(3) {
				t.Errorf("1.2 answer %d %v", r.Status, r.Body)
			}
		}
		list := a.Do("GET", "/api/v1/nodes", "1.2", "")
		for _, item := range list.Body["nodes"].([]any) {
			if id := item.(map[string]any)["id"]; !ident.IsUUID(fmt.Sprint(id)) {
				t.Errorf("listed id %v", id)
			}
		}
	})
	t.Run("2 non-UUID path ids are 400 before the lookup", func(t *testing.T) {
		for _, m := range []string{"GET", "PUT", "DELETE"} {
			a.Expect(a.Do(m, "/api/v1/nodes/1", "1.2", `{"maintenance":false}`), http.StatusBadRequest, "Invalid uuid 1")
			a.Expect(a.Do(m, "/api/v1/nodes/999", "1.2", `{"maintenance":false}`), http.StatusBadRequest, "Invalid uuid 999")
			a.Expect(a.Do(m, "/api/v1/nodes/node-1.example.com", "latest", `{"maintenance":false}`), http.StatusBadRequest, "Invalid uuid node-1.example.com")
		}
		// Bodies follow the same rule (spec 004): an environment_id must be a UUID from 1.2 on.
		a.Expect(a.Do("POST", "/api/v1/nodes", "1.2", `{"fqdn":"node-9.example.com","environment_id":3}`), http.StatusBadRequest, "environment_id: Invalid uuid 3")
		a.Expect(a.Do("POST", "/api/v1/nodes", "latest", `{"fqdn":"node-9.example.com","environment_id":"3"}`), http.StatusBadRequest, "environment_id: Invalid uuid 3")
		a.Expect(a.Do("PUT", "/api/v1/nodes/"+uuid, "1.2", `{"environment_id":3}`), http.StatusBadRequest, "environment_id: Invalid uuid 3")
		a.Expect(a.Do("GET", "/api/v1/nodes/"+unknownUUID, "1.2", ""), http.StatusNotFound, "not found")
		a.Expect(a.Do("GET", "/api/v1/nodes/"+uuid, "1.2", ""), http.StatusOK, "")
	})
	t.Run("3 legacy integer ids before 1.2; ids are never ambiguous", func(t *testing.T) {
		for _, v := range []string{"", "1.0", "1.1"} {
			r := a.Do("GET", "/api/v1/nodes/1", v, "")
			if r.Status != http.StatusOK || r.Node()["uuid"] != uuid || r.Node()["id"] != float64(1) {
				t.Errorf("version %q: %d %v", v, r.Status, r.Body)
			}
			a.Expect(a.Do("GET", "/api/v1/nodes/"+uuid, v, ""), http.StatusOK, "")
		}
		a.Expect(a.Do("GET", "/api/v1/nodes/77", "1.1", ""), http.StatusNotFound, "not found")
		a.Expect(a.Do("GET", "/api/v1/nodes/abc", "1.1", ""), http.StatusBadRequest, "Invalid id abc")
		// An FQDN that could be read as an id is refused, so an integer names one node only.
		a.Expect(a.Do("POST", "/api/v1/nodes", "1.0", `{"fqdn":"2","environment_id":1}`), http.StatusBadRequest, "ambiguous")
	})
	t.Run("client-chosen ids above 2^31-1 are 400; the largest chosen id never exhausts generated ids", func(t *testing.T) {
		for _, id := range []string{"2147483648", "9007199254740991", "9007199254740992", "9223372036854775807"} {
			a.Expect(a.Do("POST", "/api/v1/nodes", "1.0", `{"fqdn":"big-`+id+`.example.com","environment_id":1,"id":`+id+`}`), http.StatusBadRequest, "from 1 to 2147483647")
		}
		a.Expect(a.Do("POST", "/api/v1/nodes", "1.0", `{"fqdn":"largest.example.com","environment_id":1,"id":2147483647}`), http.StatusCreated, "")
		a.Expect(a.Do("DELETE", "/api/v1/nodes/2147483647", "1.0", ""), http.StatusNoContent, "")
		for i := range 3 {
			r := a.Do("POST", "/api/v1/nodes", "1.0", fmt.Sprintf(`{"fqdn":"after-largest-%d.example.com","environment_id":1}`, i))
			if r.Status != http.StatusCreated || r.Node()["id"] != float64(1<<31+i) {
				t.Fatalf("generated id %d after the largest chosen one: %d %v", i, r.Status, r.Body)
			}
		}
	})
}

func TestHostnameSearchAndQueryRules(t *testing.T) {
	a := templatesapitest.NewServer(t)
	for i := range 4 {
		create(a, fmt.Sprintf("node-%d.rack%d.example.com", i, i%2), 1)
	}
	t.Run("4 hostname is a substring search", func(t *testing.T) {
		r := a.Do("GET", "/api/v1/nodes?hostname=rack1", "1.2", "")
		if r.Status != http.StatusOK || len(r.Body["nodes"].([]any)) != 2 || r.Body["nodes_links"] != nil {
			t.Fatalf("search: %d %v", r.Status, r.Body)
		}
	})
	t.Run("5 unknown and repeated query parameters are 400", func(t *testing.T) {
		a.Expect(a.Do("GET", "/api/v1/nodes?host=rack1", "1.2", ""), http.StatusBadRequest, `unknown query parameter "host"`)
		a.Expect(a.Do("GET", "/api/v1/nodes?hostname=a&hostname=b", "1.2", ""), http.StatusBadRequest, "more than once")
		a.Expect(a.Do("GET", "/api/v1/nodes?limit=1&limit=2", "1.2", ""), http.StatusBadRequest, "more than once")
		a.Expect(a.Do("GET", "/api/v1/nodes/1?with_servers=true", "1.0", ""), http.StatusBadRequest, "unknown query parameter")
	})
	t.Run("6 pattern with paging is 400", func(t *testing.T) {
		a.Expect(a.Do("GET", "/api/v1/nodes?hostname=rack&limit=1", "1.2", ""), http.StatusBadRequest, "cannot be combined")
		a.Expect(a.Do("GET", "/api/v1/nodes?hostname=rack&marker="+unknownUUID, "1.2", ""), http.StatusBadRequest, "cannot be combined")
	})
	t.Run("7 no match is 404", func(t *testing.T) {
		a.Expect(a.Do("GET", "/api/v1/nodes?hostname=nowhere", "1.2", ""), http.StatusNotFound, "no node matches")
	})
}

func TestPaging(t *testing.T) {
	a := templatesapitest.NewServer(t)
	for i := range 5 {
		create(a, fmt.Sprintf("node-%d.example.com", i), 1)
	}
	var seen []string
	next := "/api/v1/nodes?limit=2"
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		r := a.Do("GET", next, "1.2", "")
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %v", next, r.Status, r.Body)
		}
		for _, n := range r.Body["nodes"].([]any) {
			seen = append(seen, n.(map[string]any)["fqdn"].(string))
		}
		next = ""
		if links, ok := r.Body["nodes_links"].([]any); ok {
			l := links[0].(map[string]any)
			if l["rel"] != "next" {
				t.Fatalf("link %v", l)
			}
			next = l["href"].(string)
		}
	}
	if strings.Join(seen, " ") != "node-0.example.com node-1.example.com node-2.example.com node-3.example.com node-4.example.com" {
		t.Fatalf("paged through %v", seen)
	}
	// A page that is not full has no next link; a full last page has one that leads to an empty page.
	if r := a.Do("GET", "/api/v1/nodes?limit=6", "1.2", ""); r.Body["nodes_links"] != nil {
		t.Errorf("partial page has links: %v", r.Body["nodes_links"])
	}
	a.Expect(a.Do("GET", "/api/v1/nodes?marker="+unknownUUID, "1.2", ""), http.StatusBadRequest, "marker")
	a.Expect(a.Do("GET", "/api/v1/nodes?marker=3", "1.2", ""), http.StatusBadRequest, "Invalid uuid 3")
	if r := a.Do("GET", "/api/v1/nodes?marker=3&limit=1", "1.0", ""); r.Status != http.StatusOK || r.Body["nodes"].([]any)[0].(map[string]any)["id"] != float64(4) {
		t.Errorf("legacy integer marker: %d %v", r.Status, r.Body)
	}
	for _, bad := range []string{"0", "-1", "x"} {
		a.Expect(a.Do("GET", "/api/v1/nodes?limit="+bad, "1.2", ""), http.StatusBadRequest, "limit")
	}
}

func TestUpdateRules(t *testing.T) {
	a := templatesapitest.NewServer(t)
	uuid := create(a, "node-1.example.com", 1)["uuid"].(string)
	path := "/api/v1/nodes/" + uuid

	t.Run("8 Nova-style status updates", func(t *testing.T) {
		a.Expect(a.Do("PUT", path, "1.2", `{}`), http.StatusBadRequest, "No updates were requested")
		a.Expect(a.Do("PUT", path, "1.2", `{"status":"enabled"}`), http.StatusBadRequest, "No updates were requested")
		a.Expect(a.Do("PUT", path, "1.2", `{"status":"enabled","disabled_reason":"x"}`), http.StatusBadRequest, "'disabled_reason' with status 'enabled'")
		a.Expect(a.Do("PUT", path, "1.2", `{"status":"gone"}`), http.StatusBadRequest, "status")
		a.Expect(a.Do("PUT", path, "1.2", `{"forced_down":true}`), http.StatusBadRequest, "unknown field")

		r := a.Do("PUT", path, "1.2", `{"status":"disabled","disabled_reason":"disk failure"}`)
		n := r.Node()
		if r.Status != http.StatusOK || n["status"] != "disabled" || n["disabled_reason"] != "disk failure" ||
			n["fqdn"] != "node-1.example.com" || n["roles"] == nil || n["updated_at"] == nil || n["id"] != uuid {
			t.Fatalf("disable: %d %v", r.Status, r.Body)
		}
		r = a.Do("PUT", path, "1.2", `{"status":"enabled"}`)
		if r.Status != http.StatusOK || r.Node()["status"] != "enabled" || r.Node()["disabled_reason"] != nil {
			t.Fatalf("enable: %d %v", r.Status, r.Body)
		}
		r = a.Do("PUT", path, "1.2", `{"maintenance":true,"traits":["CUSTOM_A"],"roles":["controller","ceph-osd"],"fqdn":"renamed.example.com","environment_id":"`+nodestest.EnvironmentUUID(2)+`"}`)
		n = r.Node()
		if r.Status != http.StatusOK || n["maintenance"] != true || n["fqdn"] != "renamed.example.com" || n["environment_id"] != nodestest.EnvironmentUUID(2) {
			t.Fatalf("partial update: %d %v", r.Status, r.Body)
		}
		a.Expect(a.Do("PUT", path, "1.2", `{"environment_id":"`+nodestest.EnvironmentUUID(42)+`"}`), http.StatusBadRequest, "no such environment")
	})
	t.Run("create and delete", func(t *testing.T) {
		a.Expect(a.Do("POST", "/api/v1/nodes", "1.2", `{"fqdn":"renamed.example.com","environment_id":"`+nodestest.EnvironmentUUID(1)+`"}`), http.StatusConflict, "fqdn")
		a.Expect(a.Do("POST", "/api/v1/nodes", "1.2", `{"fqdn":"n.example.com"}`), http.StatusBadRequest, "environment_id is required")
		a.Expect(a.Do("POST", "/api/v1/nodes", "1.2", `{"fqdn":"n.example.com","environment_id":"`+nodestest.EnvironmentUUID(1)+`","id":7}`), http.StatusBadRequest, "id must be a UUID")
		r := a.Do("POST", "/api/v1/nodes", "1.0", `{"fqdn":"n.example.com","environment_id":1,"id":7}`)
		if r.Status != http.StatusCreated || r.Node()["id"] != float64(7) || r.Header.Get("Location") != "/api/v1/nodes/"+r.Node()["uuid"].(string) {
			t.Fatalf("create with legacy id: %d %v %v", r.Status, r.Body, r.Header)
		}
		r = a.Do("POST", "/api/v1/nodes", "1.2", `{"fqdn":"m.example.com","environment_id":"`+nodestest.EnvironmentUUID(1)+`","id":"`+unknownUUID+`"}`)
		if r.Status != http.StatusCreated || r.Node()["id"] != unknownUUID {
			t.Fatalf("create with UUID id: %d %v", r.Status, r.Body)
		}
		if r := a.Do("DELETE", "/api/v1/nodes/7", "1.0", ""); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %v", r.Status, r.Body)
		}
		a.Expect(a.Do("DELETE", "/api/v1/nodes/7", "1.0", ""), http.StatusNotFound, "not found")
		a.Expect(a.Do("GET", "/api/v1/nodes/"+unknownUUID+"x", "1.0", ""), http.StatusBadRequest, "Invalid id")
	})
}
