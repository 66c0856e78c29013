package authapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// FuzzParseAuthorization: any header either parses into credentials that
// net/http reads the same way and that re-encode to an equivalent header, or
// fails with a 401 error that does not repeat it. Seeds: testdata/fuzz.
func FuzzParseAuthorization(f *testing.F) {
	f.Fuzz(func(t *testing.T, header string) {
		cred, err := ParseAuthorization(header)
		if err != nil {
			if !errs.Is(err, errs.Unauthenticated) {
				t.Fatalf("error of kind %v: %v", errs.KindOf(err), err)
			}
			if rest := strings.TrimSpace(header[min(len(header), 7):]); len(rest) >= 8 && strings.Contains(errs.Message(err), rest) {
				t.Fatalf("error %q repeats the header", errs.Message(err))
			}
			return
		}
		switch cred.Scheme {
		case SchemeBasic:
			r := &http.Request{Header: http.Header{"Authorization": {header}}}
			user, password, ok := r.BasicAuth()
			if !ok || user != cred.User || password != cred.Password {
				t.Fatalf("net/http reads %q as (%q, %q, %v), we as %+v", header, user, password, ok, cred)
			}
			again, err := ParseAuthorization("Basic " + base64.StdEncoding.EncodeToString([]byte(cred.User+":"+cred.Password)))
			if err != nil || again != cred {
				t.Fatalf("re-encoded %+v parses as %+v, %v", cred, again, err)
			}
		case SchemeBearer:
			if cred.Token == "" || strings.ContainsAny(cred.Token, " \t\r\n") || cred.User != "" {
				t.Fatalf("bearer credentials %+v", cred)
			}
		default:
			t.Fatalf("scheme %q", cred.Scheme)
		}
	})
}

// FuzzCheckDepth: on valid JSON, CheckDepth accepts exactly the documents
// whose nesting (measured by a real JSON decoder) is within the limit, and it
// never fails with anything but a 400 error. Seeds: testdata/fuzz.
func FuzzCheckDepth(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, limit uint8) {
		maxDepth := int(limit%16) + 1
		err := CheckDepth(body, maxDepth)
		if err != nil && !errs.Is(err, errs.Invalid) {
			t.Fatalf("error of kind %v: %v", errs.KindOf(err), err)
		}
		if !json.Valid(body) {
			return
		}
		depth, derr := jsonDepth(body)
		if derr != nil {
			t.Fatalf("valid JSON %q: %v", body, derr)
		}
		if (err == nil) != (depth <= maxDepth) {
			t.Fatalf("CheckDepth(%q, %d) = %v, but the depth is %d", body, maxDepth, err, depth)
		}
	})
}

// jsonDepth measures the deepest nesting of a valid JSON text with encoding/json's tokenizer
// (numbers as json.Number: 1E700 is valid JSON but no float64).
func jsonDepth(body []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest, nil
		}
		if err != nil {
			return 0, err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
