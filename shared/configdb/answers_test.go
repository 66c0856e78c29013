package configdb

import (
	"context"
	"testing"
)

// countingRenderer renders every answer as its id and counts its renders.
type countingRenderer struct{ renders int }

func (r *countingRenderer) render(_ context.Context, a answer) (*Document, error) {
	r.renders++
	return &Document{Body: a.id[:], ETag: quote(string(a.mode))}, nil
}

// TestCachedAnswersDecorate: the answer cache renders an answer once by its
// identity and gives back what the renderer it wraps rendered.
func TestCachedAnswersDecorate(t *testing.T) {
	ctx := context.Background()
	next := &countingRenderer{}
	c := newCachedAnswers(next, DefaultCacheBytes)
	shallow := mergeAnswer([]layer{{sha: "a"}}, nil, "", MergeShallow)
	deep := mergeAnswer([]layer{{sha: "a"}}, nil, "", MergeDeep)
	first, err := c.render(ctx, shallow)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []answer{shallow, deep, deep} {
		if _, err := c.render(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if next.renders != 2 {
		t.Errorf("%d renders of two answers", next.renders)
	}
	if again, _ := c.render(ctx, shallow); again != first {
		t.Error("the kept answer is not the one rendered")
	}
}
