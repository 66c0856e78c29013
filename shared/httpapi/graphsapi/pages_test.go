package graphsapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/graphsapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// pagedAPI serves cluster 1 with nodes 1..n.
func pagedAPI(t *testing.T, n int) *api {
	t.Helper()
	b := mem.New()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	router := routes.NewRouter(1 << 20)
	graphsapi.Register(router, graphs.NewService(b.Index, b.Blobs, graphstest.Clusters{"1": graphstest.Nodes(ids...)}))
	return &api{t: t, h: routestest.Validating(t, httpapi.Wrap(router, httpapi.Options{}))}
}

// follow reads path and every page its next links lead to; each page's
// answer must fit a Lambda response (its body as a JSON string).
func follow[T any](a *api, path string, next func(T) []wire.PageLink) []T {
	a.t.Helper()
	var pages []T
	for path != "" {
		r := a.expect("GET", path, "", 200, "")
		if envelope, _ := json.Marshal(r.body); len(envelope) > 6<<20-64<<10 {
			a.t.Fatalf("GET %s: a page of %d bytes as a Lambda response", path, len(envelope))
		}
		page := decode[T](a.t, r)
		pages = append(pages, page)
		path = ""
		if links := next(page); len(links) > 0 {
			path = links[0].Href
		}
		if len(pages) > 100 {
			a.t.Fatal("the pages do not end")
		}
	}
	return pages
}

// Both listings by node, read page by page (by limit, then by size),
// give what one read gives; a bad marker is refused.
func TestListingsPagedByNode(t *testing.T) {
	a := pagedAPI(t, 7)
	// ~800 KB per node: seven nodes pass a page's 5 MiB.
	big := strings.Repeat("x", 800<<10)
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/default", `{"tasks":[
		{"id":"a","type":"shell","parameters":{"cmd":"true"}},
		{"id":"b","type":"shell","requires":["a"],"parameters":{"cmd":"`+big+`"},
		 "cross-depends":[{"name":"a","role":"*"}]}]}`, 201, "")

	// One node per page, then pages cut by size: the same nodes, in order.
	const tasks = "/api/v1/clusters/1/serialized_tasks"
	var lists [][]wire.NodeTasks
	for _, path := range []string{tasks + "?limit=1", tasks} {
		pages := follow(a, path, func(p wire.ClusterTasks) []wire.PageLink { return p.Links })
		var got []wire.NodeTasks
		for _, p := range pages {
			got = append(got, p.Nodes...)
		}
		if len(pages) < 2 || len(got) != 7 {
			t.Fatalf("%s: %d pages gave %d nodes", path, len(pages), len(got))
		}
		lists = append(lists, got)
	}
	if first, _ := json.Marshal(lists[0]); string(first) != string(must(json.Marshal(lists[1]))) {
		t.Error("serialized_tasks: the pages by limit and by size differ")
	}
	a.expect("GET", tasks+"?marker=nothing", "", 400, "not a marker")
	a.expect("GET", tasks+"?limit=0", "", 400, "limit")
	if lists[0][6].Tasks[1].Task == nil || len(lists[0][6].Tasks[1].WaitFor) != 6 {
		t.Errorf("the last node's second task waits for %v", lists[0][6].Tasks[1].WaitFor)
	}

	tx := decode[transaction](t, a.expect("PUT", "/api/v1/clusters/1/deploy", "", 202, ""))
	plan := "/api/v1/transactions/" + tx.SubTransactions[0].UUID + "/plan"
	var plans []string
	for _, path := range []string{plan + "?limit=1", plan} {
		pages := follow(a, path, func(p wire.Plan) []wire.PageLink { return p.Links })
		got := wire.Plan{NodeTasks: map[string][]wire.SerializedTask{}, Skipped: map[string][]wire.SkippedTask{}}
		for _, p := range pages {
			for n, ts := range p.NodeTasks {
				got.NodeTasks[n] = ts
			}
			for n, s := range p.Skipped {
				got.Skipped[n] = s
			}
		}
		if len(pages) < 2 || len(got.NodeTasks) != 7 || len(got.Skipped) != 7 || len(pages[1].Tasks) != 2 {
			t.Fatalf("%s: %d pages gave %d nodes", path, len(pages), len(got.NodeTasks))
		}
		plans = append(plans, string(must(json.Marshal([]any{got.NodeTasks, got.Skipped}))))
	}
	if plans[0] != plans[1] {
		t.Error("plan: the pages by limit and by size differ")
	}
	a.expect("GET", plan+"?marker=99", "", 400, "node 99 is not listed")
	// Some nodes' lists only (a console's explanation of one node).
	some := decode[wire.Plan](t, a.expect("GET", plan+"?nodes=6,2", "", 200, ""))
	if len(some.NodeTasks) != 2 || some.NodeTasks["2"] == nil || some.NodeTasks["6"] == nil || len(some.Links) != 0 {
		t.Errorf("plan of nodes 6 and 2: %d nodes' lists, links %v", len(some.NodeTasks), some.Links)
	}
	a.expect("GET", plan+"?nodes=2,99", "", 400, "Nodes 99 are not in the plan")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
