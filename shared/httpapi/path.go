package httpapi

import (
	"net/url"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// PathSegments splits an escaped URL path (without its leading "/") into
// unescaped segments, so that an escaped "/" stays inside its segment, as the
// routes that take names with "/" read it.
func PathSegments(escaped string) ([]string, error) {
	escaped = strings.TrimPrefix(escaped, "/")
	segs := make([]string, 0, strings.Count(escaped, "/")+1)
	for s := range strings.SplitSeq(escaped, "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, errs.Invalidf("malformed URL path")
		}
		segs = append(segs, u)
	}
	return segs, nil
}
