package app_test

import "testing"

// TestDeploymentInfoResourceOfTheEnvironment: through the API, a cluster's
// release naming a deployment_info_resource its environment does not define
// is a 400 (the ConfigDB's resource definitions decide), one it defines is
// taken; a plan whose conditions read a resource the environment lacks is a
// 409 naming it.
func TestDeploymentInfoResourceOfTheEnvironment(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, 201, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["nodes"]}`, 201, "")
	c.do("POST", "/api/v1/config/environments", `{"id":2,"hierarchy_levels":["nodes"]}`, 201, "")
	c.do("POST", "/api/v1/nodes", `{"id":5,"fqdn":"node-5.example.com","environment_id":1}`, 201, "")
	c.do("POST", "/api/v1/nodes", `{"id":6,"fqdn":"node-6.example.com","environment_id":2}`, 201, "")
	c.do("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0","deployment_info_resource":"ASTUTE"}`, 201, "")
	c.wantError("PUT", "/api/v1/clusters/1", `{"release_id":1}`, 400, `release mitaka-9.0 names \"ASTUTE\", which the environment of cluster 1 does not define`)
	c.do("PUT", "/api/v1/releases/1", `{"name":"mitaka","version":"9.0","deployment_info_resource":"astute"}`, 200, "")
	c.do("PUT", "/api/v1/clusters/1", `{"release_id":1}`, 200, "")
	c.wantError("PUT", "/api/v1/releases/1", `{"name":"mitaka","version":"9.0","deployment_info_resource":" astute"}`, 400, `names \" astute\"`)

	graph := `{"tasks":[{"id":"a","type":"shell","condition":{"yaql_exp":"$.get(debug) = true"}}]}`
	c.do("POST", "/api/v1/clusters/1/deployment_graphs/default", graph, 201, "")
	c.do("GET", "/api/v1/clusters/1/serialized_tasks", "", 200, `"skipped"`)
	c.do("POST", "/api/v1/clusters/2/deployment_graphs/default", graph, 201, "")
	c.wantError("GET", "/api/v1/clusters/2/serialized_tasks", "", 409, `the resource \"astute\" of the cluster's environment`)
}
