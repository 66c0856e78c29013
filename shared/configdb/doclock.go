package configdb

import (
	"context"
	"strings"
	"sync"

	"github.com/tuningbox/tuningbox/shared/retry"
	"github.com/tuningbox/tuningbox/shared/store"
)

// docWriters is how the writers of one document take turns: inside this
// process they queue (docLocks); against writers in other processes they
// meet at the conditional write of the document's head and retry, their
// backoff carried from one write of the document to the next
// (retry.Contention). The zero value is ready.
type docWriters struct {
	queue      docLocks
	contention retry.Contention
}

// write runs attempt, in the document's turn, until it does not conflict
// (store.RetryConflictsOn); key names the document (docLockKey).
func (d *docWriters) write(ctx context.Context, key string, attempt func() error) error {
	unlock, err := d.queue.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	return store.RetryConflictsOn(ctx, &d.contention, key, "write document", attempt)
}

// docLocks queue the writers of one document inside this process, so that
// they take turns instead of racing for its head: with optimistic concurrency
// alone, N concurrent writers of one document cost about N/2 failed
// conditional writes per accepted one. Writers in other processes (other
// Lambda instances, another server) still meet at the conditional write and
// back off (store.RetryConflicts); the lock only removes the contention a
// process can see. A document is keyed by the reference as the client gave
// it: two spellings of one document merely do not queue together.
type docLocks struct {
	mu    sync.Mutex
	locks map[string]*docLock
}

type docLock struct {
	turn  chan struct{} // holds a token while the document is free
	users int
}

func docLockKey(ref DocRef, kind Kind) string {
	var b strings.Builder
	b.WriteString(ref.Env)
	for _, lv := range ref.Levels {
		b.WriteString("\x00" + lv.Name + "\x00" + lv.Value)
	}
	b.WriteString("\x00\x00" + ref.Resource + "\x00" + string(kind))
	return b.String()
}

// lock waits for the document's turn or for ctx to end; unlock must follow a nil error.
func (l *docLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*docLock)
	}
	dl, ok := l.locks[key]
	if !ok {
		dl = &docLock{turn: make(chan struct{}, 1)}
		dl.turn <- struct{}{}
		l.locks[key] = dl
	}
	dl.users++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if dl.users--; dl.users == 0 {
			delete(l.locks, key)
		}
		l.mu.Unlock()
	}
	select {
	case <-dl.turn:
		return func() { dl.turn <- struct{}{}; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
