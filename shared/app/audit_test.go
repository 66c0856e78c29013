package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// failingAuditIndex fails, while armed, every write batch that stores an audit
// record, as a crash at that moment would: nothing of the batch is applied.
type failingAuditIndex struct {
	store.Index
	armed atomic.Bool
}

func (f *failingAuditIndex) Write(ctx context.Context, ops ...store.Op) error {
	for _, op := range ops {
		if f.armed.Load() && strings.HasPrefix(op.Key.Partition, "audit#") {
			return errors.New("injected failure of the audited write")
		}
	}
	return f.Index.Write(ctx, ops...)
}

// TestAuditRecordInTheVersionsWrite: a document version and its audit record
// are one atomic write: when that write fails, neither exists; when it
// succeeds, the record names the version.
func TestAuditRecordInTheVersionsWrite(t *testing.T) {
	b := mem.New()
	idx := &failingAuditIndex{Index: b.Index}
	b.Index = idx
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.AdminUser, cfg.AdminPassword = "admin", "wiring-test-password"
	logs := &syncBuffer{}
	h, err := server.NewHandler(b, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &client{t: t, url: srv.URL, api: login(t, srv.URL, "admin", "wiring-test-password")}
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, http.StatusCreated, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["role"]}`, http.StatusCreated, "")
	doc := "/api/v1/config/environments/1/role/compute/resources/astute/values"

	idx.armed.Store(true)
	c.do("PUT", doc, `{"a":1}`, http.StatusInternalServerError, "")
	idx.armed.Store(false)
	c.do("GET", doc+"/versions", "", http.StatusOK, "[]")
	if body := c.do("GET", "/api/v1/audit?environment=1", "", http.StatusOK, ""); strings.Contains(body, "role/compute") {
		t.Fatalf("an audit record of the failed write: %s", body)
	}

	put, err := http.NewRequest("PUT", srv.URL+doc, strings.NewReader(`{"a":2}`))
	if err != nil {
		t.Fatal(err)
	}
	put.SetBasicAuth("admin", "wiring-test-password")
	put.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(put)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	requestID := resp.Header.Get("X-Openstack-Request-Id")
	if resp.StatusCode != http.StatusNoContent || requestID == "" {
		t.Fatalf("PUT %s: %d, request id %q", doc, resp.StatusCode, requestID)
	}
	audited := c.do("GET", "/api/v1/audit?environment=1", "", http.StatusOK, `"path":"`+doc+`","status":204,"environment":"1","version":1`)

	// The version names its writer and the request, as its audit record, the
	// answer and the request's log line do.
	var records struct {
		Records []struct {
			RequestID string `json:"request_id"`
		} `json:"records"`
	}
	var versions []struct {
		WrittenBy *struct {
			Principal string `json:"principal"`
			RequestID string `json:"request_id"`
		} `json:"written_by"`
	}
	if err := json.Unmarshal([]byte(audited), &records); err != nil || len(records.Records) == 0 {
		t.Fatalf("audit: %s (%v)", audited, err)
	}
	listed := c.do("GET", doc+"/versions", "", http.StatusOK, "")
	if err := json.Unmarshal([]byte(listed), &versions); err != nil || len(versions) != 1 {
		t.Fatalf("versions: %s (%v)", listed, err)
	}
	if w := versions[0].WrittenBy; w == nil || w.Principal != "admin" || w.RequestID != requestID || records.Records[0].RequestID != requestID {
		t.Errorf("version 1 written by %+v; its audit record's request is %q, the answer's %q", w, records.Records[0].RequestID, requestID)
	}
	logged := slices.ContainsFunc(strings.Split(logs.String(), "\n"), func(line string) bool {
		return strings.Contains(line, `"method":"PUT","path":"`+doc+`","status":204`) && strings.Contains(line, `"request_id":"`+requestID+`"`)
	})
	if !logged {
		t.Errorf("no log line of request %s: %s", requestID, logs.String())
	}
}

// TestAuditEnvironmentFromTheWriter: writes under an environment that do not
// name it in their path (a node registered with an environment_id and deleted
// by id, a cluster's graphs, changed and deleted by graph id, its execution
// and its agent's claim and result, an environment addressed by UUID) are recorded
// under it, as the code that made the write noted it, and listed by
// ?environment; a write under no environment is not.
func TestAuditEnvironmentFromTheWriter(t *testing.T) {
	c := newClient(t)
	created := c.do("POST", "/api/v1/config/environments", `{"id":1,"hierarchy_levels":["nodes"]}`, 201, "")
	var env struct{ UUID string }
	if err := json.Unmarshal([]byte(created), &env); err != nil || env.UUID == "" {
		t.Fatalf("environment: %s (%v)", created, err)
	}
	c.do("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0"}`, 201, "")
	c.do("POST", "/api/v1/nodes", `{"id":5,"fqdn":"node-5.example.com","environment_id":1}`, 201, "")
	c.do("PUT", "/api/v1/clusters/1", `{"release_id":1}`, 200, "")
	c.do("POST", "/api/v1/clusters/1/deployment_graphs/default", `{"tasks":[{"id":"ntp","type":"shell"}]}`, 201, `"id":1,`)
	executed := c.do("POST", "/api/v1/graphs/execute", `{"cluster":1,"graphs":[{"type":"default"}]}`, 202, "")
	var tx struct{ UUID string }
	if err := json.Unmarshal([]byte(executed), &tx); err != nil || tx.UUID == "" {
		t.Fatalf("execute: %s (%v)", executed, err)
	}
	agent := "/api/v1/transactions/" + tx.UUID + "/nodes/5"
	c.do("POST", agent+"/claim", "", 200, `"id":"ntp"`)
	c.do("POST", agent+"/result", `{"task":"ntp","status":"ready"}`, 200, "")
	c.do("PATCH", "/api/v1/graphs/1", `{"name":"renamed"}`, 200, "")
	c.do("PUT", "/api/v1/graphs/1", `{"name":"again"}`, 200, "")
	c.do("DELETE", "/api/v1/graphs/1", "", 204, "")
	c.do("DELETE", "/api/v1/nodes/5", "", 204, "")
	c.do("PUT", "/api/v1/config/environments/"+env.UUID, `{"hierarchy_levels":["nodes","extra"]}`, 204, "")

	var page struct {
		Records []struct {
			Method      string `json:"method"`
			Path        string `json:"path"`
			Environment string `json:"environment"`
			RequestID   string `json:"request_id"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(c.do("GET", "/api/v1/audit?environment=1", "", 200, "")), &page); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Records {
		got = append(got, r.Method+" "+r.Path)
		if r.Environment != "1" || !strings.HasPrefix(r.RequestID, "req-") {
			t.Errorf("%s %s: environment %q, request id %q", r.Method, r.Path, r.Environment, r.RequestID)
		}
	}
	want := []string{ // newest first
		"PUT /api/v1/config/environments/" + env.UUID,
		"DELETE /api/v1/nodes/5",
		"DELETE /api/v1/graphs/1",
		"PUT /api/v1/graphs/1",
		"PATCH /api/v1/graphs/1",
		"POST " + agent + "/result",
		"POST " + agent + "/claim",
		"POST /api/v1/graphs/execute",
		"POST /api/v1/clusters/1/deployment_graphs/default",
		"PUT /api/v1/clusters/1",
		"POST /api/v1/nodes",
		"POST /api/v1/config/environments",
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit of environment 1:\n got %q\nwant %q", got, want)
	}
	// The release is no environment's: it is in the log, not under environment 1.
	c.do("GET", "/api/v1/audit", "", 200, `"path":"/api/v1/releases"`)
}
