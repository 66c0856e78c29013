package yaql

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// appendYAML appends v, JSON-shaped data (maps with string keys, lists,
// strings, numbers, booleans, null), as a YAML block document in PyYAML's
// layout (Nailgun's toYaml): keys sorted, two-space indents, lists not
// indented under their key. A string YAML 1.1 (PyYAML, Puppet's Psych) could
// read as anything else is double-quoted. Written by hand because yaml.v3
// took 27 ms for one Fuel node's data (BenchmarkToYaml): a 1,000-node plan
// renders upload_node_configuration's $node.toYaml() once per node.
//
// It stops at the first entry or item that begins past limit bytes of b:
// indents make the text of deep data many times its JSON, so the text is
// bounded as it is written (a longer b is a document cut short).
func appendYAML(b []byte, v any, limit int) []byte {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			return appendYAMLMap(b, x, 0, false, limit)
		}
	case []any:
		if len(x) > 0 {
			return appendYAMLList(b, x, 0, false, limit)
		}
	}
	return append(appendYAMLScalar(b, v), '\n')
}

// appendYAMLMap writes m's entries at indent; continued says the first one
// goes on a line already begun (a list item's "- ").
func appendYAMLMap(b []byte, m map[string]any, indent int, continued bool, limit int) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if len(b) > limit {
			return b
		}
		if i > 0 || !continued {
			b = appendIndent(b, indent)
		}
		b = append(appendYAMLString(b, k), ':')
		b = appendYAMLValue(b, m[k], indent, true, limit)
	}
	return b
}

// appendYAMLList writes l's items at indent, as appendYAMLMap does.
func appendYAMLList(b []byte, l []any, indent int, continued bool, limit int) []byte {
	for i, item := range l {
		if len(b) > limit {
			return b
		}
		if i > 0 || !continued {
			b = appendIndent(b, indent)
		}
		b = appendYAMLValue(append(b, '-'), item, indent, false, limit)
	}
	return b
}

// appendYAMLValue writes v after a key's ":" (underKey) or a list item's
// "-": a scalar on the same line, a map below (indented), a list below
// under a key (not indented, as PyYAML writes it) or on the same line after
// "- ".
func appendYAMLValue(b []byte, v any, indent int, underKey bool, limit int) []byte {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			if underKey {
				return appendYAMLMap(append(b, '\n'), x, indent+2, false, limit)
			}
			return appendYAMLMap(append(b, ' '), x, indent+2, true, limit)
		}
	case []any:
		if len(x) > 0 {
			if underKey {
				return appendYAMLList(append(b, '\n'), x, indent, false, limit)
			}
			return appendYAMLList(append(b, ' '), x, indent+2, true, limit)
		}
	}
	return append(appendYAMLScalar(append(b, ' '), v), '\n')
}

func appendIndent(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// appendYAMLScalar writes a scalar, or an empty map or list in flow style.
func appendYAMLScalar(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendYAMLString(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		return appendYAMLFloat(b, x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return strconv.AppendInt(b, i, 10)
		}
		if f, err := x.Float64(); err == nil {
			return appendYAMLFloat(b, f)
		}
	case map[string]any:
		return append(b, "{}"...)
	case []any:
		return append(b, "[]"...)
	}
	return appendYAMLString(b, fmt.Sprint(v))
}

// appendYAMLFloat writes a number decoded from JSON: a whole one as an
// integer (3757668, as Python held it), another as a YAML float.
func appendYAMLFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, ".nan"...)
	case math.IsInf(f, 1):
		return append(b, ".inf"...)
	case math.IsInf(f, -1):
		return append(b, "-.inf"...)
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		return strconv.AppendInt(b, int64(f), 10)
	}
	// YAML 1.1 reads a float only with a "." in its mantissa (1.0e+300, not 1e+300).
	s := strconv.FormatFloat(f, 'g', -1, 64)
	mantissa, exponent, _ := strings.Cut(s, "e")
	if !strings.Contains(mantissa, ".") {
		mantissa += ".0"
	}
	if exponent != "" {
		mantissa += "e" + exponent
	}
	return append(b, mantissa...)
}

// appendYAMLString writes s plain when YAML 1.1 reads it back as that very
// string, double-quoted otherwise (Go's escapes are YAML's).
func appendYAMLString(b []byte, s string) []byte {
	if plainYAML(s) {
		return append(b, s...)
	}
	return strconv.AppendQuote(b, s)
}

// plainYAML is a conservative test of a plain scalar: it starts with a
// letter or "/", holds only letters, digits and "_./-" with single inner
// spaces, and is none of YAML 1.1's booleans or nulls.
func plainYAML(s string) bool {
	if s == "" || !(isASCIILetter(s[0]) || s[0] == '/') || s[len(s)-1] == ' ' {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case isASCIILetter(c), c >= '0' && c <= '9', c == '_', c == '.', c == '/', c == '-':
		case c == ' ' && s[i-1] != ' ':
		default:
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
