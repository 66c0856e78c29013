package templatesapi_test

import (
	"net/http"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi/templatesapitest"
)

// Spec 003: "the validation of the node must fail if any of the enabled
// Deploy Templates are not supported on that node", in Ironic's shape.
func TestValidateNode(t *testing.T) {
	a := templatesapitest.NewServer(t)
	createTemplate(a, doc("CUSTOM_RAID", step("raid", "create_configuration", 10), step("deploy", "deploy", 0)))
	createTemplate(a, doc("CUSTOM_BIOS", step("bios", "apply_configuration", 20)))
	createTemplate(a, doc("CUSTOM_UNUSED", step("management", "reset", 5)))
	node := createNode(a, "node-1.example.com", 1, "CUSTOM_RAID", "CUSTOM_BIOS")
	path := "/api/v1/nodes/" + node + "/validate"
	expect := func(body map[string]any, iface string, result any, reason any) {
		t.Helper()
		got, _ := body[iface].(map[string]any)
		if got == nil || got["result"] != result || got["reason"] != reason {
			t.Errorf("%s: %v, want result %v reason %v", iface, got, result, reason)
		}
	}

	// No interfaces listed: everything is supported.
	r := a.Expect(a.Do("GET", path, latest, ""), http.StatusOK, "")
	for _, iface := range []string{"power", "management", "deploy", "bios", "raid"} {
		expect(r.Body, iface, true, nil)
	}
	if len(r.Body) != 5 {
		t.Errorf("interfaces: %v", r.Body)
	}

	// The node supports RAID but not its create_configuration, and no bios at all;
	// the disabled deploy.deploy and the template the node does not enable need nothing.
	a.Expect(a.Do("PUT", "/api/v1/nodes/"+node, latest, `{"interfaces":{"raid":["delete_configuration"],"deploy":["*"],"power":["*"]}}`), http.StatusOK, "")
	r = a.Expect(a.Do("GET", path, latest, ""), http.StatusOK, "")
	expect(r.Body, "raid", false, "deploy template CUSTOM_RAID: step raid.create_configuration is not supported by the node")
	expect(r.Body, "bios", false, "deploy template CUSTOM_BIOS: step bios.apply_configuration is not supported by the node")
	expect(r.Body, "deploy", true, nil)
	expect(r.Body, "power", true, nil)
	expect(r.Body, "management", nil, "not supported")

	a.Expect(a.Do("PUT", "/api/v1/nodes/"+node, latest, `{"interfaces":{"raid":["*"],"bios":["apply_configuration"]}}`), http.StatusOK, "")
	r = a.Expect(a.Do("GET", path, latest, ""), http.StatusOK, "")
	expect(r.Body, "raid", true, nil)
	expect(r.Body, "bios", true, nil)
	expect(r.Body, "deploy", nil, "not supported")

	// null makes everything supported again; the legacy id works before 1.2, and deploy templates exist from 1.1.
	n := a.Expect(a.Do("PUT", "/api/v1/nodes/"+node, latest, `{"interfaces":null}`), http.StatusOK, "").Node()
	if n["interfaces"] != nil {
		t.Errorf("interfaces after null: %v", n["interfaces"])
	}
	expect(a.Expect(a.Do("GET", "/api/v1/nodes/1/validate", "1.1", ""), http.StatusOK, "").Body, "raid", true, nil)
	a.Expect(a.Do("GET", "/api/v1/nodes/1/validate", "1.0", ""), http.StatusNotFound, "")
	a.Expect(a.Do("GET", "/api/v1/nodes/1/validate", latest, ""), http.StatusBadRequest, "Invalid uuid 1")

	// Malformed interfaces are refused.
	for body, want := range map[string]string{
		`{"interfaces":{"RAID":["x"]}}`:     "not an interface name",
		`{"interfaces":{"raid":[""]}}`:      "1 to 255 characters",
		`{"interfaces":{"raid":["a","a"]}}`: "listed twice",
		`{"interfaces":["raid"]}`:           "interfaces must be an object",
	} {
		a.Expect(a.Do("PUT", "/api/v1/nodes/"+node, latest, body), http.StatusBadRequest, want)
	}
}
