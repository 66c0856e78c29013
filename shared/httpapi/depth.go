package httpapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// limitBodyDepth reads a JSON request body (already capped by Wrap), after
// authentication, so no stranger makes the server read a body,
// and refuses nesting deeper than maxDepth, before any decoder recurses into it.
func limitBodyDepth(r *http.Request, maxDepth int) error {
	if r.Body == nil || r.Body == http.NoBody || requireJSONContentType(r) != nil {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if isMaxBytes(err) {
			return errs.New(errs.TooLarge, "request body is larger than %d bytes", maxBodyOf(r))
		}
		return errs.Wrap(errs.Invalid, err, "cannot read request body")
	}
	if err := CheckDepth(body, maxDepth); err != nil {
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
