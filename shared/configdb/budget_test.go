package configdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Every cache of the service counts bytes, and together they stay within the
// budget given to WithCacheBytes however many distinct documents are read;
// an answer larger than its cache's share is served without being cached.
func TestCachesStayWithinTheBudget(t *testing.T) {
	const budget = 4 << 20
	s := newTestService(t)
	WithCacheBytes(budget)(s)
	ctx := context.Background()
	total := func() int64 {
		return s.documents.docs.Cost() + s.answers.responses.Cost() + s.cache.merges.Cost() + s.cache.guesses.Cost() + s.cache.envs.Cost() + s.cache.resdefs.Cost()
	}
	global := fmt.Sprintf(`{"global":%q}`, strings.Repeat("g", 100<<10))
	if _, err := s.PutDocument(ctx, DocRef{Env: "1", Resource: "astute"}, Values, []byte(global), ""); err != nil {
		t.Fatal(err)
	}
	peak := int64(0)
	for i := range 60 {
		ref := DocRef{Env: "1", Levels: lv("role", "compute", "nodes", fmt.Sprint(i)), Resource: "astute"}
		doc := fmt.Sprintf(`{"node":%d,"data":%q}`, i, strings.Repeat(fmt.Sprintf("%03d", i), 100<<10))
		if _, err := s.PutDocument(ctx, ref, Values, []byte(doc), ""); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			d, err := s.Effective(ctx, EffectiveQuery{Env: "1", Levels: ref.Levels, Resource: "astute"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(d.Body), fmt.Sprintf(`"node":%d`, i)) {
				t.Fatalf("read %d: wrong document", i)
			}
		}
		peak = max(peak, total())
	}
	if peak > budget {
		t.Errorf("caches held %d bytes, over the budget of %d", peak, budget)
	}
	if s.answers.responses.Len() == 0 || s.documents.docs.Len() == 0 {
		t.Error("nothing was cached")
	}
	t.Logf("peak %d of %d bytes; %d documents, %d merges, %d answers cached", peak, budget, s.documents.docs.Len(), s.cache.merges.Len(), s.answers.responses.Len())

	// A document larger than every share is read correctly and cached nowhere.
	big := DocRef{Env: "1", Levels: lv("role", "big"), Resource: "astute"}
	if _, err := s.PutDocument(ctx, big, Values, []byte(fmt.Sprintf(`{"big":%q}`, strings.Repeat("b", 3<<20))), ""); err != nil {
		t.Fatal(err)
	}
	d, err := s.Effective(ctx, EffectiveQuery{Env: "1", Levels: big.Levels, Resource: "astute"})
	if err != nil || len(d.Body) < 3<<20 {
		t.Fatalf("big read: %v", err)
	}
	if got := total(); got > budget {
		t.Errorf("after the big read the caches hold %d bytes", got)
	}
}
