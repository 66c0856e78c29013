package httpapi

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// maxHeldWrite is the largest write a holding connection keeps back: net/http
// flushes its 4 KB connection buffer (status line, headers and the body's
// first bytes) before it writes the rest of a large body directly.
const maxHeldWrite = 16 << 10

// maxCopiedWrite: up to this size, a held write and the next one are copied
// into one buffer for one write(2); above it, or over a TCP connection, they
// go out with one writev(2) (net.Buffers), where copying would cost more than
// the second buffer does: copying a 30 KB gzip answer was a fair part of
// serving it.
const maxCopiedWrite = 64 << 10

// CoalescingListener wraps l so that an answer written whole leaves in one
// system call. net/http writes an answer whose body is larger than its buffer
// in two: the status line, headers and first bytes of the body, then the rest;
// each is a TCP segment the client wakes up for. On a connection of this
// listener (HTTP/1.x), Wrap's writer holds the first of those writes back
// while a handler writes a body whose Content-Length it set, and sends it with
// the second. Give ConnContext to the http.Server too.
func CoalescingListener(l net.Listener) net.Listener { return coalescingListener{l} }

type coalescingListener struct{ net.Listener }

func (l coalescingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &coalescingConn{Conn: c}, nil
}

type connKey struct{}

// ConnContext is the http.Server.ConnContext that lets Wrap find the
// connection of a request (under TLS, the connection beneath it).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	if cc, ok := c.(*coalescingConn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}

// coalescingOf returns the connection r came on when it can hold writes:
// one of CoalescingListener's, serving HTTP/1.x (HTTP/2 writes frames of
// every stream from one goroutine of its own).
func coalescingOf(r *http.Request) *coalescingConn {
	if r.ProtoMajor != 1 {
		return nil
	}
	c, _ := r.Context().Value(connKey{}).(*coalescingConn)
	return c
}

// coalescingConn is a connection that can hold one write back until the
// next (hold, release).
type coalescingConn struct {
	net.Conn
	mu      sync.Mutex
	holding bool
	held    *[]byte // the write kept back, in a buffer of heldBuffers (nil: none)
	// vector and buffers are the writev(2) of a held write and the next
	// one: kept with the connection, as a net.Buffers made per answer
	// escapes to the heap.
	vector  [2][]byte
	buffers net.Buffers
}

// heldBuffers keeps the buffers of held writes: only connections in the
// middle of an answer have one.
var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxCopiedWrite); return &b }}

// hold keeps the next small write back; release sends what is still held.
func (c *coalescingConn) hold() {
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

func (c *coalescingConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	if c.held != nil {
		_ = c.sendHeld(nil) // an error shows on the connection's next use
	}
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.held != nil:
		if err := c.sendHeld(p); err != nil {
			return 0, err // how much of p left is unknown: the connection is done for
		}
		return len(p), nil
	case c.holding && len(p) <= maxHeldWrite:
		c.held = heldBuffers.Get().(*[]byte)
		*c.held = append((*c.held)[:0], p...)
		return len(p), nil
	}
	if asJSON, ok := jsonServerError(p); ok {
		_, err := c.Conn.Write(asJSON)
		return len(p), err
	}
	return c.Conn.Write(p)
}

// sendHeld sends the held write followed by p in one system call.
func (c *coalescingConn) sendHeld(p []byte) (err error) {
	held := c.held
	c.held = nil
	defer heldBuffers.Put(held)
	if _, vectored := c.Conn.(*net.TCPConn); !vectored && len(*held)+len(p) <= maxCopiedWrite {
		*held = append(*held, p...)
		_, err = c.Conn.Write(*held)
	} else {
		c.vector = [2][]byte{*held, p}
		c.buffers = c.vector[:]
		_, err = c.buffers.WriteTo(c.Conn)
		c.vector, c.buffers = [2][]byte{}, nil // keeps no answer alive
	}
	return err
}

// CloseWrite keeps net/http's half-close of TCP connections (after an error answer).
func (c *coalescingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// wholeBody reports whether b is the whole body the header announces.
func wholeBody(h http.Header, b []byte) bool {
	n, ok := h["Content-Length"]
	if !ok || len(n) != 1 {
		return false
	}
	length, err := strconv.Atoi(n[0]) // not Itoa(len(b)): that allocates on every answer
	return err == nil && length == len(b)
}
