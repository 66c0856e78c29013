package auth_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

func newIndex(t *testing.T) store.Index {
	t.Helper()
	b := mem.New()
	return b.Index
}

// countingIndex counts Get calls, to show what the verification cache saves.
type countingIndex struct {
	store.Index
	gets int
}

func (c *countingIndex) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.gets++
	return c.Index.Get(ctx, k)
}

type fakeNodes map[string][]string

func (f fakeNodes) NodeNames(_ context.Context, ref string) (auth.NodeIdentity, error) {
	if names, ok := f[ref]; ok {
		return auth.NodeIdentity{Names: names, Environment: []string{"1"}}, nil
	}
	return auth.NodeIdentity{}, errs.NotFoundf("node %q not found", ref)
}

func newService(t *testing.T, opts ...auth.Option) (*auth.Service, *countingIndex) {
	idx := &countingIndex{Index: newIndex(t)}
	return auth.NewService(idx, append([]auth.Option{auth.WithBcryptCost(bcrypt.MinCost)}, opts...)...), idx
}

func TestCreateUserValidation(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	tests := []struct {
		name string
		in   auth.NewUser
		want errs.Kind
	}{
		{"ok admin", auth.NewUser{Name: "alice", Password: "pw-secret", Role: auth.Admin}, -1},
		{"ok node", auth.NewUser{Name: "node-7", Password: "pw-secret", Role: auth.Node, Node: "7"}, -1},
		{"duplicate", auth.NewUser{Name: "alice", Password: "pw2-secret", Role: auth.Observer}, errs.Conflict},
		{"empty name", auth.NewUser{Name: "", Password: "pw-secret", Role: auth.Admin}, errs.Invalid},
		{"colon in name", auth.NewUser{Name: "a:b", Password: "pw-secret", Role: auth.Admin}, errs.Invalid},
		{"slash in name", auth.NewUser{Name: "a/b", Password: "pw-secret", Role: auth.Admin}, errs.Invalid},
		{"long name", auth.NewUser{Name: strings.Repeat("a", 65), Password: "pw-secret", Role: auth.Admin}, errs.Invalid},
		{"empty password", auth.NewUser{Name: "bob", Role: auth.Admin}, errs.Invalid},
		{"password of 7 bytes", auth.NewUser{Name: "bob", Password: "1234567", Role: auth.Admin}, errs.Invalid},
		{"password of 8 bytes", auth.NewUser{Name: "bob8", Password: "12345678", Role: auth.Admin}, -1},
		{"password of 72 bytes", auth.NewUser{Name: "bob72", Password: strings.Repeat("p", 72), Role: auth.Admin}, -1},
		{"password over 72 bytes", auth.NewUser{Name: "bob", Password: strings.Repeat("p", 73), Role: auth.Admin}, errs.Invalid},
		{"unknown role", auth.NewUser{Name: "bob", Password: "pw-secret", Role: "root"}, errs.Invalid},
		{"node without node", auth.NewUser{Name: "bob", Password: "pw-secret", Role: auth.Node}, errs.Invalid},
		{"observer with node", auth.NewUser{Name: "bob", Password: "pw-secret", Role: auth.Observer, Node: "7"}, errs.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := s.CreateUser(ctx, tt.in)
			if tt.want < 0 {
				if err != nil {
					t.Fatalf("CreateUser: %v", err)
				}
				if u.Name != tt.in.Name || u.Role != tt.in.Role || u.Node != tt.in.Node {
					t.Fatalf("created %+v from %+v", u, tt.in)
				}
				return
			}
			if !errs.Is(err, tt.want) {
				t.Fatalf("CreateUser: got %v, want kind %v", err, tt.want)
			}
		})
	}
	users, err := s.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range users {
		names = append(names, u.Name)
	}
	if !slices.Equal(names, []string{"alice", "bob72", "bob8", "node-7"}) {
		t.Fatalf("ListUsers: %v", names)
	}
}

func TestVerifyPassword(t *testing.T) {
	s, _ := newService(t, auth.WithNodeNames(fakeNodes{"7": {"7", "node-7.example.com", "0b5a2c1e-0000-4000-8000-000000000007"}}))
	ctx := context.Background()
	mustCreate(t, s, auth.NewUser{Name: "alice", Password: "s3cret-pw", Role: auth.Observer})
	mustCreate(t, s, auth.NewUser{Name: "n7", Password: "node-pw-secret", Role: auth.Node, Node: "7"})
	mustCreate(t, s, auth.NewUser{Name: "n9", Password: "node-pw-secret", Role: auth.Node, Node: "node-9"})
	tests := []struct {
		user, password string
		want           *auth.Principal
	}{
		{"alice", "s3cret-pw", &auth.Principal{User: "alice", Role: auth.Observer}},
		{"alice", "wrong", nil},
		{"alice", "", nil},
		{"alice", "s3cret-pw ", nil},
		{"nobody", "s3cret-pw", nil},
		{"", "", nil},
		{"al:ice", "s3cret-pw", nil},
		{"n7", "node-pw-secret", &auth.Principal{User: "n7", Role: auth.Node, NodeNames: []string{"7", "node-7.example.com", "0b5a2c1e-0000-4000-8000-000000000007"}}},
		// A node the registry does not know is addressed by the reference itself.
		{"n9", "node-pw-secret", &auth.Principal{User: "n9", Role: auth.Node, NodeNames: []string{"node-9"}}},
	}
	failures := s.FailedLogins()
	for _, tt := range tests {
		p, err := s.VerifyPassword(ctx, tt.user, tt.password)
		if tt.want == nil {
			if !errs.Is(err, errs.Unauthenticated) {
				t.Errorf("VerifyPassword(%q, %q): got %+v, %v; want unauthenticated", tt.user, tt.password, p, err)
			}
			failures++
			continue
		}
		if err != nil || p.User != tt.want.User || p.Role != tt.want.Role || !slices.Equal(p.NodeNames, tt.want.NodeNames) {
			t.Errorf("VerifyPassword(%q, %q) = %+v, %v; want %+v", tt.user, tt.password, p, err, *tt.want)
		}
	}
	if got := s.FailedLogins(); got != failures {
		t.Errorf("FailedLogins = %d, want %d", got, failures)
	}
}

func TestVerificationCache(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, idx := newService(t, auth.WithClock(func() time.Time { return now }), auth.WithCacheTTL(time.Minute))
	ctx := context.Background()
	mustCreate(t, s, auth.NewUser{Name: "hiera", Password: "pw-secret", Role: auth.Observer})
	_, secret, err := s.CreateToken(ctx, "hiera", "ci")
	if err != nil {
		t.Fatal(err)
	}
	verify := func() error {
		if _, err := s.VerifyPassword(ctx, "hiera", "pw-secret"); err != nil {
			return err
		}
		_, err := s.VerifyToken(ctx, secret)
		return err
	}
	if err := verify(); err != nil {
		t.Fatal(err)
	}
	gets := idx.gets
	for range 100 {
		if err := verify(); err != nil {
			t.Fatal(err)
		}
	}
	if idx.gets != gets {
		t.Fatalf("cached verifications read the index %d times", idx.gets-gets)
	}
	// A wrong password is never answered from the cache of the right one.
	if _, err := s.VerifyPassword(ctx, "hiera", "pw2-secret"); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("wrong password: %v", err)
	}
	// After the TTL the store is asked again.
	now = now.Add(time.Minute)
	if err := verify(); err != nil || idx.gets == gets {
		t.Fatalf("after the TTL: err %v, gets %d -> %d", err, gets, idx.gets)
	}
	// Deleting the user voids the cache at once in this process, and its tokens go too.
	if err := s.DeleteUser(ctx, "hiera"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyPassword(ctx, "hiera", "pw-secret"); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("deleted user: %v", err)
	}
	if _, err := s.VerifyToken(ctx, secret); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("token of a deleted user: %v", err)
	}
	if toks, err := s.ListTokens(ctx, ""); err != nil || len(toks) != 0 {
		t.Fatalf("tokens after deleting their user: %v, %v", toks, err)
	}
}

// Two processes over one store (two Lambda instances): what one changes, the
// other sees once its cached verification expires, even though a renewal of an
// unchanged account skips bcrypt.
func TestExpiredVerificationSeesAccountChangesOfOtherProcesses(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := auth.WithClock(func() time.Time { return now })
	idx := newIndex(t)
	other := auth.NewService(idx, auth.WithBcryptCost(bcrypt.MinCost))
	s := auth.NewService(idx, auth.WithBcryptCost(bcrypt.MinCost), clock, auth.WithCacheTTL(time.Minute))
	ctx := context.Background()
	mustCreate(t, other, auth.NewUser{Name: "hiera", Password: "old-password", Role: auth.Admin})
	login := func(password string) (auth.Principal, error) { return s.VerifyPassword(ctx, "hiera", password) }

	if _, err := login("old-password"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if p, err := login("old-password"); err != nil || p.Role != auth.Admin {
		t.Fatalf("renewal of an unchanged account: %+v, %v", p, err)
	}
	// The other process replaces the account: new password, lower role.
	if err := other.DeleteUser(ctx, "hiera"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, other, auth.NewUser{Name: "hiera", Password: "new-password", Role: auth.Observer})
	if _, err := login("old-password"); err != nil {
		t.Fatalf("within the TTL the cached login stands (documented): %v", err)
	}
	now = now.Add(time.Minute)
	if _, err := login("old-password"); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("old password after the TTL: %v", err)
	}
	if p, err := login("new-password"); err != nil || p.Role != auth.Observer {
		t.Fatalf("new password: %+v, %v", p, err)
	}
	// Deleted elsewhere: refused after the TTL.
	if err := other.DeleteUser(ctx, "hiera"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if _, err := login("new-password"); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("deleted user after the TTL: %v", err)
	}
}

// BenchmarkVerifyPassword compares a bcrypt check (default cost) with the
// renewal of an expired cache entry of an unchanged account and with a fresh
// cache entry (every request of a busy client).
func BenchmarkVerifyPassword(b *testing.B) {
	ctx := context.Background()
	bolted, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer bolted.Close()
	now := time.Now()
	s := auth.NewService(bolted.Index, auth.WithClock(func() time.Time { return now }))
	if _, err := s.CreateUser(ctx, auth.NewUser{Name: "hiera", Password: "pw-secret", Role: auth.Observer}); err != nil {
		b.Fatal(err)
	}
	b.Run("bcrypt", func(b *testing.B) {
		for i := range b.N {
			// Unknown users from distinct addresses: bcrypt's cost, not the throttle's refusal.
			ctx := auth.WithClientAddress(ctx, fmt.Sprint("192.0.2.", i))
			if _, err := s.VerifyPassword(ctx, fmt.Sprint("nobody", i), "wrong-password"); err == nil {
				b.Fatal("a wrong password passed")
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		if _, err := s.VerifyPassword(ctx, "hiera", "pw-secret"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.VerifyPassword(ctx, "hiera", "pw-secret"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("expired-renewal", func(b *testing.B) {
		if _, err := s.VerifyPassword(ctx, "hiera", "pw-secret"); err != nil {
			b.Fatal(err)
		}
		for range b.N {
			now = now.Add(auth.DefaultCacheTTL)
			if _, err := s.VerifyPassword(ctx, "hiera", "pw-secret"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestTokens(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	mustCreate(t, s, auth.NewUser{Name: "alice", Password: "pw-secret", Role: auth.Admin})
	mustCreate(t, s, auth.NewUser{Name: "bob", Password: "pw-secret", Role: auth.Observer})
	if _, _, err := s.CreateToken(ctx, "carol", ""); !errs.Is(err, errs.NotFound) {
		t.Fatalf("token for a missing user: %v", err)
	}
	if _, _, err := s.CreateToken(ctx, "bob", strings.Repeat("d", 201)); !errs.Is(err, errs.Invalid) {
		t.Fatalf("long description: %v", err)
	}
	tokA, secretA, err := s.CreateToken(ctx, "alice", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	tokB, secretB, err := s.CreateToken(ctx, "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secretA, auth.TokenPrefix) || len(secretA) != len(auth.TokenPrefix)+43 || secretA == secretB {
		t.Fatalf("secrets %q, %q", secretA, secretB)
	}
	if strings.Contains(secretA, tokA.ID) {
		t.Fatalf("token id %q is part of the secret", tokA.ID)
	}
	p, err := s.VerifyToken(ctx, secretB)
	if err != nil || p.User != "bob" || p.Role != auth.Observer || p.TokenID != tokB.ID {
		t.Fatalf("VerifyToken(bob's) = %+v, %v", p, err)
	}
	for _, bad := range []string{"", secretA[:len(secretA)-1], secretA + "x", strings.ToUpper(secretA), tokA.ID} {
		if _, err := s.VerifyToken(ctx, bad); !errs.Is(err, errs.Unauthenticated) {
			t.Errorf("VerifyToken(%q): %v", bad, err)
		}
	}
	mine, err := s.ListTokens(ctx, "alice")
	if err != nil || len(mine) != 1 || mine[0].ID != tokA.ID || mine[0].Description != "laptop" {
		t.Fatalf("ListTokens(alice) = %+v, %v", mine, err)
	}
	all, err := s.ListTokens(ctx, "")
	if err != nil || len(all) != 2 {
		t.Fatalf("ListTokens() = %+v, %v", all, err)
	}
	if err := s.RevokeToken(ctx, tokA.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyToken(ctx, secretA); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("revoked token: %v", err)
	}
	for _, id := range []string{tokA.ID, "", "x", tokB.ID[:8]} {
		if err := s.RevokeToken(ctx, id); !errs.Is(err, errs.NotFound) {
			t.Errorf("RevokeToken(%q): %v", id, err)
		}
	}
}

func TestEnsureUser(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	admin := auth.NewUser{Name: "admin", Password: "first-password", Role: auth.Admin}
	if created, err := s.EnsureUser(ctx, admin); err != nil || !created {
		t.Fatalf("first EnsureUser: %v, %v", created, err)
	}
	admin.Password = "second-password"
	if created, err := s.EnsureUser(ctx, admin); err != nil || created {
		t.Fatalf("second EnsureUser: %v, %v", created, err)
	}
	// An existing account keeps its password: the variable only bootstraps.
	if _, err := s.VerifyPassword(ctx, "admin", "first-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureUser(ctx, auth.NewUser{Name: "x", Role: auth.Admin}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("EnsureUser without password: %v", err)
	}
}

func mustCreate(t *testing.T, s *auth.Service, in auth.NewUser) {
	t.Helper()
	if _, err := s.CreateUser(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

// TestFailedLoginThrottle: failed logins of one user, or from one address, are
// refused with 429 and a Retry-After before any bcrypt once over their rate,
// drain with time, and never stand in the way of credentials already verified.
func TestFailedLoginThrottle(t *testing.T) {
	now := time.Now()
	s, _ := newService(t, auth.WithClock(func() time.Time { return now }))
	mustCreate(t, s, auth.NewUser{Name: "hiera", Password: "good-password", Role: auth.Observer})
	mustCreate(t, s, auth.NewUser{Name: "victim", Password: "victim-password", Role: auth.Observer})
	from := func(addr string) context.Context { return auth.WithClientAddress(context.Background(), addr) }

	t.Run("per user", func(t *testing.T) {
		var refused int
		for i := range 20 {
			_, err := s.VerifyPassword(from(fmt.Sprint("10.1.0.", i)), "victim", "guess")
			switch {
			case errs.Is(err, errs.TooManyRequests):
				refused++
				if errs.RetryAfterOf(err) <= 0 {
					t.Fatalf("429 without a wait: %v", err)
				}
			case !errs.Is(err, errs.Unauthenticated):
				t.Fatalf("guess %d: %v", i, err)
			}
		}
		if refused != 10 {
			t.Fatalf("%d of 20 guesses of one user from 20 addresses refused, want the 10 past the burst", refused)
		}
		// Even the right password waits: the guesser must not learn it is right.
		if _, err := s.VerifyPassword(from("10.2.0.1"), "victim", "victim-password"); !errs.Is(err, errs.TooManyRequests) {
			t.Fatalf("right password while throttled: %v", err)
		}
		now = now.Add(time.Minute) // 10 failures drained
		if _, err := s.VerifyPassword(from("10.2.0.1"), "victim", "victim-password"); err != nil {
			t.Fatalf("after the wait: %v", err)
		}
	})

	t.Run("per address", func(t *testing.T) {
		var refused int
		for i := range 40 {
			if _, err := s.VerifyPassword(from("10.9.9.9"), fmt.Sprint("nobody", i), "guess"); errs.Is(err, errs.TooManyRequests) {
				refused++
			}
		}
		if refused != 10 {
			t.Fatalf("%d of 40 guesses of distinct users from one address refused, want the 10 past the burst of 30", refused)
		}
		// Another address is not affected, nor is a cached login from this one.
		if _, err := s.VerifyPassword(from("10.9.9.10"), "nobody", "guess"); !errs.Is(err, errs.Unauthenticated) {
			t.Fatalf("another address: %v", err)
		}
	})

	// Cached credentials pass however many failures their user and address have.
	if _, err := s.VerifyPassword(from("10.0.0.1"), "hiera", "good-password"); err != nil {
		t.Fatal(err)
	}
	for range 30 {
		_, _ = s.VerifyPassword(from("10.0.0.1"), "hiera", "guess")
	}
	if _, err := s.VerifyPassword(from("10.0.0.1"), "hiera", "good-password"); err != nil {
		t.Fatalf("cached good login during the flood: %v", err)
	}
	failures := s.FailedLogins()
	_, _ = s.VerifyPassword(from("10.0.0.1"), "hiera", "guess")
	if s.FailedLogins() != failures {
		t.Fatal("a throttled attempt was verified (counted as a failed verification)")
	}

	// Once their cache entry expires, verified credentials are renewed, not
	// throttled, while the user's bucket is still full; an account replaced
	// meanwhile is a new verification, and waits.
	now = now.Add(auth.DefaultCacheTTL + time.Second)
	for range 30 { // the flood goes on: the user's bucket is full again
		_, _ = s.VerifyPassword(from("10.0.0.1"), "hiera", "guess")
	}
	if _, err := s.VerifyPassword(from("10.0.0.1"), "hiera", "guess"); !errs.Is(err, errs.TooManyRequests) {
		t.Fatalf("a guess after the TTL during the flood: %v, want 429", err)
	}
	if _, err := s.VerifyPassword(from("10.0.0.1"), "hiera", "good-password"); err != nil {
		t.Fatalf("renewing verified credentials after the TTL, during the flood: %v", err)
	}
	if err := s.DeleteUser(context.Background(), "hiera"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, auth.NewUser{Name: "hiera", Password: "new-password", Role: auth.Observer})
	for _, password := range []string{"good-password", "new-password"} {
		if _, err := s.VerifyPassword(from("10.0.0.1"), "hiera", password); !errs.Is(err, errs.TooManyRequests) {
			t.Fatalf("%s after the account was replaced, during the flood: %v, want 429", password, err)
		}
	}
}
