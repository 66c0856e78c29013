package authapi

import (
	"encoding/base64"
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
