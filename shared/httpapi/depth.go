package httpapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// LimitBodyDepth reads a JSON request body (already capped by Wrap) and
// refuses nesting deeper than Wrap's Options.MaxDepth, before any decoder
// recurses into it. The router calls it once the route's policy let the
// request in, so neither a stranger nor a caller without the right makes the
// server read a body; outside Wrap, or without a bound, it does nothing.
func LimitBodyDepth(r *http.Request) error {
	limits := limitsOf(r)
	if limits.maxDepth <= 0 || r.Body == nil || r.Body == http.NoBody || requireJSONContentType(r) != nil {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if isMaxBytes(err) {
			return errs.New(errs.TooLarge, "request body is larger than %d bytes", limits.maxBody)
		}
		return errs.Wrap(errs.Invalid, err, "cannot read request body")
	}
	if err := CheckDepth(body, limits.maxDepth); err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// CheckDepth fails when the JSON text nests arrays and objects deeper than max.
// It only counts brackets outside strings; it does not validate the JSON.
func CheckDepth(body []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return errs.Invalidf("request body nests deeper than %d levels", max)
			}
		case (c == '}' || c == ']') && depth > 0:
			depth--
		}
	}
	return nil
}
