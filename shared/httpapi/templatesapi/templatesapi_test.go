package templatesapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/nodesapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
	"github.com/tuningbox/tuningbox/shared/templates"
)

type api struct {
	t   *testing.T
	srv *httptest.Server
}

func newAPI(t *testing.T) *api {
	t.Helper()
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	nodeSvc := nodes.NewService(b.Index, nodestest.Environments{Count: 9})
	mux := http.NewServeMux()
	nodesapi.Register(mux, nodeSvc)
	templatesapi.Register(mux, templates.NewService(b.Index), nodeSvc)
	srv := httptest.NewServer(httpapi.Wrap(mux, httpapi.Options{}))
	t.Cleanup(srv.Close)
	return &api{t: t, srv: srv}
}

type reply struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func (r reply) message() string {
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// do sends one request at microversion version ("" = no header, i.e. 1.0).
func (a *api) do(method, path, version, body string) reply {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "config "+version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			a.t.Fatalf("%s %s: body is not a JSON object: %s", method, path, raw)
		}
	}
	return out
}

func (a *api) expect(r reply, status int, msg string) reply {
	a.t.Helper()
	if r.status != status || !strings.Contains(r.message(), msg) {
		a.t.Fatalf("got %d %s, want %d with message containing %q", r.status, r.raw, status, msg)
	}
	return r
}

// latest is the microversion most tests run at; templates exist from 1.1.
const latest = "latest"

func (a *api) createTemplate(doc string) map[string]any {
	a.t.Helper()
	return a.expect(a.do("POST", "/api/v1/deploy_templates", latest, doc), http.StatusCreated, "").body
}

func step(iface, name string, priority int) string {
	return fmt.Sprintf(`{"interface":%q,"step":%q,"args":{},"priority":%d}`, iface, name, priority)
}

func doc(name string, steps ...string) string {
	return fmt.Sprintf(`{"name":%q,"steps":[%s]}`, name, strings.Join(steps, ","))
}

const mirror = `{"name":"CUSTOM_BM_CONFIG_RAID_DISK_MIRROR","steps":[{"interface":"raid","step":"create_configuration",
  "args":{"logical_disks":[{"size_gb":"MAX","raid_level":"1","is_root_volume":true}],"delete_configuration":true},"priority":10}]}`

// Reference "Deploy templates", validation rules.
func TestTemplateValidation(t *testing.T) {
	a := newAPI(t)
	ok := step("deploy", "x", 1)
	for _, tc := range []struct {
		name, doc, msg string
		status         int
	}{
		{"1 name required", `{"steps":[` + ok + `]}`, "name is required", 400},
		{"1 steps required", `{"name":"CUSTOM_A"}`, "steps is required", 400},
		{"1 no other top-level properties", `{"name":"CUSTOM_A","steps":[` + ok + `],"created_at":"now"}`, `unknown property "created_at"`, 400},
		{"2 uuid must be valid", `{"uuid":"1234","name":"CUSTOM_A","steps":[` + ok + `]}`, "Invalid uuid 1234", 400},
		{"3 name too long", doc("CUSTOM_"+strings.Repeat("X", 249), ok), "longer than 255", 400},
		{"3 name not a trait", doc("custom_raid", ok), "must match", 400},
		{"3 CUSTOM_ needs a suffix", doc("CUSTOM_", ok), "custom trait", 400},
		{"4 at least one step", doc("CUSTOM_A"), "at least one step", 400},
		{"4 interface", doc("CUSTOM_A", step("storage", "x", 1)), "interface must be one of power, management, deploy, bios, raid", 400},
		{"4 step name", doc("CUSTOM_A", step("deploy", "", 1)), "step must be a non-empty string", 400},
		{"4 args object", doc("CUSTOM_A", `{"interface":"deploy","step":"x","args":"a=b","priority":1}`), "args must be an object", 400},
		{"4 priority >= 0", doc("CUSTOM_A", step("deploy", "x", -5)), "priority must be an integer >= 0", 400},
		{"4 priority string of digits", doc("CUSTOM_A", `{"interface":"deploy","step":"x","args":{},"priority":"1e3"}`), "priority must be", 400},
		{"4 exactly four step properties", doc("CUSTOM_A", `{"interface":"deploy","step":"x","args":{},"priority":1,"name":"y"}`), `unknown property "name"`, 400},
		{"5 duplicate step named", doc("CUSTOM_A", step("raid", "create_configuration", 1), step("raid", "create_configuration", 2)), "duplicate deploy step raid.create_configuration", 400},
		{"body must be JSON", `{"name":`, "not valid JSON", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.expect(a.do("POST", "/api/v1/deploy_templates", latest, tc.doc), tc.status, tc.msg)
		})
	}
	t.Run("4 string priority becomes an integer; 255-character name", func(t *testing.T) {
		body := a.createTemplate(doc("CUSTOM_"+strings.Repeat("X", 248), `{"interface":"bios","step":"apply","args":{},"priority":"25"}`))
		if body["steps"].([]any)[0].(map[string]any)["priority"] != float64(25) {
			t.Errorf("steps %v", body["steps"])
		}
	})
}

func TestTemplateCreateAndRead(t *testing.T) {
	a := newAPI(t)
	var uuid string
	t.Run("2 uuid generated; 7 POST is 201 with Location", func(t *testing.T) {
		r := a.expect(a.do("POST", "/api/v1/deploy_templates", latest, mirror), http.StatusCreated, "")
		uuid, _ = r.body["uuid"].(string)
		if !nodes.IsUUID(uuid) || r.header.Get("Location") != "/api/v1/deploy_templates/"+uuid {
			t.Fatalf("uuid %q, Location %q", uuid, r.header.Get("Location"))
		}
		for _, k := range []string{"name", "steps", "extra", "created_at", "updated_at", "links"} {
			if _, ok := r.body[k]; !ok {
				t.Errorf("created template lacks %q: %v", k, r.body)
			}
		}
	})
	t.Run("2 a given uuid is kept", func(t *testing.T) {
		body := a.createTemplate(`{"uuid":"11111111-2222-4333-8444-555555555555",` + doc("CUSTOM_GIVEN", step("deploy", "x", 1))[1:])
		if body["uuid"] != "11111111-2222-4333-8444-555555555555" {
			t.Errorf("uuid %v", body["uuid"])
		}
	})
	t.Run("6 duplicate name and uuid are 409", func(t *testing.T) {
		a.expect(a.do("POST", "/api/v1/deploy_templates", latest, mirror), http.StatusConflict, "name CUSTOM_BM_CONFIG_RAID_DISK_MIRROR already exists")
		a.expect(a.do("POST", "/api/v1/deploy_templates", latest, `{"uuid":"`+uuid+`",`+doc("CUSTOM_OTHER", step("deploy", "x", 1))[1:]), http.StatusConflict, "uuid "+uuid)
	})
	t.Run("9 GET by uuid or name; unknown is 404", func(t *testing.T) {
		for _, ident := range []string{uuid, "CUSTOM_BM_CONFIG_RAID_DISK_MIRROR"} {
			r := a.expect(a.do("GET", "/api/v1/deploy_templates/"+ident, latest, ""), http.StatusOK, "")
			if r.body["uuid"] != uuid || r.body["name"] != "CUSTOM_BM_CONFIG_RAID_DISK_MIRROR" {
				t.Errorf("GET %s: %v", ident, r.body)
			}
		}
		a.expect(a.do("GET", "/api/v1/deploy_templates/CUSTOM_NOPE", latest, ""), http.StatusNotFound, "not found")
		a.expect(a.do("GET", "/api/v1/deploy_templates/00000000-0000-4000-8000-000000000000", latest, ""), http.StatusNotFound, "not found")
	})
	t.Run("9 password-like step args are masked", func(t *testing.T) {
		a.createTemplate(doc("CUSTOM_CREDS", `{"interface":"management","step":"set_bmc","priority":5,
			"args":{"username":"root","password":"s3cret","bmc":{"auth_token":"t0k","ipmi_password":"p"}}}`))
		for _, r := range []reply{
			a.do("GET", "/api/v1/deploy_templates/CUSTOM_CREDS", latest, ""),
			a.do("GET", "/api/v1/deploy_templates?detail=true", latest, ""),
			a.do("PATCH", "/api/v1/deploy_templates/CUSTOM_CREDS", latest, `[{"op":"add","path":"/extra/a","value":1}]`),
		} {
			if r.status != http.StatusOK || strings.Contains(r.raw, "s3cret") || strings.Contains(r.raw, "t0k") ||
				strings.Count(r.raw, `"******"`) != 3 || !strings.Contains(r.raw, `"username":"root"`) {
				t.Errorf("%d %s", r.status, r.raw)
			}
		}
	})
	t.Run("11 DELETE is 204, then 404", func(t *testing.T) {
		if r := a.do("DELETE", "/api/v1/deploy_templates/CUSTOM_GIVEN", latest, ""); r.status != http.StatusNoContent || r.raw != "" {
			t.Fatalf("delete: %d %s", r.status, r.raw)
		}
		a.expect(a.do("DELETE", "/api/v1/deploy_templates/CUSTOM_GIVEN", latest, ""), http.StatusNotFound, "not found")
		a.expect(a.do("GET", "/api/v1/deploy_templates/11111111-2222-4333-8444-555555555555", latest, ""), http.StatusNotFound, "not found")
	})
}

func listNames(r reply) string {
	var names []string
	for _, item := range r.body["deploy_templates"].([]any) {
		names = append(names, fmt.Sprint(item.(map[string]any)["name"]))
	}
	return strings.Join(names, ",")
}

func TestTemplateList(t *testing.T) {
	a := newAPI(t)
	for i, name := range []string{"CUSTOM_B", "CUSTOM_C", "CUSTOM_A"} {
		a.createTemplate(fmt.Sprintf(`{"uuid":"0000000%d-0000-4000-8000-000000000000","name":%q,"steps":[%s],"extra":{"n":%d}}`, 3-i, name, step("deploy", "x", 1), i))
	}
	list := func(query string) reply { return a.do("GET", "/api/v1/deploy_templates"+query, latest, "") }

	t.Run("8 default items carry uuid, name and links, in creation order", func(t *testing.T) {
		r := a.expect(list(""), http.StatusOK, "")
		if listNames(r) != "CUSTOM_B,CUSTOM_C,CUSTOM_A" || r.body["next"] != nil {
			t.Fatalf("%s", r.raw)
		}
		item := r.body["deploy_templates"].([]any)[0].(map[string]any)
		if len(item) != 3 || item["uuid"] == nil || item["links"] == nil {
			t.Errorf("default item %v", item)
		}
		links := item["links"].([]any)
		if links[0].(map[string]any)["href"] != "/api/v1/deploy_templates/00000003-0000-4000-8000-000000000000" {
			t.Errorf("links %v", links)
		}
	})
	t.Run("8 detail shows everything", func(t *testing.T) {
		item := a.expect(list("?detail=true"), http.StatusOK, "").body["deploy_templates"].([]any)[0].(map[string]any)
		if len(item) != 7 || item["steps"] == nil || item["extra"] == nil {
			t.Errorf("detail item %v", item)
		}
		if listNames(list("?detail=false")) != "CUSTOM_B,CUSTOM_C,CUSTOM_A" {
			t.Error("detail=false")
		}
		a.expect(list("?detail=maybe"), http.StatusBadRequest, "detail")
	})
	t.Run("8 fields selects attributes", func(t *testing.T) {
		item := a.expect(list("?fields=name,extra"), http.StatusOK, "").body["deploy_templates"].([]any)[0].(map[string]any)
		if len(item) != 3 || item["extra"] == nil || item["name"] != "CUSTOM_B" || item["links"] == nil {
			t.Errorf("fields item %v", item)
		}
		one := a.expect(a.do("GET", "/api/v1/deploy_templates/CUSTOM_A?fields=steps", latest, ""), http.StatusOK, "").body
		if len(one) != 2 || one["steps"] == nil {
			t.Errorf("GET one with fields: %v", one)
		}
	})
	t.Run("8 detail with fields and unknown fields are 400", func(t *testing.T) {
		a.expect(list("?detail=true&fields=name"), http.StatusBadRequest, "detail")
		a.expect(list("?fields=name,colour"), http.StatusBadRequest, `"colour"`)
		a.expect(a.do("GET", "/api/v1/deploy_templates/CUSTOM_A?fields=nope", latest, ""), http.StatusBadRequest, `"nope"`)
	})
	t.Run("8 sort_key and sort_dir", func(t *testing.T) {
		for query, want := range map[string]string{
			"?sort_key=name":                    "CUSTOM_A,CUSTOM_B,CUSTOM_C",
			"?sort_key=name&sort_dir=desc":      "CUSTOM_C,CUSTOM_B,CUSTOM_A",
			"?sort_key=uuid":                    "CUSTOM_A,CUSTOM_C,CUSTOM_B",
			"?sort_dir=desc":                    "CUSTOM_A,CUSTOM_C,CUSTOM_B",
			"?sort_key=created_at&sort_dir=asc": "CUSTOM_B,CUSTOM_C,CUSTOM_A",
		} {
			if got := listNames(a.expect(list(query), http.StatusOK, "")); got != want {
				t.Errorf("%s: %s, want %s", query, got, want)
			}
		}
		a.expect(list("?sort_key=extra"), http.StatusBadRequest, "invalid field for sorting")
		a.expect(list("?sort_key=steps"), http.StatusBadRequest, "invalid field for sorting")
		a.expect(list("?sort_key=colour"), http.StatusBadRequest, "sort_key")
		a.expect(list("?sort_dir=sideways"), http.StatusBadRequest, "sort direction")
	})
	t.Run("8 limit, marker and next", func(t *testing.T) {
		r := a.expect(list("?limit=2&sort_key=name"), http.StatusOK, "")
		next, _ := r.body["next"].(string)
		if listNames(r) != "CUSTOM_A,CUSTOM_B" || !strings.Contains(next, "limit=2") || !strings.Contains(next, "marker=00000003-0000-4000-8000-000000000000") || !strings.Contains(next, "sort_key=name") {
			t.Fatalf("first page %s", r.raw)
		}
		r = a.expect(a.do("GET", next, latest, ""), http.StatusOK, "")
		if listNames(r) != "CUSTOM_C" || r.body["next"] != nil {
			t.Fatalf("second page %s", r.raw)
		}
		a.expect(list("?marker=09999999-0000-4000-8000-000000000000"), http.StatusBadRequest, "marker")
		a.expect(list("?limit=0"), http.StatusBadRequest, "limit")
		a.expect(list("?limit=two"), http.StatusBadRequest, "limit")
		a.expect(list("?limit=1&limit=2"), http.StatusBadRequest, "more than once")
		a.expect(list("?page=2"), http.StatusBadRequest, "unknown query parameter")
	})
}

func TestTemplatePatch(t *testing.T) {
	a := newAPI(t)
	a.createTemplate(doc("CUSTOM_TAKEN", step("deploy", "x", 1)))
	uuid := a.createTemplate(doc("CUSTOM_A", step("raid", "delete_configuration", 5), step("raid", "create_configuration", 10)))["uuid"].(string)
	path := "/api/v1/deploy_templates/" + uuid
	patch := func(ops string) reply { return a.do("PATCH", path, latest, ops) }

	t.Run("10 only add, replace, remove under /name, /steps, /extra", func(t *testing.T) {
		a.expect(patch(`[{"op":"replace","path":"/uuid","value":"11111111-2222-4333-8444-555555555555"}]`), http.StatusBadRequest, "/uuid cannot be changed")
		a.expect(patch(`[{"op":"add","path":"/owner","value":"ops"}]`), http.StatusBadRequest, "cannot patch /owner")
		a.expect(patch(`[{"op":"copy","from":"/name","path":"/extra/n"}]`), http.StatusBadRequest, `op "copy" is not supported`)
	})
	t.Run("10 add or remove beyond the end of steps", func(t *testing.T) {
		a.expect(patch(`[{"op":"add","path":"/steps/3","value":`+step("bios", "y", 1)+`}]`), http.StatusBadRequest, "out of range")
		a.expect(patch(`[{"op":"remove","path":"/steps/2"}]`), http.StatusBadRequest, "cannot apply patch")
	})
	t.Run("10 the result is validated", func(t *testing.T) {
		a.expect(patch(`[{"op":"replace","path":"/name","value":"not a trait"}]`), http.StatusBadRequest, "name:")
		a.expect(patch(`[{"op":"add","path":"/steps/-","value":`+step("raid", "create_configuration", 1)+`}]`), http.StatusBadRequest, "duplicate deploy step")
		a.expect(patch(`[{"op":"replace","path":"/steps/0/interface","value":"disk"}]`), http.StatusBadRequest, "interface must be one of")
	})
	t.Run("10 name clash is 409", func(t *testing.T) {
		a.expect(patch(`[{"op":"replace","path":"/name","value":"CUSTOM_TAKEN"}]`), http.StatusConflict, "already exists")
	})
	t.Run("10 operations apply in order; 200 with the full template", func(t *testing.T) {
		r := a.expect(patch(`[
			{"op":"replace","path":"/name","value":"CUSTOM_RENAMED"},
			{"op":"remove","path":"/steps/0"},
			{"op":"add","path":"/steps/-","value":`+step("bios", "apply_configuration", 7)+`},
			{"op":"replace","path":"/steps/0/priority","value":"12"},
			{"op":"add","path":"/extra/owner","value":"ops"}
		]`), http.StatusOK, "")
		steps, _ := json.Marshal(r.body["steps"])
		if r.body["name"] != "CUSTOM_RENAMED" || r.body["uuid"] != uuid || r.body["updated_at"] == nil ||
			string(steps) != `[{"args":{},"interface":"raid","priority":12,"step":"create_configuration"},{"args":{},"interface":"bios","priority":7,"step":"apply_configuration"}]` ||
			r.body["extra"].(map[string]any)["owner"] != "ops" || r.body["links"] == nil {
			t.Fatalf("patched %s", r.raw)
		}
		a.expect(a.do("GET", "/api/v1/deploy_templates/CUSTOM_A", latest, ""), http.StatusNotFound, "")
		a.expect(a.do("GET", "/api/v1/deploy_templates/CUSTOM_RENAMED", latest, ""), http.StatusOK, "")
	})
	t.Run("10 patch of an unknown template is 404", func(t *testing.T) {
		a.expect(a.do("PATCH", "/api/v1/deploy_templates/CUSTOM_NOPE", latest, `[{"op":"remove","path":"/extra"}]`), http.StatusNotFound, "")
	})
}

// Reference "Microversions": a route not present at the requested version is 404 for reads, 405 for writes.
func TestTemplatesNeedMicroversion11(t *testing.T) {
	a := newAPI(t)
	a.createTemplate(mirror)
	for _, v := range []string{"", "1.0"} {
		a.expect(a.do("GET", "/api/v1/deploy_templates", v, ""), http.StatusNotFound, "")
		a.expect(a.do("GET", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", v, ""), http.StatusNotFound, "")
		a.expect(a.do("POST", "/api/v1/deploy_templates", v, mirror), http.StatusMethodNotAllowed, "")
		a.expect(a.do("PATCH", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", v, `[]`), http.StatusMethodNotAllowed, "")
		a.expect(a.do("DELETE", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", v, ""), http.StatusMethodNotAllowed, "")
		a.expect(a.do("GET", "/api/v1/deploy_steps/defaults/1", v, ""), http.StatusNotFound, "")
		a.expect(a.do("PUT", "/api/v1/deploy_steps/defaults/1", v, `{"steps":[]}`), http.StatusMethodNotAllowed, "")
		a.expect(a.do("POST", "/api/v1/nodes/1/deploy_steps", v, `{"instance_traits":[]}`), http.StatusMethodNotAllowed, "")
	}
	a.expect(a.do("GET", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", "1.1", ""), http.StatusOK, "")
}
