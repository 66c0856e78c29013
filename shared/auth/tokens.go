package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// TokenPrefix starts every API token, so that leaked tokens are easy to scan for.
const TokenPrefix = "tbx_"

// tokenIDLen is the length of a token id: a prefix of the token's SHA-256, safe to show and log.
const tokenIDLen = 16

// Token describes an API token (the wire's Token, stored as it is answered);
// the secret itself is shown once, at creation. Its ExpiresAt ends a session
// token's life (CreateSession); API tokens have none.
type Token = wire.Token

type tokenRecord struct {
	Token
	Hash string `json:"sha256"`
}

func tokenKey(hash string) store.Key { return store.Key{Partition: pToken, Sort: hash} }

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// MaxDescriptionLen bounds a token's description.
const MaxDescriptionLen = 200

// CreateToken creates an API token for an existing user and returns it with its
// secret, which is stored only as a SHA-256 hash.
func (s *Service) CreateToken(ctx context.Context, user, description string) (Token, string, error) {
	if len(description) > MaxDescriptionLen {
		return Token{}, "", errs.Invalidf("a description has at most %d bytes", MaxDescriptionLen)
	}
	return s.createToken(ctx, Token{User: user, Description: description, CreatedAt: s.now()})
}

// SessionDescription describes every session token in the token listing.
const SessionDescription = "console session"

// CreateSession creates a token for an existing user that expires after ttl,
// the browser's credential in the console (its secret as CreateToken's). The
// user's sessions that have expired are deleted on the way.
func (s *Service) CreateSession(ctx context.Context, user string, ttl time.Duration) (Token, string, error) {
	if ttl <= 0 {
		return Token{}, "", errs.Invalidf("a session lasts a positive time")
	}
	if err := s.deleteExpired(ctx, user); err != nil {
		return Token{}, "", err
	}
	now := s.now()
	expires := now.Add(ttl)
	return s.createToken(ctx, Token{User: user, Description: SessionDescription, CreatedAt: now, ExpiresAt: &expires})
}

// createToken stores a new token with the fields of tok and returns it with its secret.
func (s *Service) createToken(ctx context.Context, tok Token) (Token, string, error) {
	if _, err := s.user(ctx, tok.User); err != nil {
		return Token{}, "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Token{}, "", fmt.Errorf("token randomness: %w", err)
	}
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	hash := tokenHash(secret)
	tok.ID = hash[:tokenIDLen]
	rec := tokenRecord{Token: tok, Hash: hash}
	value, err := json.Marshal(rec)
	if err != nil {
		return Token{}, "", err
	}
	// The user must still exist when the token is stored.
	err = s.idx.Write(ctx, store.Create(tokenKey(hash), value), store.Check(userKey(tok.User), store.Cond{Kind: store.MustExist}))
	if errors.Is(err, store.ErrConflict) {
		return Token{}, "", errs.NotFoundf("user %q not found", tok.User)
	}
	if err != nil {
		return Token{}, "", err
	}
	return rec.Token, secret, nil
}

// expired reports whether tok has an end and it has passed.
func (s *Service) expired(tok Token) bool {
	return tok.ExpiresAt != nil && !s.now().Before(*tok.ExpiresAt)
}

// deleteExpired deletes user's tokens that have expired.
func (s *Service) deleteExpired(ctx context.Context, user string) error {
	items, err := s.tokenItems(ctx, user)
	if err != nil {
		return err
	}
	var ops []store.Op
	for _, it := range items {
		rec, err := decode[tokenRecord](it)
		if err != nil {
			return err
		}
		if s.expired(rec.Token) {
			ops = append(ops, store.DeleteAt(it.Key, it.Revision))
		}
	}
	if len(ops) == 0 {
		return nil
	}
	// A conflict is another request deleting or renewing the same records: nothing to do.
	if err := s.idx.Write(ctx, ops...); err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	return nil
}

// ListTokens lists the tokens of user, or of every user when user is "".
func (s *Service) ListTokens(ctx context.Context, user string) ([]Token, error) {
	items, err := s.tokenItems(ctx, user)
	if err != nil {
		return nil, err
	}
	out := make([]Token, 0, len(items))
	for _, it := range items {
		rec, err := decode[tokenRecord](it)
		if err != nil {
			return nil, err
		}
		out = append(out, rec.Token)
	}
	return out, nil
}

func (s *Service) tokenItems(ctx context.Context, user string) ([]store.Item, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: pToken})
	if err != nil {
		return nil, err
	}
	if user == "" {
		return items, nil
	}
	var mine []store.Item
	for _, it := range items {
		rec, err := decode[tokenRecord](it)
		if err != nil {
			return nil, err
		}
		if rec.User == user {
			mine = append(mine, it)
		}
	}
	return mine, nil
}

// RevokeToken deletes the token with the given id.
func (s *Service) RevokeToken(ctx context.Context, id string) error {
	if len(id) != tokenIDLen {
		return errs.NotFoundf("token %q not found", id)
	}
	items, err := s.idx.Query(ctx, store.Query{Partition: pToken, Prefix: id})
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return errs.NotFoundf("token %q not found", id)
	}
	ops := make([]store.Op, len(items))
	for i, it := range items {
		ops[i] = store.DeleteAt(it.Key, it.Revision)
	}
	if err := s.idx.Write(ctx, ops...); err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	s.forget()
	return nil
}

// IsSession reports whether the token with the given id is a session token
// (CreateSession); an unknown id is errs.NotFound.
func (s *Service) IsSession(ctx context.Context, id string) (bool, error) {
	if len(id) != tokenIDLen {
		return false, errs.NotFoundf("token %q not found", id)
	}
	items, err := s.idx.Query(ctx, store.Query{Partition: pToken, Prefix: id})
	if err != nil {
		return false, err
	}
	if len(items) == 0 {
		return false, errs.NotFoundf("token %q not found", id)
	}
	rec, err := decode[tokenRecord](items[0])
	return rec.ExpiresAt != nil, err
}
