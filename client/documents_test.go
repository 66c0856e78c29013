package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestDocumentRefPath(t *testing.T) {
	ref := DocumentRef{Environment: "1", Levels: LevelPath{{Name: "role", Value: "a b"}, {Name: "nodes", Value: "7"}}, Resource: "override/plugins"}
	if got, want := ref.Path(Overrides), "/api/v1/config/environments/1/role/a%20b/nodes/7/resources/override/plugins/overrides"; got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	if got, want := ref.WatchPath(Values), "/api/v1/watch/config/environments/1/role/a%20b/nodes/7/resources/override/plugins/values"; got != want {
		t.Errorf("watch path = %s, want %s", got, want)
	}
	if got, want := ref.String(), "override/plugins of environment 1 at role=a b,nodes=7"; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

// A read that waits goes to the watchers' path, with its query and
// If-None-Match; a read that does not wait stays on the document's path.
func TestWaitingReadsTakeTheWatchPath(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.EscapedPath()+"?"+r.URL.RawQuery+" "+r.Header.Get("If-None-Match"))
		w.Header().Set("ETag", `"e1"`)
		if r.Header.Get("If-None-Match") != "" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ref := DocumentRef{Environment: "1", Levels: LevelPath{{Name: "nodes", Value: "7"}}, Resource: "astute"}
	ctx := context.Background()
	if _, err := c.Document(ctx, ref, Values, DocumentQuery{Effective: true}); err != nil {
		t.Fatal(err)
	}
	doc, err := c.Document(ctx, ref, Values, DocumentQuery{Effective: true, Wait: 25 * time.Second, IfNoneMatch: `"e1"`})
	if err != nil || !doc.NotModified {
		t.Fatalf("watch: %+v, %v; want not modified", doc, err)
	}
	want := []string{
		`/api/v1/config/environments/1/nodes/7/resources/astute/values?effective=true `,
		`/api/v1/watch/config/environments/1/nodes/7/resources/astute/values?effective=true&wait=25 "e1"`,
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("requests:\n%q\nwant\n%q", got, want)
	}
}
