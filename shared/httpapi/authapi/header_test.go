package authapi

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

func basic(userPass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(userPass))
}

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		header string
		want   *Credentials
	}{
		{basic("alice:s3cret"), &Credentials{Scheme: SchemeBasic, User: "alice", Password: "s3cret"}},
		{basic("alice:"), &Credentials{Scheme: SchemeBasic, User: "alice", Password: ""}},
		{basic("alice:pa:ss word"), &Credentials{Scheme: SchemeBasic, User: "alice", Password: "pa:ss word"}},
		{"basic " + base64.StdEncoding.EncodeToString([]byte("a:b")), &Credentials{Scheme: SchemeBasic, User: "a", Password: "b"}},
		{"BASIC " + base64.StdEncoding.EncodeToString([]byte("a:b")), &Credentials{Scheme: SchemeBasic, User: "a", Password: "b"}},
		{"Basic  " + base64.StdEncoding.EncodeToString([]byte("a:b")), nil},
		{"Bearer tbx_abcDEF-123_x", &Credentials{Scheme: SchemeBearer, Token: "tbx_abcDEF-123_x"}},
		{"bearer abc==", &Credentials{Scheme: SchemeBearer, Token: "abc=="}},
		{"", nil},
		{"Basic", nil},
		{"Basic ", nil},
		{"Basic !!!", nil},
		{basic("no-colon"), nil},
		{basic(":password-only"), nil},
		{basic("ali\nce:pw"), nil},
		{basic("alice:pw") + " extra", nil},
		{"Basic " + base64.RawStdEncoding.EncodeToString([]byte("alice:pw")), nil},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte{'a', ':', 0xff}), nil},
		{"Bearer", nil},
		{"Bearer a b", nil},
		{"Bearer a\tb", nil},
		{"Bearer =", nil},
		{"Bearer tok;en", nil},
		{"Digest username=x", nil},
		{"Bearer " + strings.Repeat("a", maxAuthorizationLen), nil},
	}
	for _, tt := range tests {
		got, err := ParseAuthorization(tt.header)
		if tt.want == nil {
			if !errs.Is(err, errs.Unauthenticated) {
				t.Errorf("ParseAuthorization(%q) = %+v, %v; want a 401 error", tt.header, got, err)
			}
			if err != nil && strings.Contains(errs.Message(err), strings.TrimPrefix(tt.header, "Basic ")) && len(tt.header) > 12 {
				t.Errorf("error %q repeats the header", errs.Message(err))
			}
			continue
		}
		if err != nil || got != *tt.want {
			t.Errorf("ParseAuthorization(%q) = %+v, %v; want %+v", tt.header, got, err, *tt.want)
		}
	}
}
