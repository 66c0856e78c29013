package localstack

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPEnvExportImport moves an environment through the API of the server
// under test (any backend): its export, imported into the same store as a
// copy under a new id, reads the same as the original (stored and effective
// documents, explain with the writers, as_of between writes, histories) and
// exports the same documents.
func TestHTTPEnvExportImport(t *testing.T) {
	f := newFixture(t)
	api := f.under("/api/v1")
	docs := [][]string{nil, {"zone", "z1"}, {"zone", "z1", "role", "compute"}}
	var instants []time.Time
	for v := range 3 {
		for i, levels := range docs {
			f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", levels...), fmt.Sprintf(`{"depth":%d,"version":%d,"shared":{"k%d":%d}}`, i, v, i, v))
		}
		time.Sleep(20 * time.Millisecond)
		instants = append(instants, time.Now().UTC())
		time.Sleep(20 * time.Millisecond)
	}
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "overrides", "zone", "z1"), `{"version":"overridden"}`)

	exported := api.want(http.StatusOK, "GET", fmt.Sprintf("/store/environments/%d/export", f.env.ID), nil)
	var copied struct {
		ID        int64  `json:"id"`
		UUID      string `json:"uuid"`
		Documents int    `json:"documents"`
		Versions  int    `json:"versions"`
	}
	api.want(http.StatusCreated, "POST", "/store/environments/import", string(exported.body), "Content-Type", "application/x-ndjson").decode(t, &copied)
	t.Cleanup(func() { f.want(http.StatusNoContent, "DELETE", fmt.Sprintf("/environments/%d", copied.ID), nil) })
	if copied.ID == f.env.ID || copied.Documents != 4 || copied.Versions != 10 {
		t.Fatalf("imported %+v: want a new id, 4 documents, 10 versions", copied)
	}

	// reads answers every read of the environment named uuid (paths from 1.3 on name it so).
	reads := func(uuid string) string {
		var out strings.Builder
		for _, levels := range docs {
			doc := strings.Replace(f.doc("astute", "values", levels...), fmt.Sprintf("/environments/%d/", f.env.ID), "/environments/"+uuid+"/", 1)
			queries := []string{"", "?version=2", "?effective", "?effective&explain", "/versions"}
			for _, at := range instants {
				queries = append(queries, "?effective&as_of="+at.Format(time.RFC3339Nano))
			}
			for _, q := range queries {
				r := f.want(http.StatusOK, "GET", doc+q, nil, v13...)
				fmt.Fprintf(&out, "%s\n%s\n", q, r.body)
			}
		}
		return out.String()
	}
	var original struct {
		UUID string `json:"uuid"`
	}
	f.want(http.StatusOK, "GET", fmt.Sprintf("/environments/%d", f.env.ID), nil).decode(t, &original)
	want := reads(original.UUID)
	if !strings.Contains(want, `"written_by":{"principal"`) {
		t.Fatalf("no read names a writer, so none is compared:\n%s", want)
	}
	if got := reads(copied.UUID); got != want {
		t.Fatalf("the copy reads otherwise:\n%s\nwant\n%s", got, want)
	}
	again := api.want(http.StatusOK, "GET", fmt.Sprintf("/store/environments/%d/export", copied.ID), nil)
	// After the header (which names the copy's id and UUID), the same lines.
	if first, second := exported.body[bytes.IndexByte(exported.body, '\n'):], again.body[bytes.IndexByte(again.body, '\n'):]; !bytes.Equal(first, second) {
		t.Fatalf("the copy exports other documents:\n%s\nwant\n%s", second, first)
	}
}
