package yaql

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkConditions evaluates every condition of tasks-default.yaml on the primary
// controller's data, with no old data (a first run), the identical document (nothing
// changed) and the edited copy of old_states.json; it reports ns per expression.
func BenchmarkConditions(b *testing.B) {
	fuel := fuelDir(b)
	var conditions []*Expr
	for _, e := range releaseExpressions(b, filepath.Join(fuel, "release")) {
		if e.File == "tasks-default.yaml" && len(e.Path) == 2 && e.Path[1] == "condition" {
			compiled, err := Compile(e.Expr)
			if err != nil {
				b.Fatal(err)
			}
			conditions = append(conditions, compiled)
		}
	}
	doc := loadYAML(b, filepath.Join(fuel, "hiera", "neut_vlan.ceph-primary-controller.yaml"))
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
