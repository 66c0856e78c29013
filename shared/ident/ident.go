// Package ident recognises the two forms of entity identity every API of
// tuningbox accepts in paths: a UUID and a legacy integer id.
package ident

import "github.com/google/uuid"

// IsUUID reports whether s is a UUID in its canonical 36-character form
// (hex digits in 8-4-4-4-12 groups, either case). Braced, URN and undashed
// forms are not identities in this API.
func IsUUID(s string) bool {
	return len(s) == 36 && uuid.Validate(s) == nil
}

// IsIntegerID reports whether s is written like a legacy integer id: 1 to 19
// decimal digits (whether it fits an int64 is the parser's question).
func IsIntegerID(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
