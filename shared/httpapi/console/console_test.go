package console_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi/console"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

func serve(t *testing.T, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	router := routes.NewRouter(1 << 20)
	console.Register(router)
	r := httptest.NewRequest("GET", path, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	router.ServeHTTP(w, r)
	return w
}

// Every answer forbids inline scripts and framing; the page is served for
// the console's root and any view's path, with a base back to the root.
func TestPageAndHeaders(t *testing.T) {
	for _, tt := range []struct {
		path   string
		status int
		base   string // the page's base; "" for a file or a 404
	}{
		{"/ui/", http.StatusOK, `<base href="./">`},
		{"/ui/index.html", http.StatusOK, `<base href="./">`},
		{"/ui/clusters", http.StatusOK, `<base href="./">`},
		{"/ui/clusters/1/x", http.StatusOK, `<base href="../../">`},
		{"/ui/app.js", http.StatusOK, ""},
		{"/ui/missing.js", http.StatusNotFound, ""},
		{"/ui/vendor/gone.x", http.StatusNotFound, ""},
	} {
		w := serve(t, tt.path, nil)
		h := w.Header()
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self' 'wasm-unsafe-eval';") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: Content-Security-Policy %q", tt.path, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", tt.path, h)
		}
		if w.Code != tt.status {
			t.Errorf("%s: %d, want %d", tt.path, w.Code, tt.status)
		}
		if tt.base != "" && (h.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(w.Body.String(), tt.base)) {
			t.Errorf("%s: %s %.200s, want the page with %s", tt.path, h.Get("Content-Type"), w.Body, tt.base)
		}
	}
}

// The files are gzip-encoded for clients that take it, and 304 for a client that has them.
func TestGzipAndETag(t *testing.T) {
	plain := serve(t, "/ui/vendor/htm-preact.js", nil)
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || plain.Header().Get("Content-Encoding") != "" {
		t.Fatalf("plain: %d %v", plain.Code, plain.Header())
	}
	zipped := serve(t, "/ui/vendor/htm-preact.js", http.Header{"Accept-Encoding": {"gzip, br"}})
	if zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Body.Len() >= plain.Body.Len() {
		t.Fatalf("gzip: %v, %d bytes of %d", zipped.Header(), zipped.Body.Len(), plain.Body.Len())
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := io.ReadAll(zr); err != nil || !bytes.Equal(body, plain.Body.Bytes()) {
		t.Fatalf("gunzipped body differs: %v", err)
	}
	etag := plain.Header().Get("ETag")
	if again := serve(t, "/ui/vendor/htm-preact.js", http.Header{"If-None-Match": {etag}}); etag == "" || again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Fatalf("If-None-Match %s: %d", etag, again.Code)
	}
}
