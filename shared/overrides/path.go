package overrides

import (
	"fmt"
	"strconv"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// path names an element of a document in errors: configuration.package.mc,
// configuration.file["/etc/motd"], configuration_options.types_filter[2].
// Keys that are not plain words are quoted so titles with dots or slashes stay unambiguous.
type path string

func (p path) key(k string) path {
	if isPlainKey(k) {
		if p == "" {
			return path(k)
		}
		return p + "." + path(k)
	}
	return p + path("["+strconv.Quote(k)+"]")
}

func (p path) index(i int) path { return p + path(fmt.Sprintf("[%d]", i)) }

// invalidf returns an errs.Invalid error whose message starts with the path.
func (p path) invalidf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if p == "" {
		return errs.Invalidf("%s", msg)
	}
	return errs.Invalidf("%s: %s", p, msg)
}

func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == ':':
		default:
			return false
		}
	}
	return true
}
