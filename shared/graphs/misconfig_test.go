package graphs_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// definingClusters are clusters whose environments define the resources
// named, with an empty document at every node.
type definingClusters struct {
	graphstest.Clusters
	resources []string
}

func (c definingClusters) HasResource(ctx context.Context, id, resource string) error {
	if err := c.Exists(ctx, id); err != nil {
		return err
	}
	if !slices.Contains(c.resources, resource) {
		return errs.NotFoundf("resource %s not found in environment %s", resource, id)
	}
	return nil
}

func (c definingClusters) NodeData(ctx context.Context, id, resource string, nodes []string, _ time.Time) (map[string]graphs.NodeDocument, error) {
	docs := map[string]graphs.NodeDocument{}
	for _, n := range nodes {
		docs[n] = graphs.NodeDocument{Body: []byte(`{}`), ETag: `"empty"`}
	}
	return docs, c.HasResource(ctx, id, resource)
}

func definingService(t *testing.T, nodes []planner.ClusterNode, resources ...string) *graphs.Service {
	t.Helper()
	b := mem.New()
	return graphs.NewService(b.Index, b.Blobs, definingClusters{graphstest.Clusters{"1": nodes}, resources})
}

// TestDeploymentInfoResourceMustExist: a release or plugin naming a
// deployment_info_resource its cluster's environment does not define is
// refused (400) where the environment is known: setting the cluster's
// release and plugins, changing an entry a cluster uses; a plan whose
// expressions read a resource the environment lacks fails (409), whether
// named or the default, instead of planning every node on {}.
func TestDeploymentInfoResourceMustExist(t *testing.T) {
	ctx := context.Background()
	s := definingService(t, graphstest.Nodes("1", "2"), "facts")
	named := func(resource string) graphs.EntryInput {
		return graphs.EntryInput{Name: "mitaka", Version: "9.0", EntryMetadata: planner.EntryMetadata{DeploymentInfoResource: resource}}
	}
	typo := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, named("ASTUTE"))) // no cluster yet: nothing to check
	_, err := s.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &typo.ID})
	wantKind(t, err, errs.Invalid, `deployment_info_resource: release mitaka-9.0 names "ASTUTE", which the environment of cluster 1 does not define`)
	if c := must[graphs.ClusterSettings](t)(s.Cluster(ctx, 1)); c.ReleaseID != nil {
		t.Fatalf("the refused release was set: %+v", c)
	}
	rel := must[graphs.Entry](t)(s.UpdateEntry(ctx, graphs.Release, typo.ID, named("facts")))
	must[graphs.ClusterSettings](t)(s.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &rel.ID}))
	_, err = s.UpdateEntry(ctx, graphs.Release, rel.ID, named(" facts"))
	wantKind(t, err, errs.Invalid, `names " facts", which the environment of cluster 1 does not define`)
	plugin := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "ldap", Version: "1.0", EntryMetadata: planner.EntryMetadata{DeploymentInfoResource: "ldap"}}))
	_, err = s.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &rel.ID, Plugins: []int64{plugin.ID}})
	wantKind(t, err, errs.Invalid, `plugin ldap-1.0 names "ldap"`)

	// The release's resource exists: conditions plan on it.
	o := graphs.Owner{Kind: graphs.Cluster, ID: 1}
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "default", tasksInput(`[{"id":"a","type":"shell","condition":{"yaql_exp":"$.get(run) = true"}}]`), false))
	plan := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 1, "default", nil, false, false))
	if len(plan.Nodes) != 2 || len(plan.Warnings) != 0 {
		t.Fatalf("plan on facts: %+v", plan)
	}
	// The default resource (astute), which this environment lacks: a plan error.
	must[graphs.ClusterSettings](t)(s.SetCluster(ctx, 1, graphs.ClusterInput{}))
	_, err = s.SerializedTasks(ctx, 1, "default", nil, false, false)
	wantKind(t, err, errs.Conflict, `the resource "astute" of the cluster's environment`)
	_, err = s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}})
	wantKind(t, err, errs.Conflict, "resource astute not found in environment 1")
}

// TestTwoPrimariesAreAPlanError: two nodes named primary for one tag (the
// role primary-controller twice) fail the plan naming both, with the
// release's metadata (primary for each tag of the role) and without it.
func TestTwoPrimariesAreAPlanError(t *testing.T) {
	ctx := context.Background()
	nodes := []planner.ClusterNode{{ID: "10", Roles: []string{"primary-controller"}}, {ID: "2", Roles: []string{"primary-controller", "cinder"}}, {ID: "3", Roles: []string{"compute"}}}
	s := definingService(t, nodes, planner.DefaultDeploymentInfoResource)
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default",
		tasksInput(`[{"id":"db","type":"shell","role":["primary-controller"]},{"id":"all","type":"shell","role":["controller","compute"]}]`), false))
	_, err := s.SerializedTasks(ctx, 1, "default", nil, false, false)
	wantKind(t, err, errs.Conflict, "nodes 2 and 10 are each named primary for tag controller (role primary-controller)")

	rel := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "mitaka", Version: "9.0", EntryMetadata: planner.EntryMetadata{
		RolesMetadata: map[string]json.RawMessage{"controller": json.RawMessage(`{"tags":["controller","rabbitmq"]}`), "compute": json.RawMessage(`{"tags":["compute"]}`)},
		TagsMetadata:  map[string]json.RawMessage{"controller": json.RawMessage(`{"has_primary":true}`), "rabbitmq": json.RawMessage(`{"has_primary":true}`)},
	}}))
	must[graphs.ClusterSettings](t)(s.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &rel.ID}))
	_, err = s.SerializedTasks(ctx, 1, "default", nil, false, false)
	wantKind(t, err, errs.Conflict, "nodes 2 and 10 are each named primary for tag controller (role primary-controller): a tag has one primary node; give all but one the role controller")
	_, err = s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}})
	wantKind(t, err, errs.Conflict, "nodes 2 and 10 are each named primary")
	// One primary: planned.
	one := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 1, "default", []graphs.NodeID{"2", "3"}, false, false))
	if len(one.Nodes) != 2 {
		t.Fatalf("plan with one primary: %+v", one.Nodes)
	}
}
