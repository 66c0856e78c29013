package auth

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The verification cache and the failed-login buckets are bounded in bytes
// (WithCacheBytes: a half and two quarters): the larger the entries, the
// fewer are kept, and the most recent stay.
func TestCachesCountBytes(t *testing.T) {
	const budget = 128 << 10
	keptVerifications := func(p Principal) int {
		s := NewService(nil, WithCacheBytes(budget))
		var last [32]byte
		for i := range 2000 {
			last = s.credentialKey('b', fmt.Sprint("user-", i), "password")
			s.remember(last, verification{principal: p, gen: s.gen.Load()})
		}
		if cost := s.verified.Cost(); cost > budget/2 {
			t.Fatalf("verifications take %d bytes, over their %d", cost, budget/2)
		}
		if _, fresh := s.cached(last); !fresh {
			t.Fatal("the latest verification was forgotten")
		}
		return s.verified.Len()
	}
	admin := keptVerifications(Principal{User: "admin", Role: Admin})
	node := keptVerifications(Principal{User: "node-7", Role: Node, NodeNames: []string{"7", strings.Repeat("n", 1000)},
		NodeEnvironment: []string{"1"}, NodeLevels: map[string]string{"rack": "r1"}})
	if admin >= 2000 || node == 0 || 3*node > admin {
		t.Errorf("%d administrator and %d node verifications kept: want a bound in bytes", admin, node)
	}

	keptBuckets := func(nameBytes int) int {
		s := NewService(nil, WithCacheBytes(budget))
		ctx := WithClientAddress(context.Background(), "192.0.2.1")
		var last string
		for i := range 2000 {
			last = fmt.Sprintf("%0*d", nameBytes, i)
			s.throttle.failed(ctx, last)
		}
		users := s.throttle.users.level
		if cost := users.Cost(); cost > budget/4 {
			t.Fatalf("user buckets take %d bytes, over their %d", cost, budget/4)
		}
		if _, ok := users.Get(last); !ok {
			t.Fatal("the latest failed user was forgotten")
		}
		return users.Len()
	}
	short, long := keptBuckets(8), keptBuckets(500)
	if short >= 2000 || long == 0 || 3*long > short {
		t.Errorf("%d buckets of 8-byte names and %d of 500-byte names kept: want a bound in bytes", short, long)
	}
}
