package templatesapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi/templatesapitest"
	"github.com/tuningbox/tuningbox/shared/ident"
)

// latest is the microversion most tests run at; templates exist from 1.1.
const latest = "latest"

func createTemplate(a *templatesapitest.Client, doc string) map[string]any {
	return a.Expect(a.Do("POST", "/api/v1/deploy_templates", latest, doc), http.StatusCreated, "").Body
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
	a := templatesapitest.NewServer(t)
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
		{"5 the same step twice is accepted", doc("CUSTOM_TWO_DISKS", step("raid", "create_configuration", 1), step("raid", "create_configuration", 2)), "", 201},
		{"5 the core step only disabled", doc("CUSTOM_A", step("deploy", "deploy", 10)), "steps[0]: the core step deploy.deploy may only be disabled (priority 0), not given priority 10", 400},
		{"body must be JSON", `{"name":`, "not valid JSON", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.Expect(a.Do("POST", "/api/v1/deploy_templates", latest, tc.doc), tc.status, tc.msg)
		})
	}
	t.Run("4 string priority becomes an integer; 255-character name", func(t *testing.T) {
		body := createTemplate(a, doc("CUSTOM_"+strings.Repeat("X", 248), `{"interface":"bios","step":"apply","args":{},"priority":"25"}`))
		if body["steps"].([]any)[0].(map[string]any)["priority"] != float64(25) {
			t.Errorf("steps %v", body["steps"])
		}
	})
}

func TestTemplateCreateAndRead(t *testing.T) {
	a := templatesapitest.NewServer(t)
	var uuid string
	t.Run("2 uuid generated; 7 POST is 201 with Location", func(t *testing.T) {
		r := a.Expect(a.Do("POST", "/api/v1/deploy_templates", latest, mirror), http.StatusCreated, "")
		uuid, _ = r.Body["uuid"].(string)
		if !ident.IsUUID(uuid) || r.Header.Get("Location") != "/api/v1/deploy_templates/"+uuid {
			t.Fatalf("uuid %q, Location %q", uuid, r.Header.Get("Location"))
		}
		for _, k := range []string{"name", "steps", "extra", "created_at", "updated_at", "links"} {
			if _, ok := r.Body[k]; !ok {
				t.Errorf("created template lacks %q: %v", k, r.Body)
			}
		}
	})
	t.Run("2 a given uuid is kept", func(t *testing.T) {
		body := createTemplate(a, `{"uuid":"11111111-2222-4333-8444-555555555555",`+doc("CUSTOM_GIVEN", step("deploy", "x", 1))[1:])
		if body["uuid"] != "11111111-2222-4333-8444-555555555555" {
			t.Errorf("uuid %v", body["uuid"])
		}
	})
	t.Run("6 duplicate name and uuid are 409", func(t *testing.T) {
		a.Expect(a.Do("POST", "/api/v1/deploy_templates", latest, mirror), http.StatusConflict, "name CUSTOM_BM_CONFIG_RAID_DISK_MIRROR already exists")
		a.Expect(a.Do("POST", "/api/v1/deploy_templates", latest, `{"uuid":"`+uuid+`",`+doc("CUSTOM_OTHER", step("deploy", "x", 1))[1:]), http.StatusConflict, "uuid "+uuid)
	})
	t.Run("9 GET by uuid or name; unknown is 404", func(t *testing.T) {
		for _, ref := range []string{uuid, "CUSTOM_BM_CONFIG_RAID_DISK_MIRROR"} {
			r := a.Expect(a.Do("GET", "/api/v1/deploy_templates/"+ref, latest, ""), http.StatusOK, "")
			if r.Body["uuid"] != uuid || r.Body["name"] != "CUSTOM_BM_CONFIG_RAID_DISK_MIRROR" {
				t.Errorf("GET %s: %v", ref, r.Body)
			}
		}
		a.Expect(a.Do("GET", "/api/v1/deploy_templates/CUSTOM_NOPE", latest, ""), http.StatusNotFound, "not found")
		a.Expect(a.Do("GET", "/api/v1/deploy_templates/00000000-0000-4000-8000-000000000000", latest, ""), http.StatusNotFound, "not found")
	})
	t.Run("9 password-like step args are masked", func(t *testing.T) {
		createTemplate(a, doc("CUSTOM_CREDS", `{"interface":"management","step":"set_bmc","priority":5,
			"args":{"username":"root","password":"s3cret","bmc":{"auth_token":"t0k","ipmi_password":"p"}}}`))
		for _, r := range []templatesapitest.Reply{
			a.Do("GET", "/api/v1/deploy_templates/CUSTOM_CREDS", latest, ""),
			a.Do("GET", "/api/v1/deploy_templates?detail=true", latest, ""),
			a.Do("PATCH", "/api/v1/deploy_templates/CUSTOM_CREDS", latest, `[{"op":"add","path":"/extra/a","value":1}]`),
		} {
			if r.Status != http.StatusOK || strings.Contains(r.Raw, "s3cret") || strings.Contains(r.Raw, "t0k") ||
				strings.Count(r.Raw, `"******"`) != 3 || !strings.Contains(r.Raw, `"username":"root"`) {
				t.Errorf("%d %s", r.Status, r.Raw)
			}
		}
	})
	t.Run("11 DELETE is 204, then 404", func(t *testing.T) {
		if r := a.Do("DELETE", "/api/v1/deploy_templates/CUSTOM_GIVEN", latest, ""); r.Status != http.StatusNoContent || r.Raw != "" {
			t.Fatalf("delete: %d %s", r.Status, r.Raw)
		}
		a.Expect(a.Do("DELETE", "/api/v1/deploy_templates/CUSTOM_GIVEN", latest, ""), http.StatusNotFound, "not found")
		a.Expect(a.Do("GET", "/api/v1/deploy_templates/11111111-2222-4333-8444-555555555555", latest, ""), http.StatusNotFound, "not found")
	})
}

func listNames(r templatesapitest.Reply) string {
	var names []string
	for _, item := range r.Body["deploy_templates"].([]any) {
		names = append(names, fmt.Sprint(item.(map[string]any)["name"]))
	}
	return strings.Join(names, ",")
}

func TestTemplateList(t *testing.T) {
	a := templatesapitest.NewServer(t)
	for i, name := range []string{"CUSTOM_B", "CUSTOM_C", "CUSTOM_A"} {
		createTemplate(a, fmt.Sprintf(`{"uuid":"0000000%d-0000-4000-8000-000000000000","name":%q,"steps":[%s],"extra":{"n":%d}}`, 3-i, name, step("deploy", "x", 1), i))
	}
	list := func(query string) templatesapitest.Reply {
		return a.Do("GET", "/api/v1/deploy_templates"+query, latest, "")
	}

	t.Run("8 default items carry uuid, name and links, in creation order", func(t *testing.T) {
		r := a.Expect(list(""), http.StatusOK, "")
		if listNames(r) != "CUSTOM_B,CUSTOM_C,CUSTOM_A" || r.Body["next"] != nil {
			t.Fatalf("%s", r.Raw)
		}
		item := r.Body["deploy_templates"].([]any)[0].(map[string]any)
		if len(item) != 3 || item["uuid"] == nil || item["links"] == nil {
			t.Errorf("default item %v", item)
		}
		links := item["links"].([]any)
		if links[0].(map[string]any)["href"] != "/api/v1/deploy_templates/00000003-0000-4000-8000-000000000000" {
			t.Errorf("links %v", links)
		}
	})
	t.Run("8 detail shows everything", func(t *testing.T) {
		item := a.Expect(list("?detail=true"), http.StatusOK, "").Body["deploy_templates"].([]any)[0].(map[string]any)
		if len(item) != 7 || item["steps"] == nil || item["extra"] == nil {
			t.Errorf("detail item %v", item)
		}
		if listNames(list("?detail=false")) != "CUSTOM_B,CUSTOM_C,CUSTOM_A" {
			t.Error("detail=false")
		}
		a.Expect(list("?detail=maybe"), http.StatusBadRequest, "detail")
	})
	t.Run("8 fields selects attributes", func(t *testing.T) {
		item := a.Expect(list("?fields=name,extra"), http.StatusOK, "").Body["deploy_templates"].([]any)[0].(map[string]any)
		if len(item) != 3 || item["extra"] == nil || item["name"] != "CUSTOM_B" || item["links"] == nil {
			t.Errorf("fields item %v", item)
		}
		one := a.Expect(a.Do("GET", "/api/v1/deploy_templates/CUSTOM_A?fields=steps", latest, ""), http.StatusOK, "").Body
		if len(one) != 2 || one["steps"] == nil {
			t.Errorf("GET one with fields: %v", one)
		}
	})
	t.Run("8 detail with fields and unknown fields are 400", func(t *testing.T) {
		a.Expect(list("?detail=true&fields=name"), http.StatusBadRequest, "detail")
		a.Expect(list("?fields=name,colour"), http.StatusBadRequest, `"colour"`)
		a.Expect(a.Do("GET", "/api/v1/deploy_templates/CUSTOM_A?fields=nope", latest, ""), http.StatusBadRequest, `"nope"`)
	})
	t.Run("8 sort_key and sort_dir", func(t *testing.T) {
		for query, want := range map[string]string{
			"?sort_key=name":                    "CUSTOM_A,CUSTOM_B,CUSTOM_C",
			"?sort_key=name&sort_dir=desc":      "CUSTOM_C,CUSTOM_B,CUSTOM_A",
			"?sort_key=uuid":                    "CUSTOM_A,CUSTOM_C,CUSTOM_B",
			"?sort_dir=desc":                    "CUSTOM_A,CUSTOM_C,CUSTOM_B",
			"?sort_key=created_at&sort_dir=asc": "CUSTOM_B,CUSTOM_C,CUSTOM_A",
		} {
			if got := listNames(a.Expect(list(query), http.StatusOK, "")); got != want {
				t.Errorf("%s: %s, want %s", query, got, want)
			}
		}
		a.Expect(list("?sort_key=extra"), http.StatusBadRequest, "invalid field for sorting")
		a.Expect(list("?sort_key=steps"), http.StatusBadRequest, "invalid field for sorting")
		a.Expect(list("?sort_key=colour"), http.StatusBadRequest, "sort_key")
		a.Expect(list("?sort_dir=sideways"), http.StatusBadRequest, "sort direction")
	})
	t.Run("8 limit, marker and next", func(t *testing.T) {
		r := a.Expect(list("?limit=2&sort_key=name"), http.StatusOK, "")
		next, _ := r.Body["next"].(string)
		if listNames(r) != "CUSTOM_A,CUSTOM_B" || !strings.Contains(next, "limit=2") || !strings.Contains(next, "marker=00000003-0000-4000-8000-000000000000") || !strings.Contains(next, "sort_key=name") {
			t.Fatalf("first page %s", r.Raw)
		}
		r = a.Expect(a.Do("GET", next, latest, ""), http.StatusOK, "")
		if listNames(r) != "CUSTOM_C" || r.Body["next"] != nil {
			t.Fatalf("second page %s", r.Raw)
		}
		a.Expect(list("?marker=09999999-0000-4000-8000-000000000000"), http.StatusBadRequest, "marker")
		a.Expect(list("?limit=0"), http.StatusBadRequest, "limit")
		a.Expect(list("?limit=two"), http.StatusBadRequest, "limit")
		a.Expect(list("?limit=1&limit=2"), http.StatusBadRequest, "more than once")
		a.Expect(list("?page=2"), http.StatusBadRequest, "unknown query parameter")
	})
}

func TestTemplatePatch(t *testing.T) {
	a := templatesapitest.NewServer(t)
	createTemplate(a, doc("CUSTOM_TAKEN", step("deploy", "x", 1)))
	uuid := createTemplate(a, doc("CUSTOM_A", step("raid", "delete_configuration", 5), step("raid", "create_configuration", 10)))["uuid"].(string)
	path := "/api/v1/deploy_templates/" + uuid
	patch := func(ops string) templatesapitest.Reply { return a.Do("PATCH", path, latest, ops) }

	t.Run("10 only add, replace, remove under /name, /steps, /extra", func(t *testing.T) {
		a.Expect(patch(`[{"op":"replace","path":"/uuid","value":"11111111-2222-4333-8444-555555555555"}]`), http.StatusBadRequest, "/uuid cannot be changed")
		a.Expect(patch(`[{"op":"add","path":"/owner","value":"ops"}]`), http.StatusBadRequest, "cannot patch /owner")
		a.Expect(patch(`[{"op":"copy","from":"/name","path":"/extra/n"}]`), http.StatusBadRequest, `op "copy" is not supported`)
	})
	t.Run("10 add or remove beyond the end of steps", func(t *testing.T) {
		a.Expect(patch(`[{"op":"add","path":"/steps/3","value":`+step("bios", "y", 1)+`}]`), http.StatusBadRequest, "out of range")
		a.Expect(patch(`[{"op":"remove","path":"/steps/2"}]`), http.StatusBadRequest, "cannot apply patch")
	})
	t.Run("10 the result is validated", func(t *testing.T) {
		a.Expect(patch(`[{"op":"replace","path":"/name","value":"not a trait"}]`), http.StatusBadRequest, "name:")
		a.Expect(patch(`[{"op":"add","path":"/steps/-","value":`+step("deploy", "deploy", 1)+`}]`), http.StatusBadRequest, "the core step deploy.deploy may only be disabled")
		a.Expect(patch(`[{"op":"replace","path":"/steps/0/interface","value":"disk"}]`), http.StatusBadRequest, "interface must be one of")
	})
	t.Run("10 name clash is 409", func(t *testing.T) {
		a.Expect(patch(`[{"op":"replace","path":"/name","value":"CUSTOM_TAKEN"}]`), http.StatusConflict, "already exists")
	})
	t.Run("10 operations apply in order; 200 with the full template", func(t *testing.T) {
		r := a.Expect(patch(`[
			{"op":"replace","path":"/name","value":"CUSTOM_RENAMED"},
			{"op":"remove","path":"/steps/0"},
			{"op":"add","path":"/steps/-","value":`+step("bios", "apply_configuration", 7)+`},
			{"op":"replace","path":"/steps/0/priority","value":"12"},
			{"op":"add","path":"/extra/owner","value":"ops"}
		]`), http.StatusOK, "")
		steps, _ := json.Marshal(r.Body["steps"])
		if r.Body["name"] != "CUSTOM_RENAMED" || r.Body["uuid"] != uuid || r.Body["updated_at"] == nil ||
			string(steps) != `[{"args":{},"interface":"raid","priority":12,"step":"create_configuration"},{"args":{},"interface":"bios","priority":7,"step":"apply_configuration"}]` ||
			r.Body["extra"].(map[string]any)["owner"] != "ops" || r.Body["links"] == nil {
			t.Fatalf("patched %s", r.Raw)
		}
		a.Expect(a.Do("GET", "/api/v1/deploy_templates/CUSTOM_A", latest, ""), http.StatusNotFound, "")
		a.Expect(a.Do("GET", "/api/v1/deploy_templates/CUSTOM_RENAMED", latest, ""), http.StatusOK, "")
	})
	t.Run("10 patch of an unknown template is 404", func(t *testing.T) {
		a.Expect(a.Do("PATCH", "/api/v1/deploy_templates/CUSTOM_NOPE", latest, `[{"op":"remove","path":"/extra"}]`), http.StatusNotFound, "")
	})
}

// Reference "Microversions": a route not present at the requested version is 404 for reads, 405 for writes.
func TestTemplatesNeedMicroversion11(t *testing.T) {
	a := templatesapitest.NewServer(t)
	createTemplate(a, mirror)
	for _, v := range []string{"", "1.0"} {
		a.Expect(a.Do("GET", "/api/v1/deploy_templates", v, ""), http.StatusNotFound, "")
		a.Expect(a.Do("GET", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", v, ""), http.StatusNotFound, "")
		a.Expect(a.Do("POST", "/api/v1/deploy_templates", v, mirror), http.StatusMethodNotAllowed, "")
		a.Expect(a.Do("PATCH", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", v, `[]`), http.StatusMethodNotAllowed, "")
		a.Expect(a.Do("DELETE", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", v, ""), http.StatusMethodNotAllowed, "")
		a.Expect(a.Do("GET", "/api/v1/deploy_steps/defaults/1", v, ""), http.StatusNotFound, "")
		a.Expect(a.Do("PUT", "/api/v1/deploy_steps/defaults/1", v, `{"steps":[]}`), http.StatusMethodNotAllowed, "")
		a.Expect(a.Do("POST", "/api/v1/nodes/1/deploy_steps", v, `{"instance_traits":[]}`), http.StatusMethodNotAllowed, "")
	}
	a.Expect(a.Do("GET", "/api/v1/deploy_templates/CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", "1.1", ""), http.StatusOK, "")
}
