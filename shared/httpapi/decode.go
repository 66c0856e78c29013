package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/jsonone"
)

// ReadBody reads a JSON request body: it answers 415 for a non-JSON Content-Type
// (an absent one is taken as JSON), 413 past the body cap set by the middleware,
// and 400 for an empty body or invalid JSON. The returned bytes are one valid JSON value.
func ReadBody(r *http.Request) ([]byte, error) {
	if err := requireJSONContentType(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if isMaxBytes(err) {
			return nil, errs.New(errs.TooLarge, "request body is larger than %d bytes", maxBodyOf(r))
		}
		return nil, errs.Wrap(errs.Invalid, err, "cannot read request body")
	}
	// JSON's own whitespace only: bytes.TrimSpace would also drop \v, \f and
	// U+0085, which are not JSON and must fail like any other stray byte.
	body = bytes.Trim(body, " \t\r\n")
	if len(body) == 0 {
		return nil, errs.Invalidf("request body is empty; a JSON document is required")
	}
	if !json.Valid(body) {
		return nil, errs.Invalidf("request body is not valid JSON: %s", syntaxErrorOf(body))
	}
	// JSON text is UTF-8 (RFC 8259); decoding would silently turn bad bytes into U+FFFD.
	if !utf8.Valid(body) {
		return nil, errs.Invalidf("request body is not valid UTF-8 (at byte %d)", invalidUTF8Offset(body))
	}
	// So would an escaped surrogate that is not half of a pair: no UTF-8 text holds it.
	if at := loneSurrogateOffset(body); at >= 0 {
		return nil, errs.Invalidf("request body is not valid UTF-8 (at byte %d: %s is half of a UTF-16 surrogate pair)", at, body[at:at+6])
	}
	return body, nil
}

// Decode reads a JSON body into v, rejecting unknown fields, wrong types and trailing data.
func Decode(r *http.Request, v any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeStrict(body, v)
}

// DecodeStrict decodes one JSON value from body into v, rejecting unknown fields,
// wrong types and trailing data with 400 errors that name the offending field.
func DecodeStrict(body []byte, v any) error {
	err := jsonone.Decode(body, v, true)
	switch {
	case errors.Is(err, jsonone.ErrTrailingData):
		return errs.Invalidf("request body has data after the JSON document")
	case err != nil:
		return errs.Wrap(errs.Invalid, err, describeDecodeError(err))
	}
	return nil
}

func describeDecodeError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			return fmt.Sprintf("expected %s, got JSON %s", typeErr.Type, typeErr.Value)
		}
		return fmt.Sprintf("field %q: expected %s, got JSON %s", field, typeErr.Type, typeErr.Value)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + rest
	}
	return "invalid request body: " + strings.TrimPrefix(msg, "json: ")
}

func syntaxErrorOf(body []byte) string {
	var v any
	err := json.Unmarshal(body, &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "unexpected data"
}

// invalidUTF8Offset returns the offset of the first byte that is not part of valid UTF-8.
func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// loneSurrogateOffset returns the offset of the first \uXXXX escape naming a
// UTF-16 surrogate that is not half of a high-low pair, or -1. body is valid
// JSON, so every backslash starts an escape inside a string.
func loneSurrogateOffset(body []byte) int {
	if !bytes.Contains(body, []byte(`\u`)) {
		return -1
	}
	pendingHigh := -1 // offset of a high surrogate escape still waiting for its low half
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || body[i+1] != 'u' {
			if pendingHigh >= 0 {
				return pendingHigh
			}
			if body[i] == '\\' {
				i++ // the escaped character
			}
			continue
		}
		code, _ := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		switch r := rune(code); {
		case utf16.IsSurrogate(r) && r < 0xDC00: // a high half
			if pendingHigh >= 0 {
				return pendingHigh
			}
			pendingHigh = i
		case utf16.IsSurrogate(r): // a low half
			if pendingHigh < 0 {
				return i
			}
			pendingHigh = -1
		case pendingHigh >= 0:
			return pendingHigh
		}
		i += 5
	}
	return pendingHigh
}

func requireJSONContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(ct)
	if err != nil || !(mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")) {
		return errs.New(errs.UnsupportedMediaType, "Content-Type %q is not supported; send application/json", ct)
	}
	return nil
}
