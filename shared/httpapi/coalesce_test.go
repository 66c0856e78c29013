package httpapi

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the writes of its connections.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// coalescingServer serves h behind Wrap on a CoalescingListener over
// connections that count their writes.
func coalescingServer(t *testing.T, h http.Handler) (url string, writes *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	writes = new(atomic.Int64)
	srv := &http.Server{Handler: Wrap(h, Options{}), ConnContext: ConnContext}
	go func() { _ = srv.Serve(CoalescingListener(countingListener{ln, writes})) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), writes
}

// TestCoalescedAnswer: an answer written whole leaves in one write, over a
// connection that stays usable; one too large to copy still arrives intact.
func TestCoalescedAnswer(t *testing.T) {
	small := bytes.Repeat([]byte(`"0123456789abcdef",`), 1600) // ~30 KB, the gzip answer's size
	large := bytes.Repeat([]byte(`"0123456789abcdef",`), 20000)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /small", func(w http.ResponseWriter, r *http.Request) { RawJSON(w, http.StatusOK, small) })
	mux.HandleFunc("GET /large", func(w http.ResponseWriter, r *http.Request) { RawJSON(w, http.StatusOK, large) })
	url, writes := coalescingServer(t, mux)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	get := func(path string, want []byte) {
		t.Helper()
		resp, err := client.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("GET %s: %d bytes (want %d), %v", path, len(got), len(want), err)
		}
	}
	get("/small", small) // opens the connection
	for range 3 {
		writes.Store(0)
		get("/small", small)
		if n := writes.Load(); n != 1 {
			t.Fatalf("a %d-byte answer took %d writes, want 1", len(small), n)
		}
	}
	get("/large", large)
	get("/small", small) // nothing stayed held after the large answer
}

// TestStreamedAnswerIsNotHeld: an answer whose length is not known up front
// (nor a body written in pieces) is never held: what it flushes arrives while
// the handler still runs.
func TestStreamedAnswerIsNotHeld(t *testing.T) {
	proceed := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("a", 8<<10)))
		_ = http.NewResponseController(w).Flush()
		<-proceed
		_, _ = w.Write([]byte("end"))
	})
	mux.HandleFunc("GET /pieces", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "8195")
		_, _ = w.Write([]byte(strings.Repeat("b", 8<<10)))
		_ = http.NewResponseController(w).Flush()
		<-proceed
		_, _ = w.Write([]byte("end"))
	})
	url, _ := coalescingServer(t, mux)
	for _, path := range []string{"/stream", "/pieces"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		first := make(chan error, 1)
		go func() {
			_, err := io.ReadFull(bufio.NewReader(resp.Body), make([]byte, 8<<10))
			first <- err
		}()
		select {
		case err := <-first:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("GET %s: the flushed part did not arrive while the handler ran", path)
		}
		proceed <- struct{}{}
		resp.Body.Close()
	}
}

// TestCoalescedAnswerOverTCP: over a TCP connection the held write and the
// body go out together with writev(2): answers of every size arrive intact,
// one after another on the same connection.
func TestCoalescedAnswerOverTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{}
	mux := http.NewServeMux()
	for _, n := range []int{100, 5000, 30400, 200000} {
		path := "/" + strconv.Itoa(n)
		bodies[path] = bytes.Repeat([]byte("x"), n)
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) { RawJSON(w, http.StatusOK, bodies[path]) })
	}
	srv := &http.Server{Handler: Wrap(mux, Options{}), ConnContext: ConnContext}
	go func() { _ = srv.Serve(CoalescingListener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for range 3 {
		for path, want := range bodies {
			resp, err := client.Get("http://" + ln.Addr().String() + path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("GET %s: %d bytes (want %d), %v", path, len(got), len(want), err)
			}
		}
	}
}
