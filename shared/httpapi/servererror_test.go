package httpapi

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestServerOwnErrorsAreJSON: requests net/http refuses itself, before any
// handler, get its status with a JSON error body on the local server's
// listener (net/http writes plain text); the handler's own answers pass as
// they are.
func TestServerOwnErrorsAreJSON(t *testing.T) {
	url, _ := coalescingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		JSON(w, http.StatusNotFound, ErrorBody{Error: ErrorDetail{Code: http.StatusNotFound, Message: "no route for " + r.URL.Path}})
	}))
	addr := strings.TrimPrefix(url, "http://")
	for _, c := range []struct {
		name, request string
		code          int
		message       string
	}{
		{"bad percent-escape", "GET /api/v1/config/environments/1/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad percent-escape"},
		{"lone percent", "GET /api/v1/config/% HTTP/1.1\r\nHost: x\r\n\r\n", 400, "Bad Request"},
		{"garbage request line", "HELLO\r\n\r\n", 400, "request line"},
		{"bad method", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "Bad Request"},
		{"no Host", "GET / HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"header without a colon", "GET / HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400, "Bad Request"},
		{"bad Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n", 400, "Bad Request"},
		{"HTTP version", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505, "unsupported protocol version"},
		{"unsupported Transfer-Encoding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Unsupported transfer encoding"},
		{"handler's answer", "GET /%41 HTTP/1.1\r\nHost: x\r\n\r\n", 404, "no route for /A"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(conn, c.request); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body ErrorBody
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("%d %s: body is not JSON: %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
			}
			if resp.StatusCode != c.code || resp.Header.Get("Content-Type") != "application/json" || body.Error.Code != c.code || !strings.Contains(body.Error.Message, c.message) {
				t.Fatalf("answer %d %q %+v, want %d with a JSON error containing %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, c.code, c.message)
			}
		})
	}
}

// TestServerOwnErrorsUnderTLS pins what CoalescingListener cannot do: under
// TLS, net/http's own answers are encrypted before they reach the connection
// it wraps, so they stay net/http's plain text (the status is still right).
func TestServerOwnErrorsUnderTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Listener = CoalescingListener(srv.Listener)
	srv.StartTLS()
	defer srv.Close()
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "GET /api/v1/config/environments/1/%zz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("over TLS: %d %q; the README says net/http's plain-text 400", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
