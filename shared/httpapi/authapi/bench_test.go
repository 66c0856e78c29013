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
	svc := auth.NewService(backend.Index, auth.WithBcryptCost(bcrypt.DefaultCost), auth.WithNodeNames(registeredNode{}))
	if _, err := svc.CreateUser(context.Background(), auth.NewUser{Name: "hiera", Password: "hiera-secret", Role: auth.Node, Node: "node-1"}); err != nil {
		b.Fatal(err)
	}
	m := New(svc, audit.New(backend.Index, nil), nil, nil)
	r := httptest.NewRequest("GET", "/api/v1/config/environments/1/role/controller/nodes/node-1/resources/astute/values?effective", nil)
	r.SetBasicAuth("hiera", "hiera-secret")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Check(r.Context(), r); err != nil {
			b.Fatal(err)
		}
	}
}

// registeredNode is the registry's answer for node-1: environment 1, role
// controller (resolved once per login, so outside the measured path).
type registeredNode struct{}

func (registeredNode) NodeNames(context.Context, string) (auth.NodeIdentity, error) {
	return auth.NodeIdentity{
		Names:       []string{"1", "node-1", "0b5a2c1e-0000-4000-8000-000000000001"},
		Environment: []string{"1"},
		Levels:      map[string]string{"role": "controller"},
	}, nil
}
