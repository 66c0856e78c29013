package httpapi

import "net/http"

// Header values every answer of a kind carries, shared by those answers and
// set under their canonical keys: setting them allocates nothing and
// canonicalizes no name, which was a fair part of a cached read's work.
// Nothing changes a header's value in place (net/http copies the values
// before it writes them; Header.Add and append copy a full slice), so they
// are never written through.
var (
	jsonContentType = []string{"application/json"}
	gzipEncoding    = []string{"gzip"}
	// versionVary is Wrap's Vary; versionAndEncodingVary adds Accept-Encoding
	// for the answers that depend on it (Compressed).
	versionVary            = []string{versionHeader, legacyVersionHeader}
	versionAndEncodingVary = []string{versionHeader, legacyVersionHeader, "Accept-Encoding"}
)

// varyOnEncoding adds Accept-Encoding to the answer's Vary.
func varyOnEncoding(h http.Header) {
	if vary := h["Vary"]; len(vary) == len(versionVary) && vary[0] == versionVary[0] && vary[1] == versionVary[1] {
		h["Vary"] = versionAndEncodingVary
		return
	}
	h.Add("Vary", "Accept-Encoding")
}
