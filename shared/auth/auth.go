// Package auth keeps the users and API tokens of tuningbox and verifies
// credentials: passwords are stored as bcrypt hashes, tokens only as their
// SHA-256. Successful verifications are cached in memory for a short time so
// that a client making many requests (Hiera) pays for bcrypt once, not per
// request; when an entry expires, an unchanged account is renewed with one
// index read and no new bcrypt.
//
// Index layout (partition prefix "auth#"):
//
//	auth#user  / name          -> userRecord
//	auth#token / sha256(token) -> tokenRecord (the token id is the first 16 hex digits of the hash)
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/crypto/bcrypt"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Role decides what a principal may do.
type Role string

const (
	// Admin reads and writes everything, and manages users and tokens.
	Admin Role = "admin"
	// Observer reads everything except users and tokens.
	Observer Role = "observer"
	// Node reads only its own node's configuration.
	Node Role = "node"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool { return r == Admin || r == Observer || r == Node }

// Principal is an authenticated caller.
type Principal struct {
	User string
	Role Role
	// NodeNames are the level values the node's data is filed under (its id,
	// FQDN and UUID as far as they are known); set for the Node role only.
	NodeNames []string
	// NodeEnvironment (the environment's id and UUID) and NodeLevels (the
	// node's placement above the node level) confine a Node principal's reads
	// to its own documents; empty for a node the registry does not know.
	NodeEnvironment []string
	NodeLevels      map[string]string
	// TokenID identifies the API token used, empty for a password login.
	TokenID string
}

// NodeNames resolves a node reference (id, UUID or FQDN) to every name of
// that node, its environment and placement. An unknown node is errs.NotFound.
// shared/app adapts the node registry to it.
type NodeNames interface {
	NodeNames(ctx context.Context, ref string) (NodeIdentity, error)
}

// NodeIdentity is what the registry knows of a node, for its principal.
type NodeIdentity struct {
	// Names are its id, FQDN and UUID.
	Names []string
	// Environment is its environment's id and UUID.
	Environment []string
	// Levels is its placement: its values for the levels above the node level.
	Levels map[string]string
}

// Defaults of the verification cache.
const (
	DefaultCacheTTL = 30 * time.Second
	// DefaultCacheBytes bounds what a service made without WithCacheBytes
	// remembers of credentials: verifications and failed-login buckets.
	DefaultCacheBytes = 4 << 20
)

// Size approximates the bytes p takes, its strings, slices and map included,
// for the caches that hold principals.
func (p Principal) Size() int64 {
	n := int(unsafe.Sizeof(p)) + len(p.User) + len(p.Role) + len(p.TokenID)
	for _, names := range [][]string{p.NodeNames, p.NodeEnvironment} {
		for _, name := range names {
			n += int(unsafe.Sizeof(name)) + len(name)
		}
	}
	for level, value := range p.NodeLevels {
		n += mapSlotBytes + len(level) + len(value)
	}
	if p.NodeLevels != nil {
		n += mapHeaderBytes
	}
	return int64(n)
}

// The approximate memory of a small map of strings: its header and groups
// once, and per entry a slot (two string headers and a control byte, rounded up).
const (
	mapHeaderBytes = 48 + 8*mapSlotBytes
	mapSlotBytes   = 40
)

// ErrBadCredentials is the answer to any failed verification; it never says
// whether the user, the password or the token was wrong.
var ErrBadCredentials = errs.New(errs.Unauthenticated, "invalid credentials")

// Service manages users and tokens over an index and verifies credentials.
type Service struct {
	idx        store.Index
	nodes      NodeNames
	now        func() time.Time
	bcryptCost int
	ttl        time.Duration

	// verified caches successful verifications under an HMAC of the
	// credentials, keyed with a secret of this process, so that the cache holds
	// nothing an attacker could test passwords against.
	verified *cache.LRU[[32]byte, verification]
	cacheKey [32]byte
	macs     sync.Pool     // of *keyedMAC under cacheKey (credentialKey)
	gen      atomic.Uint64 // bumped when a user or token goes away: older cache entries are void
	failed   atomic.Uint64
	// serverCertnames are the certnames of Puppet servers: their client
	// certificates read as observers.
	serverCertnames []string
	throttle        *throttle
	// cacheBytes bounds verified and throttle together (WithCacheBytes).
	cacheBytes int64
	// dummyHash is compared against for unknown users, so that timing does not
	// reveal which users exist; made on first use, to keep start-up fast.
	dummyHash func() []byte
}

type verification struct {
	principal Principal
	expires   time.Time
	gen       uint64
	// hashDigest is the SHA-256 of the password hash a Basic login was checked
	// against (zero for tokens): while the stored hash is the same, an expired
	// entry is renewed with one index read instead of another bcrypt.
	hashDigest [32]byte
}

// cost approximates the memory v takes in the cache: the entry, its key (an
// HMAC-SHA256), v itself and what its principal holds beyond its struct.
func (v verification) cost() int64 {
	return cache.EntryOverhead + sha256.Size + int64(unsafe.Sizeof(v)-unsafe.Sizeof(v.principal)) + v.principal.Size()
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithBcryptCost sets the bcrypt cost of new password hashes (tests use bcrypt.MinCost).
func WithBcryptCost(cost int) Option { return func(s *Service) { s.bcryptCost = cost } }

// WithCacheTTL sets how long a successful verification is remembered; 0 disables the cache.
func WithCacheTTL(ttl time.Duration) Option { return func(s *Service) { s.ttl = ttl } }

// WithCacheBytes bounds what the service remembers of credentials to total
// bytes: half for cached verifications, a quarter each for the failed-login
// buckets of user names and of client addresses. The least recently used go
// first.
func WithCacheBytes(total int64) Option { return func(s *Service) { s.cacheBytes = total } }

// WithNodeNames sets the resolver of node references for Node principals.
func WithNodeNames(n NodeNames) Option { return func(s *Service) { s.nodes = n } }

// WithServerCertnames names the client certificates (certnames) that act as
// observers, for the Puppet servers that compile catalogs for every node.
func WithServerCertnames(names []string) Option {
	return func(s *Service) {
		for _, n := range names {
			s.serverCertnames = append(s.serverCertnames, strings.ToLower(n))
		}
	}
}

// NewService returns the user and token service over idx.
func NewService(idx store.Index, opts ...Option) *Service {
	s := &Service{
		idx:        idx,
		now:        func() time.Time { return time.Now().UTC() },
		bcryptCost: bcrypt.DefaultCost,
		ttl:        DefaultCacheTTL,
		cacheBytes: DefaultCacheBytes,
	}
	for _, o := range opts {
		o(s)
	}
	s.verified = cache.New[[32]byte](s.cacheBytes/2, verification.cost)
	s.throttle = newThrottle(s.now, s.cacheBytes/4)
	if _, err := rand.Read(s.cacheKey[:]); err != nil {
		panic("auth: no randomness for the cache key: " + err.Error())
	}
	s.dummyHash = sync.OnceValue(func() []byte {
		hash, err := bcrypt.GenerateFromPassword(s.cacheKey[:16], s.bcryptCost)
		if err != nil {
			panic("auth: bcrypt: " + err.Error())
		}
		return hash
	})
	return s
}

// FailedLogins is the number of failed verifications since the service started.
func (s *Service) FailedLogins() uint64 { return s.failed.Load() }

// VerifyPassword checks a user name and password and returns the principal.
// Any mismatch is ErrBadCredentials. Credentials the cache does not know (or
// knew against another password hash) are refused with errs.TooManyRequests
// while failed logins of the user or of the client address (WithClientAddress)
// are over their rate (see throttle).
func (s *Service) VerifyPassword(ctx context.Context, user, password string) (Principal, error) {
	key := s.credentialKey('b', user, password)
	prev, fresh := s.cached(key)
	if fresh {
		return prev.principal, nil
	}
	// An expired entry says these very credentials were right: renewing it is
	// no guess, so a flood of failures on a user name does not lock its
	// clients out once per TTL. A changed account is a new verification, throttled.
	renewing := prev.hashDigest != [32]byte{}
	if !renewing {
		if err := s.throttle.check(ctx, user); err != nil {
			return Principal{}, err
		}
	}
	if len(password) > MaxPasswordLen {
		// No stored password is this long; bcrypt would only read its first 72 bytes.
		return Principal{}, s.failLogin(ctx, user)
	}
	gen := s.gen.Load()
	rec, err := s.user(ctx, user)
	if errs.Is(err, errs.NotFound) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return Principal{}, s.failLogin(ctx, user)
	}
	if err != nil {
		return Principal{}, err
	}
	// An expired entry of this password against this very hash needs no new
	// bcrypt (about 50 ms of CPU): only a changed account is checked again.
	// Without this, every busy client stalled once per TTL.
	digest := sha256.Sum256(rec.PasswordHash)
	if prev.hashDigest != digest {
		if renewing {
			if err := s.throttle.check(ctx, user); err != nil {
				return Principal{}, err
			}
		}
		if bcrypt.CompareHashAndPassword(rec.PasswordHash, []byte(password)) != nil {
			return Principal{}, s.failLogin(ctx, user)
		}
	}
	p, err := s.principal(ctx, rec, "")
	if err != nil {
		return Principal{}, err
	}
	s.remember(key, verification{principal: p, gen: gen, hashDigest: digest})
	return p, nil
}

// VerifyToken checks an API token and returns the principal of its user.
// An unknown or revoked token, or one whose user is gone, is ErrBadCredentials.
func (s *Service) VerifyToken(ctx context.Context, token string) (Principal, error) {
	key := s.credentialKey('t', token)
	if v, fresh := s.cached(key); fresh {
		return v.principal, nil
	}
	gen := s.gen.Load()
	hash := tokenHash(token)
	item, err := s.idx.Get(ctx, tokenKey(hash))
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, s.fail()
	}
	if err != nil {
		return Principal{}, err
	}
	tok, err := decode[tokenRecord](item)
	if err != nil {
		return Principal{}, err
	}
	// The index found the item by its hash; compare again in constant time so that
	// no backend's key matching (case folding, prefixes) can stand in for equality.
	if !hmac.Equal([]byte(tok.Hash), []byte(hash)) || s.expired(tok.Token) {
		return Principal{}, s.fail()
	}
	rec, err := s.user(ctx, tok.User)
	if errs.Is(err, errs.NotFound) {
		return Principal{}, s.fail()
	}
	if err != nil {
		return Principal{}, err
	}
	p, err := s.principal(ctx, rec, tok.ID)
	if err != nil {
		return Principal{}, err
	}
	v := verification{principal: p, gen: gen}
	if tok.ExpiresAt != nil {
		v.expires = *tok.ExpiresAt // a session is not remembered past its end
	}
	s.remember(key, v)
	return p, nil
}

// VerifyCertname returns the principal of a client certificate the TLS layer
// has verified, by its certname: an observer for a configured server
// certname, else the node registered under that FQDN, as the same Node
// principal a node user of that node gets. A certname that names no registered
// node (ids and UUIDs are not FQDNs) is ErrBadCredentials.
func (s *Service) VerifyCertname(ctx context.Context, certname string) (Principal, error) {
	user := "cert:" + certname // ":" is no user-name character: never a local user
	if slices.Contains(s.serverCertnames, certname) {
		return Principal{User: user, Role: Observer}, nil
	}
	key := s.credentialKey('c', certname)
	if v, fresh := s.cached(key); fresh {
		return v.principal, nil
	}
	gen := s.gen.Load()
	if s.nodes == nil || ident.IsIntegerID(certname) || ident.IsUUID(certname) {
		return Principal{}, s.fail()
	}
	if _, err := s.nodes.NodeNames(ctx, certname); errs.Is(err, errs.NotFound) {
		return Principal{}, s.fail()
	} else if err != nil {
		return Principal{}, err
	}
	p, err := s.principal(ctx, userRecord{Name: user, Role: Node, Node: certname}, "")
	if err != nil {
		return Principal{}, err
	}
	s.remember(key, verification{principal: p, gen: gen})
	return p, nil
}

func (s *Service) fail() error {
	s.failed.Add(1)
	return ErrBadCredentials
}

// failLogin is fail for a password login, which also fills the throttle's buckets.
func (s *Service) failLogin(ctx context.Context, user string) error {
	s.throttle.failed(ctx, user)
	return s.fail()
}

// principal builds the principal of a verified user; a node user's names are
// resolved now, so authorization needs no lookup per request.
func (s *Service) principal(ctx context.Context, rec userRecord, tokenID string) (Principal, error) {
	p := Principal{User: rec.Name, Role: rec.Role, TokenID: tokenID}
	if rec.Role != Node {
		return p, nil
	}
	p.NodeNames = []string{rec.Node}
	if s.nodes == nil {
		return p, nil
	}
	node, err := s.nodes.NodeNames(ctx, rec.Node)
	switch {
	case errs.Is(err, errs.NotFound):
		// Not in the registry (yet): no environment, so no configuration to read.
	case err != nil:
		return Principal{}, err
	default:
		for _, n := range node.Names {
			if n != rec.Node {
				p.NodeNames = append(p.NodeNames, n)
			}
		}
		p.NodeEnvironment, p.NodeLevels = node.Environment, node.Levels
	}
	return p, nil
}

// credentialKey is an HMAC of the credential parts under the process's secret key.
// It runs on every authenticated request: the keyed HMACs and their input
// buffers are reused (macs).
func (s *Service) credentialKey(kind byte, parts ...string) [32]byte {
	m, _ := s.macs.Get().(*keyedMAC)
	if m == nil {
		m = &keyedMAC{mac: hmac.New(sha256.New, s.cacheKey[:])}
	}
	defer s.macs.Put(m)
	m.mac.Reset()
	m.in = append(m.in[:0], kind)
	for _, p := range parts {
		// Length-prefixed, so ("a:b", "c") and ("a", "b:c") differ.
		m.in = binary.BigEndian.AppendUint64(m.in, uint64(len(p)))
		m.in = append(m.in, p...)
	}
	m.mac.Write(m.in)
	clear(m.in) // the input holds a password
	// Summed into the reused buffer: a sum into key would move key to the heap.
	m.sum = m.mac.Sum(m.sum[:0])
	var key [32]byte
	copy(key[:], m.sum)
	return key
}

// keyedMAC is an HMAC under the service's cache key with buffers for its input and sum.
type keyedMAC struct {
	mac     hash.Hash
	in, sum []byte
}

// cached returns the verification cached under key in the current generation
// (the zero verification when there is none) and whether it is still fresh.
func (s *Service) cached(key [32]byte) (verification, bool) {
	if s.ttl <= 0 {
		return verification{}, false
	}
	v, ok := s.verified.Get(key)
	if !ok || v.gen != s.gen.Load() {
		return verification{}, false
	}
	return v, s.now().Before(v.expires)
}

// remember caches v, a verification that started at generation v.gen, for the
// TTL, or until v.expires when that comes sooner; one that raced with a
// deletion is not cached.
func (s *Service) remember(key [32]byte, v verification) {
	if s.ttl <= 0 || v.gen != s.gen.Load() {
		return
	}
	if end := s.now().Add(s.ttl); v.expires.IsZero() || end.Before(v.expires) {
		v.expires = end
	}
	s.verified.Add(key, v)
}

// forget voids every cached verification of this process. Other processes
// (Lambda instances) keep theirs until the TTL runs out.
func (s *Service) forget() { s.gen.Add(1) }

func decode[T any](it store.Item) (T, error) {
	var v T
	if err := json.Unmarshal(it.Value, &v); err != nil {
		return v, fmt.Errorf("decode %s/%s: %w", it.Partition, it.Sort, err)
	}
	return v, nil
}
