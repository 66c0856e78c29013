// Package console serves the operators' console, a read-only web interface
// over the API, at /ui/ (the route "console" of the route table): its page,
// script and style sheet and the libraries it is built on, embedded in the
// binary (web/, web/vendor/ from the npm registry: see vendor.sh). The page
// calls the API with a session token (POST /api/v1/sessions) it keeps in the
// tab's sessionStorage and sends in the Authorization header: no cookie, so no
// request forgery can borrow it. Every answer carries a Content-Security-Policy
// without inline scripts or styles and refuses framing.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

//go:embed web
var web embed.FS

// Policy is the Content-Security-Policy of every answer: scripts, styles and
// API calls from this origin only, WebAssembly compiled from them (the
// Graphviz layout engine), nothing inline, no framing.
const Policy = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'"

// securityHeaders are set on every answer of the console.
var securityHeaders = map[string]string{
	"Content-Security-Policy":      Policy,
	"X-Content-Type-Options":       "nosniff",
	"X-Frame-Options":              "DENY",
	"Referrer-Policy":              "no-referrer",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// asset is one embedded file as it is served.
type asset struct {
	body        []byte
	contentType string
	etag        string
	// gzipped is body gzip-encoded, made on first request (the layout engine's
	// encoding takes a while; a Lambda instance that never serves it never pays).
	gzipOnce sync.Once
	gzipped  []byte
}

func (a *asset) gzip() []byte {
	a.gzipOnce.Do(func() { a.gzipped = httpapi.Gzip(a.body) })
	return a.gzipped
}

// Console serves the embedded files.
type Console struct {
	assets map[string]*asset // by path below web/
}

// New reads the embedded files.
func New() *Console {
	c := &Console{assets: map[string]*asset{}}
	err := fs.WalkDir(web, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := web.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		contentType := mime.TypeByExtension(path.Ext(p))
		if contentType == "" {
			contentType = "text/plain; charset=utf-8"
		}
		c.assets[strings.TrimPrefix(p, "web/")] = &asset{body: body, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	if err != nil {
		panic("console: embedded files: " + err.Error()) // go:embed put them there
	}
	return c
}

// Register mounts the console on router, built at its first request:
// reading and hashing its files was a quarter of the config function's
// start-up CPU (.ci/bootbench), and its cold starts serve Hiera's reads.
func Register(router *routes.Router) {
	c := sync.OnceValue(New)
	router.Mount(routes.Handlers{"console": func(w http.ResponseWriter, r *http.Request) { c().ServeHTTP(w, r) }})
}

// ServeHTTP answers GET /ui/{file...}: the file, or for a path without an
// extension, which names a view of the page and no file, the page itself
// (its links are relative: its base is set to the console's root). A missing
// file is a JSON 404 as any other.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	name := r.PathValue("file")
	a, ok := c.assets[name]
	switch {
	case ok && name != "index.html":
	case name == "" || name == "index.html" || path.Ext(name) == "":
		c.serveIndex(w, r, strings.Count(name, "/"))
		return
	default:
		httpapi.Error(w, r, errs.NotFoundf("the console has no file %s", name))
		return
	}
	c.serve(w, r, a, a.body)
}

// serveIndex answers the page for a path depth segments below the
// console's root, with a base that leads back to it.
func (c *Console) serveIndex(w http.ResponseWriter, r *http.Request, depth int) {
	a := c.assets["index.html"]
	if depth == 0 {
		c.serve(w, r, a, a.body)
		return
	}
	body := bytes.Replace(a.body, []byte(`<base href="./">`), []byte(`<base href="`+strings.Repeat("../", depth)+`">`), 1)
	c.serve(w, r, &asset{contentType: a.contentType, etag: ""}, body)
}

// serve writes body: gzip-encoded when the client takes it, 304 when the
// client has it (ETag); the browser checks again on each use (no-cache), so
// a new binary's files are never hidden behind old ones.
func (c *Console) serve(w http.ResponseWriter, r *http.Request, a *asset, body []byte) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	if a.etag != "" {
		h.Set("ETag", a.etag)
		if r.Header.Get("If-None-Match") == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if httpapi.AcceptsGzip(r.Header) {
			body = a.gzip()
			h.Set("Content-Encoding", "gzip")
		}
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
