package configdb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/jsonone"
)

// Documents are kept in a canonical form: compact JSON, object keys sorted,
// numbers exactly as the client wrote them (json.Number, never float64), no
// HTML escaping. Equal content therefore has equal bytes and an equal SHA-256.

// decodeJSON decodes one JSON value with numbers kept as json.Number.
func decodeJSON(b []byte) (any, error) {
	v, err := jsonone.Any(b)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	return v, nil
}

// encodeJSON encodes v in the canonical form.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("encode decoded JSON: %v", err)) // v came from decodeJSON
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// objectFields splits a JSON object into its fields, each value a slice of v
// rather than a copy (a document's fields share its bytes); isObject is false
// (and fields nil) for any other JSON value.
func objectFields(v []byte) (fields map[string]json.RawMessage, isObject bool, err error) {
	invalid := func(err error) error {
		return errs.Wrap(errs.Invalid, err, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	tok, err := dec.Token()
	if err != nil {
		return nil, false, invalid(err)
	}
	if tok != json.Delim('{') {
		return nil, false, nil
	}
	fields = make(map[string]json.RawMessage)
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false, invalid(err)
		}
		start := dec.InputOffset() // before the colon
		if err := dec.Decode(&skippedValue{}); err != nil {
			return nil, false, invalid(err)
		}
		end := dec.InputOffset()
		fields[key.(string)] = bytes.TrimLeft(v[start:end:end], " \t\r\n:")
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, invalid(err)
	}
	return fields, true, nil
}

// skippedValue is decoded into to pass over a JSON value without keeping it.
type skippedValue struct{}

func (*skippedValue) UnmarshalJSON([]byte) error { return nil }

// canonicalJSON returns the canonical form of any JSON value.
func canonicalJSON(b []byte) ([]byte, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	return encodeJSON(v), nil
}

// canonicalDocument checks that body is a JSON object and returns its canonical form.
func canonicalDocument(body []byte) ([]byte, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errs.Invalidf("a document must be a JSON object, not %s", jsonType(v))
	}
	return encodeJSON(v), nil
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return "null"
	}
}

// errNoKeysPath is tuning-box's answer to a key path that does not exist.
var errNoKeysPath = errs.Conflictf("Keys path doesn't exist")

// child returns the element seg names inside node: a key of an object, or an
// index of a list when node is a list.
func child(node any, seg string) (any, bool) {
	switch n := node.(type) {
	case map[string]any:
		v, ok := n[seg]
		return v, ok
	case []any:
		if i, ok := listIndex(n, seg); ok {
			return n[i], true
		}
	}
	return nil, false
}

func listIndex(list []any, seg string) (int, bool) {
	i, err := strconv.Atoi(seg)
	if err != nil || i < 0 || i >= len(list) || strconv.Itoa(i) != seg {
		return 0, false
	}
	return i, true
}

// splitDotPath splits a key query ("a.b.0") into its segments.
func splitDotPath(key string) []string { return strings.Split(key, ".") }

// lookupPath walks path from node; false when any segment does not exist.
func lookupPath(node any, path []string) (any, bool) {
	for _, seg := range path {
		var ok bool
		if node, ok = child(node, seg); !ok {
			return nil, false
		}
	}
	return node, true
}

// KeyOp is one entry of a keys/set or keys/delete batch: a list of path segments
// (strings, or integers for list indexes); for set, the last element is the value.
type KeyOp []json.RawMessage

// KeyEdit is what a keys batch does at each of its paths.
type KeyEdit int

const (
	// DeleteKey removes the element at the path, which must exist.
	DeleteKey KeyEdit = iota
	// SetKey sets the path's last key; every key before it must exist
	// (tuning-box's keys/set, microversions 1.0 to 1.3).
	SetKey
	// SetKeyCreatingPath sets the path's last key and creates the objects
	// missing on the way (microversion 1.4; spec 000's clients add facts).
	SetKeyCreatingPath
)

// applyKeyOps applies a whole batch to a copy of doc and returns the new canonical
// bytes. Any bad operation fails the batch: nothing is applied.
func applyKeyOps(doc []byte, ops []KeyOp, edit KeyEdit) ([]byte, error) {
	set := edit != DeleteKey
	if len(ops) == 0 {
		return nil, errs.Invalidf("the key path list is empty")
	}
	root, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	for i, op := range ops {
		raw := []json.RawMessage(op)
		var value any
		if set {
			if len(raw) < 2 {
				return nil, errs.Conflictf("Keys path #%d needs at least one key and a value", i+1)
			}
			if value, err = decodeJSON(raw[len(raw)-1]); err != nil {
				return nil, err
			}
			raw = raw[:len(raw)-1]
		}
		if len(raw) == 0 {
			return nil, errs.Conflictf("Keys path #%d is empty", i+1)
		}
		path, err := pathSegments(raw)
		if err != nil {
			return nil, err
		}
		if set {
			root, err = setPath(root, path, 0, value, edit == SetKeyCreatingPath)
		} else {
			root, err = deletePath(root, path, 0)
		}
		if err != nil {
			return nil, err
		}
	}
	if nestsDeeper(root, MaxDocumentDepth) {
		return nil, errs.Invalidf("the document would nest more than %d levels deep", MaxDocumentDepth)
	}
	return encodeJSON(root), nil
}

// MaxDocumentDepth is the deepest nesting of objects and lists a stored
// document may reach through key operations, the same bound the API puts on
// request bodies, so that every document read can be written back as it is.
const MaxDocumentDepth = 64

// nestsDeeper reports whether v nests more than limit levels of objects and lists.
func nestsDeeper(v any, limit int) bool {
	var children iter.Seq[any]
	switch v := v.(type) {
	case map[string]any:
		children = maps.Values(v)
	case []any:
		children = slices.Values(v)
	default:
		return false
	}
	if limit == 0 {
		return true
	}
	for c := range children {
		if nestsDeeper(c, limit-1) {
			return true
		}
	}
	return false
}

// pathSegments turns raw JSON path elements into strings: a string as is, an integer in decimal.
func pathSegments(raw []json.RawMessage) ([]string, error) {
	path := make([]string, len(raw))
	for i, r := range raw {
		v, err := decodeJSON(r)
		if err != nil {
			return nil, err
		}
		switch s := v.(type) {
		case string:
			path[i] = s
		case json.Number:
			n, err := strconv.Atoi(s.String())
			if err != nil || n < 0 {
				return nil, errs.Invalidf("key path element %s is not a string or a list index", s)
			}
			path[i] = strconv.Itoa(n)
		default:
			return nil, errs.Invalidf("key path elements must be strings or list indexes, not %s", jsonType(v))
		}
	}
	return path, nil
}

// setPath sets the element at path[at:] below node to value and returns the
// (possibly new) node. With createPath, missing keys of objects on the way are
// created as objects, else they are a 409; a list element is only replaced,
// never appended, and nothing descends into a scalar.
func setPath(node any, path []string, at int, value any, createPath bool) (any, error) {
	seg := path[at]
	if at < len(path)-1 {
		next, ok := child(node, seg)
		if !ok {
			if _, isObject := node.(map[string]any); !isObject || !createPath {
				return nil, keyPathError(path, at, node)
			}
			next = map[string]any{}
		}
		updated, err := setPath(next, path, at+1, value, createPath)
		if err != nil {
			return nil, err
		}
		value = updated
	}
	switch n := node.(type) {
	case map[string]any:
		n[seg] = value
		return n, nil
	case []any:
		if i, ok := listIndex(n, seg); ok {
			n[i] = value
			return n, nil
		}
	}
	return nil, keyPathError(path, at, node)
}

// deletePath removes the existing element at path[at:] below node and returns the (possibly new) node.
func deletePath(node any, path []string, at int) (any, error) {
	seg := path[at]
	if at < len(path)-1 {
		next, ok := child(node, seg)
		if !ok {
			return nil, keyPathError(path, at, node)
		}
		updated, err := deletePath(next, path, at+1)
		if err != nil {
			return nil, err
		}
		return setPath(node, path[:at+1], at, updated, false)
	}
	switch n := node.(type) {
	case map[string]any:
		if _, ok := n[seg]; ok {
			delete(n, seg)
			return n, nil
		}
	case []any:
		if i, ok := listIndex(n, seg); ok {
			return append(n[:i], n[i+1:]...), nil
		}
	}
	return nil, keyPathError(path, at, node)
}

// keyPathError is the 409 of a key path that cannot be followed at segment
// at of node: it names the missing key, or what is in the way.
func keyPathError(path []string, at int, node any) error {
	full := strings.Join(path, ".")
	parent := strings.Join(path[:at], ".")
	if parent == "" {
		parent = "the document"
	}
	switch n := node.(type) {
	case map[string]any:
		return errs.Conflictf("Keys path %s doesn't exist: there is no key %s", full, strings.Join(path[:at+1], "."))
	case []any:
		return errs.Conflictf("Keys path %s doesn't exist: %s is a list of %d, with no element %s", full, parent, len(n), path[at])
	}
	return errs.Conflictf("Keys path %s doesn't exist: %s is %s, not an object or a list", full, parent, jsonType(node))
}
