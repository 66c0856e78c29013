package templatesapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi/templatesapitest"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
)

// createNode registers a node in environment env and returns its UUID.
func createNode(a *templatesapitest.Client, fqdn string, env int, traits ...string) string {
	tj, _ := json.Marshal(traits)
	r := a.Expect(a.Do("POST", "/api/v1/nodes", latest, fmt.Sprintf(`{"fqdn":%q,"environment_id":%q,"traits":%s}`, fqdn, nodestest.EnvironmentUUID(int64(env)), tj)), http.StatusCreated, "")
	return r.Node()["id"].(string)
}

func renderSteps(r templatesapitest.Reply) string {
	var out []string
	for _, s := range r.Body["deploy_steps"].([]any) {
		m := s.(map[string]any)
		out = append(out, fmt.Sprintf("%s.%s %v", m["interface"], m["step"], m["priority"]))
	}
	return strings.Join(out, ", ")
}

// The reference's worked example through the API: defaults [deploy_start 50,
// power_one 40, deploy_middle 40, deploy_end 20] + a template {deploy_start 200,
// power_one 100} -> [deploy_start 200, power_one 100, deploy_middle 40, deploy_end 20].
func TestDeployStepsWorkedExample(t *testing.T) {
	a := templatesapitest.NewServer(t)
	r := a.Expect(a.Do("PUT", "/api/v1/deploy_steps/defaults/"+nodestest.EnvironmentUUID(1), latest, `{"steps":[`+
		step("deploy", "deploy_start", 50)+","+step("power", "power_one", 40)+","+
		step("deploy", "deploy_middle", 40)+","+step("deploy", "deploy_end", 20)+`]}`), http.StatusOK, "")
	if r.Body["environment_id"] != nodestest.EnvironmentUUID(1) || len(r.Body["steps"].([]any)) != 4 {
		t.Fatalf("defaults %s", r.Raw)
	}
	createTemplate(a, doc("CUSTOM_EXAMPLE", step("deploy", "deploy_start", 200), step("power", "power_one", 100)))
	node := createNode(a, "node-1.example.com", 1, "CUSTOM_EXAMPLE", "CUSTOM_CLASS_A")

	r = a.Expect(a.Do("POST", "/api/v1/nodes/"+node+"/deploy_steps", latest, `{"instance_traits":["CUSTOM_EXAMPLE","CUSTOM_CLASS_A"]}`), http.StatusOK, "")
	if got := renderSteps(r); got != "deploy.deploy_start 200, power.power_one 100, deploy.deploy_middle 40, deploy.deploy_end 20" {
		t.Fatalf("steps %s", got)
	}
	r = a.Expect(a.Do("POST", "/api/v1/nodes/"+node+"/deploy_steps", latest, `{"instance_traits":[]}`), http.StatusOK, "")
	if got := renderSteps(r); got != "deploy.deploy_start 50, power.power_one 40, deploy.deploy_middle 40, deploy.deploy_end 20" {
		t.Fatalf("defaults only: %s", got)
	}
	// Before 1.2 the node's legacy id works too.
	r = a.Expect(a.Do("POST", "/api/v1/nodes/1/deploy_steps", "1.1", `{"instance_traits":["CUSTOM_EXAMPLE"]}`), http.StatusOK, "")
	if !strings.HasPrefix(renderSteps(r), "deploy.deploy_start 200") {
		t.Fatalf("at 1.1: %s", renderSteps(r))
	}
}

func TestDeployStepsErrors(t *testing.T) {
	a := templatesapitest.NewServer(t)
	a.Expect(a.Do("PUT", "/api/v1/deploy_steps/defaults/1", "1.1", `{"steps":[`+step("deploy", "deploy", 100)+`]}`), http.StatusOK, "")
	createTemplate(a, doc("CUSTOM_A", step("raid", "create_configuration", 10)))
	createTemplate(a, doc("CUSTOM_B", step("raid", "create_configuration", 20)))
	node := createNode(a, "node-1.example.com", 1, "CUSTOM_A", "CUSTOM_B")
	path := "/api/v1/nodes/" + node + "/deploy_steps"

	t.Run("every validation error joined", func(t *testing.T) {
		a.Expect(a.Do("POST", path, latest, `{"instance_traits":["CUSTOM_A","CUSTOM_B","CUSTOM_NOT_ON_NODE","bad"]}`), http.StatusBadRequest,
			"instance trait CUSTOM_NOT_ON_NODE is not a trait of the node; "+
				`instance trait: trait name "bad" must match ^CUSTOM_[A-Z0-9_]+$ or be a standard trait (A-Z, 0-9, _)`)
	})
	t.Run("request shape", func(t *testing.T) {
		a.Expect(a.Do("POST", path, latest, `{}`), http.StatusBadRequest, "instance_traits is required")
		a.Expect(a.Do("POST", path, latest, `{"instance_traits":"CUSTOM_A"}`), http.StatusBadRequest, "instance_traits")
		a.Expect(a.Do("POST", path, latest, `{"instance_traits":[],"traits":[]}`), http.StatusBadRequest, "unknown field")
	})
	t.Run("node identity", func(t *testing.T) {
		a.Expect(a.Do("POST", "/api/v1/nodes/1/deploy_steps", "1.2", `{"instance_traits":[]}`), http.StatusBadRequest, "Invalid uuid 1")
		a.Expect(a.Do("POST", "/api/v1/nodes/8221f906-208b-44a5-b575-f8e8a59c4a84/deploy_steps", "1.2", `{"instance_traits":[]}`), http.StatusNotFound, "not found")
	})
}

func TestDefaultsAPI(t *testing.T) {
	a := templatesapitest.NewServer(t)
	a.Expect(a.Do("GET", "/api/v1/deploy_steps/defaults/2", "1.1", ""), http.StatusNotFound, "no default deploy steps")
	r := a.Expect(a.Do("PUT", "/api/v1/deploy_steps/defaults/2", "1.1", `{"steps":[{"interface":"management","step":"login","args":{"password":"pw"},"priority":"3"}]}`), http.StatusOK, "")
	if r.Body["environment_id"] != float64(2) || strings.Contains(r.Raw, `"pw"`) || !strings.Contains(r.Raw, `"priority":3`) {
		t.Fatalf("PUT at 1.1: %s", r.Raw)
	}
	r = a.Expect(a.Do("GET", "/api/v1/deploy_steps/defaults/"+nodestest.EnvironmentUUID(2), "1.2", ""), http.StatusOK, "")
	if r.Body["environment_id"] != nodestest.EnvironmentUUID(2) || !strings.Contains(r.Raw, `"password":"******"`) {
		t.Fatalf("GET at 1.2: %s", r.Raw)
	}
	a.Expect(a.Do("GET", "/api/v1/deploy_steps/defaults/2", "1.2", ""), http.StatusBadRequest, "Invalid uuid 2")
	a.Expect(a.Do("GET", "/api/v1/deploy_steps/defaults/42", "1.1", ""), http.StatusNotFound, "environment 42 not found")
	a.Expect(a.Do("PUT", "/api/v1/deploy_steps/defaults/2", "1.1", `{"steps":[`+step("deploy", "a", 1)+","+step("deploy", "a", 2)+`]}`), http.StatusBadRequest, "duplicate deploy step deploy.a")
	a.Expect(a.Do("PUT", "/api/v1/deploy_steps/defaults/2", "1.1", `{"defaults":[]}`), http.StatusBadRequest, `unknown property "defaults"`)
	if r := a.Do("DELETE", "/api/v1/deploy_steps/defaults/2", "1.1", ""); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.Status, r.Raw)
	}
	a.Expect(a.Do("DELETE", "/api/v1/deploy_steps/defaults/2", "1.1", ""), http.StatusNotFound, "")
}

// TestDeployStepsSameStepTwice: one template partitions two disks with the
// same raid step, a second template adds a third; the plan runs all three, each
// with its own args, higher priority first, equal priorities in written order.
func TestDeployStepsSameStepTwice(t *testing.T) {
	a := templatesapitest.NewServer(t)
	disk := func(dev string, priority int) string {
		return fmt.Sprintf(`{"interface":"raid","step":"create_configuration","priority":%d,`+
			`"args":{"logical_disks":[{"size_gb":"MAX","raid_level":"1","physical_disks":[%q]}],"delete_configuration":false}}`, priority, dev)
	}
	a.Expect(a.Do("PUT", "/api/v1/deploy_steps/defaults/1", "1.1", `{"steps":[`+step("deploy", "deploy", 100)+","+
		step("raid", "create_configuration", 0)+","+step("deploy", "write_image", 40)+`]}`), http.StatusOK, "")
	createTemplate(a, doc("CUSTOM_RAID_TWO_DISKS", disk("sda", 60), disk("sdb", 60)))
	createTemplate(a, doc("CUSTOM_RAID_SYSTEM", disk("nvme0", 80)))
	node := createNode(a, "node-1.example.com", 1, "CUSTOM_RAID_TWO_DISKS", "CUSTOM_RAID_SYSTEM")

	r := a.Expect(a.Do("POST", "/api/v1/nodes/"+node+"/deploy_steps", latest,
		`{"instance_traits":["CUSTOM_RAID_TWO_DISKS","CUSTOM_RAID_SYSTEM"]}`), http.StatusOK, "")
	var plan []string
	for _, s := range r.Body["deploy_steps"].([]any) {
		m := s.(map[string]any)
		entry := fmt.Sprintf("%s.%s %v", m["interface"], m["step"], m["priority"])
		if disks, ok := m["args"].(map[string]any)["logical_disks"].([]any); ok {
			entry += fmt.Sprintf(" %v", disks[0].(map[string]any)["physical_disks"])
		}
		plan = append(plan, entry)
	}
	want := "deploy.deploy 100; raid.create_configuration 80 [nvme0]; raid.create_configuration 60 [sda]; " +
		"raid.create_configuration 60 [sdb]; deploy.write_image 40"
	if got := strings.Join(plan, "; "); got != want {
		t.Fatalf("plan %s\nwant %s", got, want)
	}
	t.Logf("plan with the raid step three times: %s", strings.Join(plan, "; "))
}
