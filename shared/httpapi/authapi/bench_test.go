package authapi

import (
	"context"
	"net/http/httptest"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// BenchmarkCheckBasicCached is the per-request cost of the auth hook on Hiera's
// hot path: a repeated Basic login (verified once, then cached) and the policy.
func BenchmarkCheckBasicCached(b *testing.B) {
	backend, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Close()
	svc := auth.NewService(backend.Index, auth.WithBcryptCost(bcrypt.DefaultCost))
	if _, err := svc.CreateUser(context.Background(), auth.NewUser{Name: "hiera", Password: "hiera-secret", Role: auth.Node, Node: "node-1"}); err != nil {
		b.Fatal(err)
	}
	m := New(svc, audit.New(backend.Index, nil), nil, nil)
	r := httptest.NewRequest("GET", "/api/v1/config/environments/1/role/controller/nodes/node-1/resources/astute/values?effective", nil)
	r.SetBasicAuth("hiera", "hiera-secret")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Check(r); err != nil {
			b.Fatal(err)
		}
	}
}
