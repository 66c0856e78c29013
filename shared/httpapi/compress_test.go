package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                        false,
		"gzip":                    true,
		"gzip, deflate, br":       true,
		"deflate;q=1, GZIP;q=0.5": true,
		"gzip;q=0":                false,
		"gzip; q=0, *;q=0":        false,
		"identity":                false,
		"*":                       true,
		"x-gzip":                  true,
	} {
		h := http.Header{}
		if header != "" {
			h.Set("Accept-Encoding", header)
		}
		if got := httpapi.AcceptsGzip(h); got != want {
			t.Errorf("Accept-Encoding %q: %v, want %v", header, got, want)
		}
	}
}

// A document goes out gzip-encoded to a client that accepts it, compressed
// once per ETag, and as it is to others; every answer has its Content-Length.
func TestCompressedServeJSON(t *testing.T) {
	c := httpapi.NewCompressed(1 << 20)
	body := []byte(`{"k":"` + strings.Repeat("value ", 2000) + `"}`)
	serve := func(acceptEncoding string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/", nil)
		if acceptEncoding != "" {
			r.Header.Set("Accept-Encoding", acceptEncoding)
		}
		w := httptest.NewRecorder()
		c.ServeJSON(w, r, `"etag-1"`, body)
		if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(w.Body.Len()) {
			t.Errorf("Content-Length %q for %d bytes", cl, w.Body.Len())
		}
		if w.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("Vary %q", w.Header().Get("Vary"))
		}
		return w
	}
	plain := serve("")
	if plain.Header().Get("Content-Encoding") != "" || !bytes.Equal(plain.Body.Bytes(), body) {
		t.Fatalf("plain answer: %q %d bytes", plain.Header().Get("Content-Encoding"), plain.Body.Len())
	}
	first, second := serve("gzip, deflate"), serve("gzip")
	if first.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", first.Header().Get("Content-Encoding"))
	}
	if !bytes.Equal(first.Body.Bytes(), second.Body.Bytes()) {
		t.Error("the second answer differs from the first")
	}
	zr, err := gzip.NewReader(first.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("gunzip: %v, %d bytes", err, len(got))
	}
	t.Logf("%d bytes -> %d gzip", len(body), second.Body.Len())

	small := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	c.ServeJSON(small, r, `"etag-2"`, []byte(`{"a":1}`))
	if small.Header().Get("Content-Encoding") != "" || small.Body.String() != `{"a":1}` {
		t.Errorf("a small answer is compressed: %q", small.Header().Get("Content-Encoding"))
	}
}

// A panic in a handler is a logged JSON 500, not a dropped connection, and
// headers the handler had set for its answer do not leak into it.
func TestWrapRecoversPanics(t *testing.T) {
	var logs bytes.Buffer
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		panic("boom")
	}), httpapi.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/config/components", nil))
	if w.Code != 500 || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Content-Encoding") != "" ||
		w.Body.String() != `{"error":{"code":500,"message":"internal error"}}` {
		t.Errorf("got %d %v %s", w.Code, w.Header(), w.Body)
	}
	if !strings.Contains(logs.String(), `"msg":"panic serving a request"`) || !strings.Contains(logs.String(), `"panic":"boom"`) ||
		!strings.Contains(logs.String(), `"status":500`) {
		t.Errorf("log: %s", logs.String())
	}
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("http.ErrAbortHandler was not passed on: %v", p)
		}
	}()
	httpapi.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }), httpapi.Options{}).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
}

// TestGzipKeepsNoSpareCapacity: a cache of compressed answers counts what it
// holds, so a 7 MB answer that shrinks 100 times must not keep the buffer
// sized for a quarter of it.
func TestGzipKeepsNoSpareCapacity(t *testing.T) {
	body := bytes.Repeat([]byte(`{"name":"host","enabled":true},`), 7<<20/31)
	gz := httpapi.Gzip(body)
	if len(gz) > len(body)/50 {
		t.Fatalf("compressed %d bytes to %d", len(body), len(gz))
	}
	if cap(gz) > len(gz)+len(gz)/8 {
		t.Errorf("compressed answer of %d bytes holds %d bytes of capacity", len(gz), cap(gz))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, body) {
		t.Fatalf("decompressed %d bytes (%v), want the %d given", len(plain), err, len(body))
	}
}
