package configapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// benchDocument is a Fuel-like document (nested hashes, lists, scalars) of about keys*valueBytes bytes,
// like .ci/bench_seed.py makes.
func benchDocument(prefix string, keys, valueBytes int) []byte {
	doc := make(map[string]any, keys)
	for i := range keys {
		hosts := make([]string, 4)
		for j := range hosts {
			hosts[j] = fmt.Sprintf("10.0.%d.%d", i%250, j)
		}
		doc[fmt.Sprintf("%s_%d", prefix, i)] = map[string]any{
			"enabled":     i%2 == 0,
			"port":        1000 + i,
			"hosts":       hosts,
			"description": strings.Repeat("x", max(0, valueBytes-120)),
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

// discard is a ResponseWriter that keeps only the status and the byte count,
// so the benchmark measures the handler, not a recorder's buffer.
type discard struct {
	header http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header { return d.header }
func (d *discard) WriteHeader(s int)   { d.status = s }
func (d *discard) Write(b []byte) (int, error) {
	d.n += len(b)
	return len(b), nil
}

// benchEffective seeds environment 1 ([role, nodes]) over the domain service and
// measures GET .../values?effective at the node through the full handler.
// query adds microversion 1.3 parameters to ?effective (the path then names the environment by UUID).
func benchEffective(b *testing.B, resource string, global, role, node int, wantSize int, query string) {
	st, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := configdb.NewService(st.Index, st.Blobs)
	ctx := context.Background()
	if _, err := svc.CreateComponent(ctx, configdb.NewComponent{Name: "bench", ResourceDefinitions: []configdb.NewResourceDefinition{{Name: resource}}}); err != nil {
		b.Fatal(err)
	}
	env, err := svc.CreateEnvironment(ctx, configdb.NewEnvironment{ID: 1, Components: []string{"bench"}, Levels: []string{"role", "nodes"}})
	if err != nil {
		b.Fatal(err)
	}
	levels := []configdb.LevelValue{{Name: "role", Value: "controller"}, {Name: "nodes", Value: "node-1"}}
	put := func(depth int, kind configdb.Kind, doc []byte) {
		if _, err := svc.PutDocument(ctx, configdb.DocRef{Env: "1", Levels: levels[:depth], Resource: resource}, kind, doc, ""); err != nil {
			b.Fatal(err)
		}
	}
	put(0, configdb.Values, benchDocument("g", global, 260))
	put(1, configdb.Values, benchDocument("r", role, 260))
	put(2, configdb.Values, benchDocument("n", node, 260))
	put(2, configdb.Overrides, []byte(`{"g_1":{"enabled":false}}`))

	router := routes.NewRouter(1 << 20)
	configapi.Register(router, svc, httpapi.NewCompressed(16<<20))
	h := httpapi.Wrap(router, httpapi.Options{})
	envRef := "1"
	if query != "" {
		envRef = env.UUID
	}
	req := httptest.NewRequest("GET", configapi.Prefix+"/environments/"+envRef+"/role/controller/nodes/node-1/resources/"+resource+"/values?effective"+query, nil)
	if query != "" {
		req.Header.Set("OpenStack-API-Version", "config 1.3")
	}
	w := &discard{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status != http.StatusOK || w.n < wantSize*9/10 || w.n > wantSize*11/10 {
		b.Fatalf("effective answer: status %d, %d bytes; want 200 and about %d", w.status, w.n, wantSize)
	}
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.header)
		w.n = 0
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

// BenchmarkEffective520KB is Hiera's hot path with a large astute-like document
// (~520 KB effective, spread over global, role and node).
func BenchmarkEffective520KB(b *testing.B) { benchEffective(b, "astute", 1400, 400, 200, 520<<10, "") }

// BenchmarkEffective50KB is the same with a globals-like document (~50 KB).
func BenchmarkEffective50KB(b *testing.B) { benchEffective(b, "globals", 150, 30, 10, 50<<10, "") }

// BenchmarkEffectiveDeep520KB is the deep merge of the 520 KB document, warm (cached like the shallow one).
func BenchmarkEffectiveDeep520KB(b *testing.B) {
	benchEffective(b, "astute", 1400, 400, 200, 520<<10, "&merge=deep")
}

// BenchmarkExplainDeep520KB is explain of the deep merge, warm (~1.6 MB answer from the response cache).
func BenchmarkExplainDeep520KB(b *testing.B) {
	benchEffective(b, "astute", 1400, 400, 200, 1635<<10, "&merge=deep&explain")
}
