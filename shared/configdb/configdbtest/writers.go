package configdbtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/store"
)

// auditFailures fails, while armed, every write batch that stores an audit
// record, as a crash at that moment would: nothing of the batch applies.
type auditFailures struct {
	store.Index
	armed atomic.Bool
}

func (f *auditFailures) Write(ctx context.Context, ops ...store.Op) error {
	for _, op := range ops {
		if f.armed.Load() && strings.HasPrefix(op.Key.Partition, "audit#") {
			return errors.New("injected failure of the audited write")
		}
	}
	return f.Index.Write(ctx, ops...)
}

// VersionWriters checks, on b, that a document version written under an
// audited request names its writer and the request on its own record, in the
// same atomic write as its audit record (both or neither exist); that
// explain reads the writer from there; and that a version written outside an
// audited request (or before versions named their writers) reads as written
// by nobody known.
func VersionWriters(t *testing.T, b store.Backend) {
	t.Helper()
	ctx := context.Background()
	idx := &auditFailures{Index: b.Index}
	svc := configdb.NewService(idx, b.Blobs)
	log := audit.New(idx, nil)
	comp, err := svc.CreateComponent(ctx, configdb.NewComponent{
		Name:                fmt.Sprintf("writers-%p", svc),
		ResourceDefinitions: []configdb.NewResourceDefinition{{Name: fmt.Sprintf("writers-data-%p", svc)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	env, err := svc.CreateEnvironment(ctx, configdb.NewEnvironment{Components: []string{comp.Name}, Levels: []string{"role"}})
	if err != nil {
		t.Fatal(err)
	}
	envID := strconv.FormatInt(env.ID, 10)
	global := configdb.DocRef{Env: envID, Resource: comp.ResourceDefinitions[0].Name}
	role := global
	role.Levels = []configdb.LevelValue{{Name: "role", Value: "compute"}}

	// Unaudited: no writer.
	if _, err := svc.PutDocument(ctx, global, configdb.Values, []byte(`{"a":1,"b":1}`), ""); err != nil {
		t.Fatal(err)
	}
	requests := 0
	audited := func() (context.Context, *audit.Write) {
		requests++
		return log.Begin(ctx, audit.Record{Principal: "ops", Role: "admin", RequestID: fmt.Sprintf("req-%d", requests), Method: "PUT", Path: "/role/compute"})
	}

	// A failed atomic write leaves neither the version nor its record.
	actx, _ := audited()
	idx.armed.Store(true)
	if _, err := svc.PutDocument(actx, role, configdb.Values, []byte(`{"b":2}`), ""); err == nil {
		t.Fatal("the write whose audit record failed succeeded")
	}
	idx.armed.Store(false)
	if vs, err := svc.ListVersions(ctx, role, configdb.Values); err != nil || len(vs) != 0 {
		t.Fatalf("versions after the failed write: %+v, %v", vs, err)
	}
	if recs, err := log.List(ctx, audit.Query{Environment: envID}); err != nil || len(recs) != 0 {
		t.Fatalf("audit records after the failed write: %+v, %v", recs, err)
	}

	actx, w := audited()
	v, err := svc.PutDocument(actx, role, configdb.Values, []byte(`{"b":2}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(actx, 204); err != nil { // committed with the version: no second record
		t.Fatal(err)
	}
	begun, _ := audit.Writer(actx)
	if v.WrittenBy == nil || v.WrittenBy.Principal != "ops" || v.WrittenBy.Role != "admin" || v.WrittenBy.RequestID != begun.RequestID || !v.WrittenBy.Time.Equal(v.CreatedAt) {
		t.Fatalf("version written by %+v, want ops (admin) of request %s at %v", v.WrittenBy, begun.RequestID, v.CreatedAt)
	}
	recs, err := log.List(ctx, audit.Query{Environment: envID})
	if err != nil || len(recs) != 1 || recs[0].Version != 1 || recs[0].RequestID != begun.RequestID || recs[0].Environment != envID {
		t.Fatalf("audit records of the write: %+v, %v", recs, err)
	}
	vs, err := svc.ListVersions(ctx, role, configdb.Values)
	if err != nil || len(vs) != 1 || vs[0].WrittenBy == nil || *vs[0].WrittenBy != *v.WrittenBy {
		t.Fatalf("stored versions: %+v, %v", vs, err)
	}

	d, err := svc.Read(ctx, configdb.ReadQuery{DocRef: role, Kind: configdb.Values, Effective: true, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	var ex struct {
		Keys map[string]struct {
			From struct {
				WrittenBy *configdb.Writer `json:"written_by"`
			} `json:"from"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(d.Body, &ex); err != nil {
		t.Fatal(err)
	}
	if a := ex.Keys["a"].From.WrittenBy; a != nil {
		t.Errorf("explain: a written by %+v, want null (written outside an audited request)", a)
	}
	if b := ex.Keys["b"].From.WrittenBy; b == nil || *b != *v.WrittenBy {
		t.Errorf("explain: b written by %+v, want %+v", b, v.WrittenBy)
	}
}
