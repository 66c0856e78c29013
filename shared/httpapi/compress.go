package httpapi

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/cache"
)

// minCompressBytes: smaller answers gain too little from gzip to be worth it.
const minCompressBytes = 1024

// etagKeyBytes is what the key of a compressed answer takes: a quoted SHA-256
// in hex and its string header.
const etagKeyBytes = 66 + 16

// Compressed holds gzip encodings of answers by their strong ETag, within a
// byte bound: a version is compressed once, however often it is read.
type Compressed struct {
	lru *cache.LRU[string, []byte]
}

// NewCompressed returns a cache of compressed answers of at most maxBytes.
func NewCompressed(maxBytes int64) *Compressed {
	return &Compressed{lru: cache.New[string](maxBytes, func(b []byte) int64 { return int64(cap(b)) + cache.EntryOverhead + etagKeyBytes })}
}

// Stats returns the lookups of compressed answers that found one and that did not.
func (c *Compressed) Stats() (hits, misses uint64) { return c.lru.Stats() }

// Body is body, whose strong ETag is etag, as a Handler's answer served by
// ServeJSON.
func (c *Compressed) Body(etag string, body []byte) Writer {
	return compressedBody{c: c, etag: etag, body: body}
}

type compressedBody struct {
	c    *Compressed
	etag string
	body []byte
}

func (b compressedBody) WriteAnswer(w http.ResponseWriter, r *http.Request, _ int) {
	b.c.ServeJSON(w, r, b.etag, b.body)
}

// ServeJSON answers 200 with body, whose strong ETag is etag: gzip-encoded when
// the client accepts gzip and the body is large enough, else as it is; always
// with Content-Length.
func (c *Compressed) ServeJSON(w http.ResponseWriter, r *http.Request, etag string, body []byte) {
	h := w.Header()
	if len(body) < minCompressBytes {
		RawJSON(w, http.StatusOK, body)
		return
	}
	varyOnEncoding(h)
	if !AcceptsGzip(r.Header) {
		RawJSON(w, http.StatusOK, body)
		return
	}
	gz, ok := c.lru.Get(etag)
	if !ok {
		gz = Gzip(body)
		c.lru.Add(etag, gz)
	}
	h["Content-Encoding"] = gzipEncoding
	RawJSON(w, http.StatusOK, gz)
}

// Gzip compresses b at the default level. The result has no spare capacity
// worth keeping: JSON often shrinks 10 to 100 times, and what a cache keeps is
// the whole array, not its length.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	if gz := buf.Bytes(); cap(gz)-len(gz) > len(gz)/8 {
		return bytes.Clone(gz)
	}
	return buf.Bytes()
}

// AcceptsGzip reports whether Accept-Encoding admits gzip (not with q=0).
func AcceptsGzip(h http.Header) bool {
	for _, v := range h["Accept-Encoding"] {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.TrimSpace(coding)
			if !strings.EqualFold(coding, "gzip") && !strings.EqualFold(coding, "x-gzip") && coding != "*" {
				continue
			}
			if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
				if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}
