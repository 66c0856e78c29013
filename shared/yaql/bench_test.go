package yaql

import (
	"context"
	"maps"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkConditions evaluates every condition of tasks-default.yaml on the primary
// controller's data, with no old data (a first run), the identical document (nothing
// changed) and the edited copy of old_states.json; it reports ns per expression.
func BenchmarkConditions(b *testing.B) {
	var conditions []*Expr
	for _, e := range releaseExpressions(b, filepath.Join(fuelDir, "release")) {
		if e.File == "tasks-default.yaml" && len(e.Path) == 2 && e.Path[1] == "condition" {
			compiled, err := Compile(e.Expr)
			if err != nil {
				b.Fatal(err)
			}
			conditions = append(conditions, compiled)
		}
	}
	doc := loadYAML(b, filepath.Join(fuelDir, "hiera", "neut_vlan.ceph-primary-controller.yaml"))
	olds := []struct {
		name string
		old  any
	}{{"old=none", nil}, {"old=same", doc}, {"old=changed", readOldStates(b).changedCopy(b, doc)}}
	ctx := context.Background()
	for _, o := range olds {
		b.Run(o.name, func(b *testing.B) {
			env := Env{New: doc, Old: o.old}
			benchConditions(b, ctx, conditions, env)
		})
		// A plan's Cache, shared by every evaluation: what depends only on data every node
		// shares is evaluated once.
		b.Run(o.name+",cache=shared", func(b *testing.B) {
			env := Env{New: doc, Old: o.old, Cache: NewCache()}
			benchConditions(b, ctx, conditions, env)
		})
	}
}

func benchConditions(b *testing.B, ctx context.Context, conditions []*Expr, env Env) {
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range conditions {
			if _, err := c.Eval(ctx, env); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(conditions)), "ns/expr")
	b.ReportMetric(float64(len(conditions)), "exprs")
}

// BenchmarkPlan1000 evaluates every condition of tasks-default.yaml for 1,000 nodes, as a
// planner does for a 1,000-node cluster, with one Cache for the plan: every node's document
// is the primary controller's with its own uid, fqdn and roles, and network_metadata lists
// the 1,000 nodes (one map object that all documents share, as common data is). Old data:
// none (a first run), the same document (nothing changed since), or the document with
// another glance map (an operator changed one setting; the rest shared). Reports ns per
// expression; a plan is 177,000 of them.
func BenchmarkPlan1000(b *testing.B) {
	const nodes = 1000
	var conditions []*Expr
	for _, e := range releaseExpressions(b, filepath.Join(fuelDir, "release")) {
		if e.File == "tasks-default.yaml" && len(e.Path) == 2 && e.Path[1] == "condition" {
			compiled, err := Compile(e.Expr)
			if err != nil {
				b.Fatal(err)
			}
			conditions = append(conditions, compiled)
		}
	}
	base := loadYAML(b, filepath.Join(fuelDir, "hiera", "neut_vlan.ceph-primary-controller.yaml")).(map[string]any)
	metadata := maps.Clone(base["network_metadata"].(map[string]any))
	templates := metadata["nodes"].(map[string]any)
	names := sortedKeys(templates)
	nodeMap := map[string]any{}
	docs := make([]map[string]any, nodes)
	for i := range nodes {
		uid := strconv.Itoa(1000 + i)
		entry := maps.Clone(templates[names[i%len(names)]].(map[string]any))
		entry["uid"], entry["name"], entry["fqdn"] = uid, "node-"+uid, "node-"+uid+".test.domain.local"
		nodeMap["node-"+uid] = entry
		doc := maps.Clone(base)
		doc["uid"], doc["fqdn"], doc["roles"] = uid, entry["fqdn"], entry["node_roles"]
		doc["network_metadata"] = metadata
		docs[i] = doc
	}
	metadata["nodes"] = nodeMap
	oldGlance := maps.Clone(base["glance"].(map[string]any))
	oldGlance["image_cache_max_size"] = "1"
	for _, o := range []struct {
		name string
		old  func(doc map[string]any) any
	}{
		{"old=none", func(map[string]any) any { return nil }},
		{"old=same", func(doc map[string]any) any { return doc }},
		{"old=glance-changed", func(doc map[string]any) any {
			old := maps.Clone(doc)
			old["glance"] = oldGlance
			return old
		}},
	} {
		olds := make([]any, nodes)
		for i, doc := range docs {
			olds[i] = o.old(doc)
		}
		b.Run(o.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				cache := NewCache()
				for i, doc := range docs {
					env := Env{New: doc, Old: olds[i], Cache: cache}
					for _, c := range conditions {
						if _, err := c.Eval(ctx, env); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*len(conditions)), "ns/expr")
		})
	}
}

// BenchmarkToYaml is upload_node_configuration's $node.toYaml() on one real
// node's data: what a plan's bodies cost per node.
func BenchmarkToYaml(b *testing.B) {
	node := loadYAML(b, filepath.Join(fuelDir, "hiera", "neut_vlan.ceph-compute.yaml"))
	e, err := Compile("$node.toYaml()")
	if err != nil {
		b.Fatal(err)
	}
	env := Env{New: map[string]any{}, Vars: map[string]any{"node": node}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Eval(context.Background(), env); err != nil {
			b.Fatal(err)
		}
	}
}
