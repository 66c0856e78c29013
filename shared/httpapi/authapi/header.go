package authapi

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Authentication schemes of the Authorization header.
const (
	SchemeBasic  = "Basic"
	SchemeBearer = "Bearer"
)

// maxAuthorizationLen bounds the header: a 72-byte password, a 64-character
// user and their base64 fit many times over.
const maxAuthorizationLen = 1024

// Credentials are what one Authorization header carries: a user and password
// (Basic) or a token (Bearer).
type Credentials struct {
	Scheme   string
	User     string
	Password string
	Token    string
}

// errMalformed never repeats the header: it may hold a secret.
var errMalformed = errs.New(errs.Unauthenticated, "malformed Authorization header")

// ParseAuthorization parses an Authorization header value (RFC 7617 Basic,
// RFC 6750 Bearer). The scheme is case-insensitive; anything else is a 401 error
// whose message never contains the header.
func ParseAuthorization(header string) (Credentials, error) {
	if len(header) > maxAuthorizationLen {
		return Credentials{}, errMalformed
	}
	// Exactly one space after the scheme, as net/http's own Basic auth reader wants.
	scheme, rest, ok := strings.Cut(header, " ")
	if !ok || rest == "" || strings.ContainsAny(rest, " \t") {
		return Credentials{}, errMalformed
	}
	switch {
	case strings.EqualFold(scheme, SchemeBasic):
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || !utf8.Valid(raw) {
			return Credentials{}, errMalformed
		}
		user, password, ok := strings.Cut(string(raw), ":")
		if !ok || user == "" || hasControl(user) {
			return Credentials{}, errMalformed
		}
		return Credentials{Scheme: SchemeBasic, User: user, Password: password}, nil
	case strings.EqualFold(scheme, SchemeBearer):
		if !isToken68(rest) {
			return Credentials{}, errMalformed
		}
		return Credentials{Scheme: SchemeBearer, Token: rest}, nil
	default:
		return Credentials{}, errs.New(errs.Unauthenticated, "unsupported authentication scheme; use Basic or Bearer")
	}
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// isToken68 reports whether s is an RFC 7235 token68: letters, digits and
// "-._~+/", then optional "=" padding.
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
		if !ok {
			return false
		}
	}
	return true
}
