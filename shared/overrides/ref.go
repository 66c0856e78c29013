package overrides

import (
	"slices"
	"strings"
)

// Ref identifies one resource: its type (lower case, as Puppet compares type
// names case-insensitively) and its title (case-sensitive).
type Ref struct {
	Type  string
	Title string
}

// String renders r the way Puppet writes a resource reference: Nova_config[DEFAULT/debug], Foo::Bar[x].
func (r Ref) String() string {
	segs := strings.Split(r.Type, "::")
	for i, s := range segs {
		if s != "" {
			segs[i] = strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return strings.Join(segs, "::") + "[" + r.Title + "]"
}

// metaparameters are the relationship parameters whose values are resource
// references; an override appends to them instead of replacing them.
var metaparameters = []string{"before", "notify", "require", "subscribe"}

func isMetaparameter(name string) bool { return slices.Contains(metaparameters, name) }

// validTypeName reports whether s is a Puppet resource type name:
// "::"-separated segments, each a letter followed by letters, digits or underscores.
func validTypeName(s string) bool {
	for seg := range strings.SplitSeq(s, "::") {
		if seg == "" || !isLetter(seg[0]) {
			return false
		}
		for i := 1; i < len(seg); i++ {
			if c := seg[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' {
				return false
			}
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseRef parses a reference such as Service[httpd] or File[/etc/motd].
func parseRef(s string) (Ref, bool) {
	open := strings.IndexByte(s, '[')
	if open <= 0 || !strings.HasSuffix(s, "]") || open+2 > len(s)-1 {
		return Ref{}, false
	}
	typ, title := s[:open], s[open+1:len(s)-1]
	if !validTypeName(typ) {
		return Ref{}, false
	}
	return Ref{Type: strings.ToLower(typ), Title: title}, true
}

// refList reads a metaparameter value, a single reference or a list of them,
// as a list; p names the value in errors.
func refList(p path, v any) ([]Ref, error) {
	switch v := v.(type) {
	case string:
		r, ok := parseRef(v)
		if !ok {
			return nil, p.invalidf("%q is not a resource reference like Service[httpd]", v)
		}
		return []Ref{r}, nil
	case []any:
		refs := make([]Ref, 0, len(v))
		for i, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, p.index(i).invalidf("must be a resource reference string like Service[httpd]")
			}
			r, ok := parseRef(s)
			if !ok {
				return nil, p.index(i).invalidf("%q is not a resource reference like Service[httpd]", s)
			}
			refs = append(refs, r)
		}
		return refs, nil
	default:
		return nil, p.invalidf("must be a resource reference like Service[httpd] or a list of them")
	}
}
