package localstack

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The other endpoint groups over HTTP, on the fixture's environment: the node
// registry, deploy templates and their merge, and a deployment graph run to the
// end by an agent. On the emulators this drives the graphs' conditional
// multi-item writes (transaction, sub-transaction, node progress, cluster lock)
// through DynamoDB.

func TestHTTPNodesTemplatesAndGraphs(t *testing.T) {
	f := newFixture(t)
	api := f.under("/api/v1")
	suffix := randomSuffix()
	const v11 = "config 1.1"

	var node struct {
		Node struct {
			ID   int64  `json:"id"`
			UUID string `json:"uuid"`
		} `json:"node"`
	}
	trait := "CUSTOM_BB_" + strings.ToUpper(suffix)
	api.want(http.StatusCreated, "POST", "/nodes", map[string]any{
		"fqdn": "bb-" + suffix + ".example.com", "environment_id": f.env.ID, "traits": []string{trait},
	}).decode(t, &node)
	t.Cleanup(func() { api.want(http.StatusNoContent, "DELETE", "/nodes/"+node.Node.UUID, nil) })
	api.want(http.StatusOK, "GET", "/nodes?hostname=bb-"+suffix, nil)

	// Deploy templates merged into the environment's default steps.
	api.want(http.StatusOK, "PUT", fmt.Sprintf("/deploy_steps/defaults/%d", f.env.ID), map[string]any{"steps": []map[string]any{
		{"interface": "deploy", "step": "deploy", "priority": 100, "args": map[string]any{}},
		{"interface": "bios", "step": "apply_configuration", "priority": 50, "args": map[string]any{}},
	}}, "OpenStack-API-Version", v11)
	api.want(http.StatusCreated, "POST", "/deploy_templates", map[string]any{"name": trait, "steps": []map[string]any{
		{"interface": "bios", "step": "apply_configuration", "priority": 150, "args": map[string]any{"settings": []any{}}},
		{"interface": "raid", "step": "apply_configuration", "priority": 10, "args": map[string]any{}},
	}}, "OpenStack-API-Version", v11)
	t.Cleanup(func() {
		api.want(http.StatusNoContent, "DELETE", "/deploy_templates/"+trait, nil, "OpenStack-API-Version", v11)
	})
	var plan struct {
		Steps []struct {
			Interface string `json:"interface"`
			Priority  int    `json:"priority"`
		} `json:"deploy_steps"`
	}
	api.want(http.StatusOK, "POST", "/nodes/"+node.Node.UUID+"/deploy_steps", map[string]any{"instance_traits": []string{trait}},
		"OpenStack-API-Version", v11).decode(t, &plan)
	var got []string
	for _, s := range plan.Steps {
		got = append(got, fmt.Sprint(s.Interface, s.Priority))
	}
	if want := []string{"bios150", "deploy100", "raid10"}; !slices.Equal(got, want) {
		t.Errorf("deploy steps %v, want %v", got, want)
	}

	// A release graph and a cluster override, merged, ordered and run.
	var release struct {
		ID int64 `json:"id"`
	}
	api.want(http.StatusCreated, "POST", "/releases", map[string]any{"name": "bb-" + suffix, "version": "1"}).decode(t, &release)
	cluster := fmt.Sprintf("/clusters/%d", f.env.ID)
	t.Cleanup(func() {
		api.want(http.StatusOK, "PUT", cluster, map[string]any{"release_id": nil, "plugins": []int64{}})
		api.want(http.StatusNoContent, "DELETE", fmt.Sprintf("/releases/%d", release.ID), nil)
	})
	api.want(http.StatusOK, "PUT", cluster, map[string]any{"release_id": release.ID, "plugins": []int64{}})
	api.want(http.StatusCreated, "POST", fmt.Sprintf("/releases/%d/deployment_graphs/default", release.ID), map[string]any{"tasks": []map[string]any{
		{"id": "hiera", "type": "puppet"}, {"id": "ntp", "type": "puppet", "requires": []string{"hiera"}},
	}})
	api.want(http.StatusCreated, "POST", cluster+"/deployment_graphs/default", map[string]any{"tasks": []map[string]any{
		{"id": "netconfig", "type": "shell", "requires": []string{"hiera"}, "required_for": []string{"ntp"}},
	}})
	var tx struct {
		UUID   string `json:"uuid"`
		Status string `json:"status"`
	}
	api.want(http.StatusAccepted, "POST", "/graphs/execute", map[string]any{"cluster": f.env.ID, "graphs": []map[string]any{{"type": "default"}}}).decode(t, &tx)
	api.want(http.StatusConflict, "POST", "/graphs/execute", map[string]any{"cluster": f.env.ID, "graphs": []map[string]any{{"type": "default"}}})
	agent := fmt.Sprintf("/transactions/%s/nodes/%d", tx.UUID, node.Node.ID)
	var ran []string
	for range 10 {
		var claim struct {
			Action string `json:"action"`
			Task   struct {
				ID string `json:"id"`
			} `json:"task"`
		}
		api.want(http.StatusOK, "POST", agent+"/claim", nil).decode(t, &claim)
		if claim.Action == "done" {
			break
		}
		if claim.Action != "task" {
			t.Fatalf("claim answered %q", claim.Action)
		}
		ran = append(ran, claim.Task.ID)
		api.want(http.StatusOK, "POST", agent+"/result", map[string]any{"task": claim.Task.ID, "status": "ready"})
	}
	if want := []string{"hiera", "netconfig", "ntp"}; !slices.Equal(ran, want) {
		t.Errorf("the agent ran %v, want %v", ran, want)
	}
	api.want(http.StatusOK, "GET", "/transactions/"+tx.UUID, nil).decode(t, &tx)
	if tx.Status != "ready" {
		t.Errorf("transaction status %q after every task, want ready", tx.Status)
	}

	// Spec 002's deploy, serialized_tasks, and the agent's claim by cluster:
	// a task, then, once the transaction is stopped, idle after a 1 s long poll.
	var serialized struct {
		Nodes []struct {
			Tasks []struct {
				Task struct {
					ID string `json:"id"`
				} `json:"task"`
			} `json:"tasks"`
		} `json:"nodes"`
	}
	api.want(http.StatusOK, "GET", cluster+"/serialized_tasks/", nil).decode(t, &serialized)
	if len(serialized.Nodes) != 1 || len(serialized.Nodes[0].Tasks) != 3 || serialized.Nodes[0].Tasks[2].Task.ID != "ntp" {
		t.Errorf("serialized tasks %+v", serialized)
	}
	api.want(http.StatusAccepted, "PUT", cluster+"/deploy?graph_type=default", nil).decode(t, &tx)
	var claim struct {
		Action string `json:"action"`
		Task   struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	byCluster := fmt.Sprintf("%s/nodes/%d/claim", cluster, node.Node.ID)
	api.want(http.StatusOK, "POST", byCluster, nil).decode(t, &claim)
	if claim.Action != "task" || claim.Task.ID != "hiera" {
		t.Errorf("claim by cluster = %+v", claim)
	}
	api.want(http.StatusOK, "POST", "/transactions/"+tx.UUID+"/stop", nil)
	api.want(http.StatusOK, "POST", byCluster+"?wait=1", nil).decode(t, &claim)
	if claim.Action != "idle" {
		t.Errorf("claim with no transaction = %+v", claim)
	}
}
