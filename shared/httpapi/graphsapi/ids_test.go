package graphsapi_test

import (
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/ident"
)

// TestUUIDIdentities: from microversion 1.2 every id in the graphs group's
// answers is a UUID and every path takes one; before 1.2 both forms work in
// paths and answers keep the integer ids.
func TestUUIDIdentities(t *testing.T) {
	a := newAPI(t)
	latest := &api{t: t, h: a.h, version: "latest"}
	cluster := graphstest.UUID("1")

	rel := decode[map[string]any](t, a.expect("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0"}`, 201, `"id":1`))
	relUUID := rel["uuid"].(string)
	plug := latest.expect("POST", "/api/v1/plugins", `{"name":"ldap","version":"3.0.0"}`, 201, "")
	plugUUID := decode[map[string]any](t, plug)["id"].(string)
	if !ident.IsUUID(plugUUID) || plug.header.Get("Location") != "/api/v1/plugins/"+plugUUID {
		t.Fatalf("plugin at 1.2: %s, Location %q", plug.body, plug.header.Get("Location"))
	}
	latest.expect("GET", "/api/v1/releases/"+relUUID, "", 200, `{"id":"`+relUUID+`","name":"mitaka"`)
	a.expect("GET", "/api/v1/releases/"+relUUID, "", 200, `{"id":1,"uuid":"`+relUUID+`"`)
	latest.expect("GET", "/api/v1/releases/1", "", 400, "Invalid uuid 1")
	latest.expect("GET", "/api/v1/plugins", "", 200, `[{"id":"`+plugUUID+`"`)

	// A cluster's settings name release and plugins by UUID from 1.2; the body takes either form.
	latest.expect("PUT", "/api/v1/clusters/"+cluster, `{"release_id":"`+relUUID+`","plugins":["`+plugUUID+`"]}`, 200,
		`{"id":"`+cluster+`","release_id":"`+relUUID+`","plugins":["`+plugUUID+`"]}`)
	a.expect("GET", "/api/v1/clusters/"+cluster, "", 200, `{"id":1,"release_id":1,"plugins":[1]}`)
	a.expect("PUT", "/api/v1/clusters/1", `{"release_id":"`+relUUID+`","plugins":[1]}`, 200, `{"id":1,"release_id":1,"plugins":[1]}`)
	latest.expect("GET", "/api/v1/clusters/1", "", 400, "Invalid uuid 1")
	latest.expect("GET", "/api/v1/clusters/"+graphstest.UUID("9"), "", 404, "not found")

	// Graphs: id, Location and relations' model_id.
	g := latest.expect("POST", "/api/v1/clusters/"+cluster+"/deployment_graphs/default", `{"tasks":[{"id":"a","type":"shell","role":"*"}]}`, 201,
		`"model":"cluster","model_id":"`+cluster+`"`)
	graphUUID := decode[map[string]any](t, g)["id"].(string)
	if g.header.Get("Location") != "/api/v1/graphs/"+graphUUID {
		t.Fatalf("graph Location %q, id %s", g.header.Get("Location"), graphUUID)
	}
	a.expect("GET", "/api/v1/graphs/"+graphUUID, "", 200, `"id":1,"uuid":"`+graphUUID+`"`)
	a.expect("GET", "/api/v1/graphs/1", "", 200, `"model_id":1`)
	latest.expect("GET", "/api/v1/graphs?clusters_ids="+cluster, "", 200, `"id":"`+graphUUID+`"`)
	latest.expect("GET", "/api/v1/graphs?clusters_ids=1", "", 400, "Invalid uuid 1")
	latest.expect("POST", "/api/v1/releases/"+relUUID+"/deployment_graphs/default", `{"tasks":[{"id":"r","type":"shell"}]}`, 201,
		`"model":"release","model_id":"`+relUUID+`"`)
	latest.expect("GET", "/api/v1/clusters/"+cluster+"/deployment_tasks", "", 200, `"id":"a"`)

	// Transactions were always named by UUID; from 1.2 their cluster is too.
	tx := latest.expect("POST", "/api/v1/graphs/execute", `{"cluster":"`+cluster+`","graphs":[{"type":"default"}]}`, 202, `"cluster_id":"`+cluster+`"`)
	txUUID := decode[map[string]any](t, tx)["uuid"].(string)
	latest.expect("GET", "/api/v1/transactions/"+txUUID, "", 200, `"cluster_id":"`+cluster+`"`)
	a.expect("GET", "/api/v1/transactions/"+txUUID, "", 200, `"cluster_id":1`)
	latest.expect("GET", "/api/v1/transactions?cluster_id="+cluster, "", 200, `"cluster_id":"`+cluster+`"`)
	a.expect("GET", "/api/v1/transactions?cluster_id="+cluster, "", 200, `"cluster_id":1`)

	latest.expect("DELETE", "/api/v1/graphs/"+graphUUID, "", 204, "")
	latest.expect("GET", "/api/v1/graphs/"+graphUUID, "", 404, "not found")
}
