package auth_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/errs"
)

// A session token verifies as its user until it expires, also while a
// verification of it is cached, and expired sessions are deleted when the
// user opens another.
func TestSessionExpires(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, _ := newService(t, auth.WithClock(clock), auth.WithCacheTTL(5*time.Minute)) // a cache that would outlive the session
	ctx := context.Background()
	if _, err := s.CreateUser(ctx, auth.NewUser{Name: "n7", Password: "pw-secret", Role: auth.Node, Node: "7"}); err != nil {
		t.Fatal(err)
	}
	tok, secret, err := s.CreateSession(ctx, "n7", 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(now.Add(90*time.Second)) || tok.Description != auth.SessionDescription {
		t.Fatalf("session %+v", tok)
	}
	if session, err := s.IsSession(ctx, tok.ID); err != nil || !session {
		t.Fatalf("IsSession(session) = %v, %v", session, err)
	}
	apiToken, _, err := s.CreateToken(ctx, "n7", "agent")
	if err != nil {
		t.Fatal(err)
	}
	if session, err := s.IsSession(ctx, apiToken.ID); err != nil || session {
		t.Fatalf("IsSession(API token) = %v, %v", session, err)
	}
	p, err := s.VerifyToken(ctx, secret)
	if err != nil || p.User != "n7" || p.Role != auth.Node || p.TokenID != tok.ID {
		t.Fatalf("VerifyToken = %+v, %v", p, err)
	}
	advance(80 * time.Second) // 10 s left of the session, its verification cached
	if _, err := s.VerifyToken(ctx, secret); err != nil {
		t.Fatalf("before its end: %v", err)
	}
	advance(10 * time.Second)
	if _, err := s.VerifyToken(ctx, secret); !errs.Is(err, errs.Unauthenticated) {
		t.Fatalf("at its end: %v", err)
	}
	if _, _, err := s.CreateSession(ctx, "n7", time.Minute); err != nil {
		t.Fatal(err)
	}
	toks, err := s.ListTokens(ctx, "n7")
	if err != nil || len(toks) != 2 || slices.ContainsFunc(toks, func(k auth.Token) bool { return k.ID == tok.ID }) {
		t.Fatalf("after a new session, the tokens are %+v, %v: want the API token and the new session", toks, err)
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, _, err := s.CreateSession(ctx, "n7", ttl); !errs.Is(err, errs.Invalid) {
			t.Errorf("CreateSession(ttl %v): %v", ttl, err)
		}
	}
	if _, _, err := s.CreateSession(ctx, "nobody", time.Minute); !errs.Is(err, errs.NotFound) {
		t.Errorf("CreateSession(nobody): %v", err)
	}
}
