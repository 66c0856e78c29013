package auth

import (
	"context"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/errs"
)

// Failed-login throttling: every failed password verification fills a leaky
// bucket of the user name and one of the client address; while either is
// full, a login that the verification cache cannot answer is refused with
// errs.TooManyRequests before any index read or bcrypt. So a password-guessing
// flood costs one map lookup per request, not 50 ms of bcrypt CPU that every
// other client's requests would wait behind, while a user whose credentials
// are cached keeps working even when someone guesses at their name.
const (
	// userBurst failures of one user name in a row are let through, then one per userEvery.
	userBurst = 10
	userEvery = 6 * time.Second
	// addressBurst failures from one client address (many users may share a
	// NAT), then one per addressEvery.
	addressBurst = 30
	addressEvery = time.Second
)

type clientAddrKey struct{}

// WithClientAddress records the address of the client (without the port) in
// ctx: failed logins are throttled per address as well as per user.
func WithClientAddress(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

func clientAddress(ctx context.Context) string {
	addr, _ := ctx.Value(clientAddrKey{}).(string)
	return addr
}

// throttle holds the leaky buckets of failed logins.
type throttle struct {
	now       func() time.Time
	users     *buckets
	addresses *buckets
}

// newThrottle keeps at most kindBytes of buckets of each kind; the least
// recently failed are forgotten first.
func newThrottle(now func() time.Time, kindBytes int64) *throttle {
	return &throttle{
		now:       now,
		users:     newBuckets(userBurst, userEvery, kindBytes),
		addresses: newBuckets(addressBurst, addressEvery, kindBytes),
	}
}

// check returns errs.TooManyRequests while the user's or the address's bucket is full.
func (t *throttle) check(ctx context.Context, user string) error {
	now := t.now()
	wait := max(t.users.wait(user, now), t.addresses.wait(clientAddress(ctx), now))
	if wait > 0 {
		return errs.Throttled(wait, "too many failed logins; try again in %d s", int(math.Ceil(wait.Seconds())))
	}
	return nil
}

// failed records a failed verification of user from ctx's client.
func (t *throttle) failed(ctx context.Context, user string) {
	now := t.now()
	t.users.add(user, now)
	t.addresses.add(clientAddress(ctx), now)
}

// buckets are leaky buckets by key: each failure adds one, and one drains every
// `every`; a bucket at `burst` is full.
type buckets struct {
	burst float64
	every time.Duration
	mu    sync.Mutex
	level *cache.LRU[string, *bucket]
}

type bucket struct {
	level float64
	at    time.Time
	// keyBytes is the length of the bucket's key, which its cost counts.
	keyBytes int
}

// cost approximates the memory b takes in the cache, its key included.
func (b *bucket) cost() int64 {
	return cache.EntryOverhead + int64(unsafe.Sizeof(*b)+unsafe.Sizeof("")) + int64(b.keyBytes)
}

func newBuckets(burst int, every time.Duration, maxBytes int64) *buckets {
	return &buckets{burst: float64(burst), every: every, level: cache.New[string](maxBytes, (*bucket).cost)}
}

// drained returns the level of b at now.
func (bs *buckets) drained(b *bucket, now time.Time) float64 {
	return max(0, b.level-float64(now.Sub(b.at))/float64(bs.every))
}

// wait returns how long until key's bucket has room for one more failure (0: now).
func (bs *buckets) wait(key string, now time.Time) time.Duration {
	if key == "" {
		return 0
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b, ok := bs.level.Get(key)
	if !ok {
		return 0
	}
	over := bs.drained(b, now) - (bs.burst - 1)
	if over <= 0 {
		return 0
	}
	return time.Duration(over * float64(bs.every))
}

func (bs *buckets) add(key string, now time.Time) {
	if key == "" {
		return
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b, ok := bs.level.Get(key)
	if !ok {
		b = &bucket{keyBytes: len(key)}
		bs.level.Add(key, b)
	}
	b.level, b.at = bs.drained(b, now)+1, now
}

// CheckClient refuses with errs.TooManyRequests while the client address of
// ctx (WithClientAddress) is over its failed-login rate: the same rule for
// verifiers outside this service (Keystone tokens) before they ask anyone.
func (s *Service) CheckClient(ctx context.Context) error {
	if wait := s.throttle.addresses.wait(clientAddress(ctx), s.throttle.now()); wait > 0 {
		return errs.Throttled(wait, "too many failed logins; try again in %d s", int(math.Ceil(wait.Seconds())))
	}
	return nil
}

// FailedClient records a failed verification outside this service from ctx's client address.
func (s *Service) FailedClient(ctx context.Context) {
	s.throttle.addresses.add(clientAddress(ctx), s.throttle.now())
	s.failed.Add(1)
}
