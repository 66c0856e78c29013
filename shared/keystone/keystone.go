// Package keystone validates OpenStack Keystone tokens (the X-Auth-Token
// header) the way keystonemiddleware does: tuningbox authenticates to the
// Keystone v3 API with its own service credentials and asks
// GET /v3/auth/tokens about each client token (X-Subject-Token). A valid
// token's project and roles are mapped to a tuningbox role:
//
//   - the token must be scoped to the configured project (by id, or by name
//     within the project's domain); a token of any other project, or an
//     unscoped one, gets no role here;
//   - each of its Keystone roles is looked up in the role mapping (for
//     example admin=admin, member=observer, reader=observer) and the most
//     powerful tuningbox role found wins; none found is 403.
//
// Answers are cached (under the SHA-256 of the token) until the token
// expires or for at most the cache bound, whichever comes first, so a
// revoked token is refused at the latest one bound after its revocation.
// Invalid tokens are remembered for the same bound, so a client repeating a
// bad token does not reach Keystone every time, and count as failed logins of
// the client's address: past the rate, its tokens the cache cannot answer are
// refused (429) before Keystone is asked (LimitClients).
package keystone

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sync/singleflight"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/errs"
)

// Config says where Keystone is, how tuningbox authenticates to it and how
// tokens map to tuningbox roles.
type Config struct {
	// URL is the Keystone v3 endpoint, e.g. https://keystone.example.com:5000/v3.
	URL string
	// The service user tuningbox validates tokens with (it needs the
	// "service" role, or system reader, to validate others' tokens), and the project it is scoped to.
	User, Password, UserDomain           string
	ServiceProject, ServiceProjectDomain string
	// Project is the project (id or name in ProjectDomain) whose tokens are
	// accepted; the roles a user holds there are mapped by Roles.
	Project, ProjectDomain string
	// Roles maps Keystone role names to tuningbox roles (admin or observer).
	Roles map[string]auth.Role
	// CacheBound is the longest a validation is trusted without asking Keystone again.
	CacheBound time.Duration
	// CacheBytes bounds the cached answers (0: DefaultCacheBytes); the least
	// recently used go first.
	CacheBytes int64
}

// Defaults.
const (
	DefaultDomain     = "Default"
	DefaultRoles      = "admin=admin,member=observer,reader=observer"
	DefaultCacheBound = 60 * time.Second
	DefaultCacheBytes = 1 << 20
	// maxTokenLen bounds what is forwarded to Keystone (Fernet tokens are about 200 bytes).
	maxTokenLen = 4096
	// serviceTokenMargin renews the service token this long (at most a tenth
	// of its lifetime) before it expires.
	serviceTokenMargin = 30 * time.Second
)

// ParseRoles reads a role mapping "keystoneRole=tuningboxRole,...".
func ParseRoles(s string) (map[string]auth.Role, error) {
	roles := map[string]auth.Role{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		ks, tb, ok := strings.Cut(item, "=")
		ks, tb = strings.TrimSpace(ks), strings.TrimSpace(tb)
		if !ok || ks == "" {
			return nil, fmt.Errorf("keystone role mapping %q: want keystoneRole=tuningboxRole", item)
		}
		if r := auth.Role(tb); r != auth.Admin && r != auth.Observer {
			return nil, fmt.Errorf("keystone role mapping %q: a Keystone role maps to admin or observer", item)
		}
		roles[ks] = auth.Role(tb)
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("keystone role mapping %q maps no role", s)
	}
	return roles, nil
}

// Validator validates tokens against Keystone and caches the answers.
type Validator struct {
	cfg    Config
	base   string // URL without a trailing slash, ending in /v3
	client *http.Client
	now    func() time.Time

	answers *cache.LRU[[32]byte, answer]
	// asking joins concurrent validations of one token into one Keystone call.
	asking singleflight.Group
	limit  ClientLimiter

	mu             sync.Mutex
	serviceToken   string
	serviceRenewAt time.Time
}

type answer struct {
	principal auth.Principal
	err       error
	until     time.Time
}

// cost approximates the memory a cached answer takes, its key (a SHA-256) included.
func (a answer) cost() int64 {
	n := cache.EntryOverhead + int64(unsafe.Sizeof(a)-unsafe.Sizeof(a.principal)) + sha256.Size + a.principal.Size()
	if a.err != nil {
		n += int64(len(a.err.Error()))
	}
	return n
}

// New checks cfg and returns a validator that talks to Keystone through client.
func New(cfg Config, client *http.Client, now func() time.Time) (*Validator, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("keystone URL %q is not an http(s) URL", cfg.URL)
	}
	if cfg.User == "" || cfg.Password == "" || cfg.ServiceProject == "" || cfg.Project == "" {
		return nil, fmt.Errorf("keystone needs a service user, its password, its project and the project whose tokens are accepted")
	}
	if len(cfg.Roles) == 0 {
		return nil, fmt.Errorf("keystone needs a role mapping")
	}
	if cfg.CacheBound <= 0 {
		return nil, fmt.Errorf("keystone cache bound must be positive")
	}
	base := strings.TrimRight(cfg.URL, "/")
	if !strings.HasSuffix(base, "/v3") {
		base += "/v3"
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	return &Validator{cfg: cfg, base: base, client: client, now: now,
		answers: cache.New[[32]byte](cfg.CacheBytes, answer.cost)}, nil
}

// ClientLimiter throttles clients whose tokens fail (auth.Service's per-address rule).
type ClientLimiter interface {
	CheckClient(ctx context.Context) error
	FailedClient(ctx context.Context)
}

// LimitClients makes tokens that Keystone refuses count against their client,
// and refuses a client over its rate before asking Keystone about a token.
func (v *Validator) LimitClients(l ClientLimiter) { v.limit = l }

var errBadToken = errs.New(errs.Unauthenticated, "invalid, expired or revoked Keystone token")

// Verify returns the principal of a Keystone token: 401 for a token Keystone
// does not know (invalid, expired, revoked), 403 for a valid token without a
// tuningbox role in the configured project.
func (v *Validator) Verify(ctx context.Context, token string) (auth.Principal, error) {
	if token == "" || len(token) > maxTokenLen || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		if v.limit != nil {
			v.limit.FailedClient(ctx)
		}
		return auth.Principal{}, errBadToken
	}
	key := sha256.Sum256([]byte(token))
	now := v.now()
	if a, ok := v.answers.Get(key); ok && now.Before(a.until) {
		return a.principal, a.err
	}
	if v.limit != nil {
		if err := v.limit.CheckClient(ctx); err != nil {
			return auth.Principal{}, err
		}
	}
	got, err, _ := v.asking.Do(string(key[:]), func() (any, error) {
		tok, err := v.validate(ctx, token)
		if err != nil && !errs.Is(err, errs.Unauthenticated) {
			return nil, err // Keystone unreachable or confused: nothing to remember
		}
		until := now.Add(v.cfg.CacheBound)
		a := answer{err: err, until: until}
		if err == nil {
			a.principal, a.err = v.principal(tok)
			a.until = minTime(until, tok.ExpiresAt)
		}
		v.answers.Add(key, a)
		return a, nil
	})
	if err != nil {
		return auth.Principal{}, err
	}
	a := got.(answer)
	if v.limit != nil && errs.Is(a.err, errs.Unauthenticated) {
		v.limit.FailedClient(ctx)
	}
	return a.principal, a.err
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// named is a Keystone entity with an id, a name and perhaps a domain.
type named struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Domain *named `json:"domain,omitempty"`
}

// tokenBody is the part of Keystone's token document tuningbox reads.
type tokenBody struct {
	ExpiresAt time.Time `json:"expires_at"`
	User      named     `json:"user"`
	Project   *named    `json:"project"`
	Roles     []named   `json:"roles"`
}

// principal maps a valid token to a tuningbox principal.
func (v *Validator) principal(tok tokenBody) (auth.Principal, error) {
	user := "keystone:" + tok.User.Name
	if d := tok.User.Domain; d != nil && d.Name != "" && d.Name != DefaultDomain {
		user += "@" + d.Name
	}
	if !v.inProject(tok.Project) {
		return auth.Principal{}, errs.New(errs.Forbidden, "the Keystone token of %q is not scoped to project %q", user, v.cfg.Project)
	}
	var role auth.Role
	for _, r := range tok.Roles {
		switch v.cfg.Roles[r.Name] {
		case auth.Admin:
			role = auth.Admin
		case auth.Observer:
			if role == "" {
				role = auth.Observer
			}
		}
	}
	if role == "" {
		return auth.Principal{}, errs.New(errs.Forbidden, "%q holds no Keystone role that maps to a tuningbox role in project %q", user, v.cfg.Project)
	}
	return auth.Principal{User: user, Role: role}, nil
}

func (v *Validator) inProject(p *named) bool {
	if p == nil {
		return false
	}
	if p.ID == v.cfg.Project {
		return true
	}
	domain := v.cfg.ProjectDomain
	if domain == "" {
		domain = DefaultDomain
	}
	return p.Name == v.cfg.Project && p.Domain != nil && (p.Domain.Name == domain || p.Domain.ID == domain)
}

// validate asks Keystone about token; a 401 on the service token renews it once.
func (v *Validator) validate(ctx context.Context, token string) (tokenBody, error) {
	for attempt := 0; ; attempt++ {
		svc, err := v.service(ctx, attempt > 0)
		if err != nil {
			return tokenBody{}, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.base+"/auth/tokens", nil)
		if err != nil {
			return tokenBody{}, err
		}
		req.Header.Set("X-Auth-Token", svc)
		req.Header.Set("X-Subject-Token", token)
		req.Header.Set("Accept", "application/json")
		resp, err := v.client.Do(req)
		if err != nil {
			return tokenBody{}, fmt.Errorf("keystone: validate token: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return tokenBody{}, fmt.Errorf("keystone: validate token: %w", err)
		}
		switch {
		case resp.StatusCode == http.StatusOK:
			var doc struct {
				Token tokenBody `json:"token"`
			}
			if err := json.Unmarshal(body, &doc); err != nil || doc.Token.ExpiresAt.IsZero() {
				return tokenBody{}, fmt.Errorf("keystone: validate token: unexpected answer %.200q", body)
			}
			return doc.Token, nil
		case resp.StatusCode == http.StatusNotFound:
			return tokenBody{}, errBadToken
		case resp.StatusCode == http.StatusUnauthorized && attempt == 0:
			continue // our service token expired or was revoked
		default:
			return tokenBody{}, fmt.Errorf("keystone: validate token: HTTP %d %.200q", resp.StatusCode, body)
		}
	}
}

// service returns the service token, fetching a new one when there is none,
// it is about to expire, or renew is set.
func (v *Validator) service(ctx context.Context, renew bool) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	if !renew && v.serviceToken != "" && now.Before(v.serviceRenewAt) {
		return v.serviceToken, nil
	}
	domain := func(name string) map[string]string {
		if name == "" {
			name = DefaultDomain
		}
		return map[string]string{"name": name}
	}
	reqBody, err := json.Marshal(map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": v.cfg.User, "domain": domain(v.cfg.UserDomain), "password": v.cfg.Password}}},
		"scope": map[string]any{"project": map[string]any{"name": v.cfg.ServiceProject, "domain": domain(v.cfg.ServiceProjectDomain)}},
	}})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.base+"/auth/tokens?nocatalog", bytes.NewReader(reqBody))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("keystone: service authentication: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("keystone: service authentication: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		// Never the request: it holds the password.
		return "", fmt.Errorf("keystone: service authentication as %q: HTTP %d %.200q", v.cfg.User, resp.StatusCode, body)
	}
	var doc struct {
		Token tokenBody `json:"token"`
	}
	token := resp.Header.Get("X-Subject-Token")
	if err := json.Unmarshal(body, &doc); err != nil || token == "" {
		return "", fmt.Errorf("keystone: service authentication: unexpected answer")
	}
	v.serviceToken = token
	v.serviceRenewAt = doc.Token.ExpiresAt.Add(-min(serviceTokenMargin, doc.Token.ExpiresAt.Sub(now)/10))
	return token, nil
}
