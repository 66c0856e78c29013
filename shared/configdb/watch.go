package configdb

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tuningbox/tuningbox/shared/store"
)

// Watch: a read with a wait holds until its answer's ETag is no longer the one
// the client has, or the wait ends.
//
// Waiters do not poll the store each on their own. Every read waiting on one
// resource of one environment in this process shares one watch topic: a write
// through this process wakes its waiters at once, and one look at the
// resource's document heads (one Query of the heads partition and one BatchGet
// of the environment and definition items) every watchRecheck catches the writes
// of other processes. A waiter reads its document again only when the topic
// saw a change, so idle waiters cost the store 2 reads per watchRecheck per
// topic, whatever their number.

// MaxWait caps a wait: below the 30 s an API Gateway integration may take
// (the config function's timeout is 28 s), and never past the request's deadline.
const MaxWait = 25 * time.Second

// watchRecheck is how often a topic looks for changes made by other processes.
const watchRecheck = 5 * time.Second

type watchKey struct{ env, resdef int64 }

// watchTopic is the waiters of one resource in one environment.
type watchTopic struct {
	mu      sync.Mutex
	changed chan struct{}
	waiters int
	stop    chan struct{}
}

// signal returns the channel closed at the next change.
func (t *watchTopic) signal() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

func (t *watchTopic) notify() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// watchHub is the long-poll side of the ConfigDB: the topics that have
// waiters in this process, each the waiters on one resource of one
// environment. A write through this process wakes a topic at once (changed);
// for writes of other processes, each topic looks at its resource every
// recheckEvery (one fingerprint of the store, however many waiters) and wakes
// its waiters when that changed. The zero hub is not ready: newWatchHub.
type watchHub struct {
	// fingerprint identifies the state of a topic's resource in the store.
	fingerprint  func(ctx context.Context, k watchKey) ([32]byte, error)
	recheckEvery time.Duration

	mu     sync.Mutex
	topics map[watchKey]*watchTopic
	// waiting counts the waiters of every topic (metrics).
	waiting atomic.Int64
}

func newWatchHub(fingerprint func(context.Context, watchKey) ([32]byte, error), recheckEvery time.Duration) *watchHub {
	return &watchHub{fingerprint: fingerprint, recheckEvery: recheckEvery, topics: make(map[watchKey]*watchTopic)}
}

// join adds a waiter to k's topic. The first waiter takes the topic's first
// fingerprint before it reads, so no change after its read goes unseen.
func (h *watchHub) join(ctx context.Context, k watchKey) *watchTopic {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.topics[k]
	if !ok {
		t = &watchTopic{stop: make(chan struct{})}
		h.topics[k] = t
		first, _ := h.fingerprint(ctx, k)
		go h.recheck(k, t, first)
	}
	t.waiters++
	h.waiting.Add(1)
	return t
}

// leave removes a waiter; the last one stops the topic's recheck.
func (h *watchHub) leave(k watchKey, t *watchTopic) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting.Add(-1)
	if t.waiters--; t.waiters == 0 {
		delete(h.topics, k)
		close(t.stop)
	}
}

// changed wakes the waiters on a resource of an environment (a write went through).
func (h *watchHub) changed(k watchKey) {
	h.mu.Lock()
	t := h.topics[k]
	h.mu.Unlock()
	if t != nil {
		t.notify()
	}
}

// recheck looks at the topic's items every recheckEvery until it stops, and
// wakes the waiters when they changed.
func (h *watchHub) recheck(k watchKey, t *watchTopic, last [32]byte) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-t.stop
		cancel()
	}()
	tick := time.NewTicker(h.recheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		now, err := h.look(ctx, k)
		if err != nil {
			continue // a failed look is retried at the next tick
		}
		if now != last {
			last = now
			t.notify()
		}
	}
}

// look is one recheck's fingerprint. This goroutine serves no request whose
// handler would recover a panic: one here (a fault of the store's client) is
// logged with its stack and counts as a failed look, so the process and the
// waiters go on and the next tick looks again.
func (h *watchHub) look(ctx context.Context, k watchKey) (sum [32]byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.Default().Error("watch recheck panicked", "environment", k.env, "resource", k.resdef, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("watch recheck panicked: %v", r)
		}
	}()
	return h.fingerprint(ctx, k)
}

// fingerprint identifies the state of every document head of a resource in an
// environment, and of the environment and definition items.
func (s *Service) fingerprint(ctx context.Context, k watchKey) ([32]byte, error) {
	heads, err := s.idx.Query(ctx, store.Query{Partition: headPartition(k.env, k.resdef)})
	if err != nil {
		return [32]byte{}, err
	}
	items, err := s.idx.BatchGet(ctx, []store.Key{envKey(k.env), resdefKey(k.resdef)})
	if err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	for _, it := range heads {
		h.Write([]byte(it.Sort + "\x00" + strconv.FormatInt(it.Revision, 10) + "\x00"))
	}
	for _, key := range []store.Key{envKey(k.env), resdefKey(k.resdef)} {
		h.Write([]byte(strconv.FormatInt(items[key].Revision, 10) + "\x00"))
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// Wait answers q like Read, but while the answer's ETag matches ifNoneMatch it
// holds the request up to wait (at most MaxWait, and a second short of the
// request's deadline) for a change. It returns the last answer: its ETag still
// matching ifNoneMatch means nothing changed. A waiter that read this resource
// before joins its topic before it reads, so a wait costs one read until something changes.
func (s *Service) Wait(ctx context.Context, q ReadQuery, ifNoneMatch string, wait time.Duration) (*Document, error) {
	var (
		k       watchKey
		t       *watchTopic
		changed <-chan struct{}
	)
	defer func() {
		if t != nil {
			s.watch.leave(k, t)
		}
	}()
	subscribe := func() bool {
		g, ok := s.cache.guesses.Get(q.Env + "\x00" + q.Resource)
		if ok {
			k = watchKey{env: g.env, resdef: g.resdef}
			t = s.watch.join(ctx, k)
			changed = t.signal()
		}
		return ok
	}
	subscribe()
	doc, err := s.Read(ctx, q)
	if err != nil || !ETagMatches(ifNoneMatch, doc.ETag) {
		return doc, err
	}
	wait = min(wait, MaxWait)
	if deadline, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(deadline)-time.Second)
	}
	if wait <= 0 {
		return doc, nil
	}
	if t == nil {
		// The first read of this resource resolved it: subscribe and read again.
		if !subscribe() {
			return doc, nil
		}
		if doc, err = s.Read(ctx, q); err != nil || !ETagMatches(ifNoneMatch, doc.ETag) {
			return doc, err
		}
	}
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout.C:
			return doc, nil
		case <-changed:
		}
		changed = t.signal()
		if doc, err = s.Read(ctx, q); err != nil || !ETagMatches(ifNoneMatch, doc.ETag) {
			return doc, err
		}
	}
}
