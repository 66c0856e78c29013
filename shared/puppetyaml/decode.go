// Package puppetyaml reads and writes YAML the way Puppet's Hiera reads it:
// Puppet's yaml_data backend loads files with Ruby's Psych (YAML 1.1,
// YAML.safe_load with Symbol allowed and aliases on), so yes/no/on/off are
// booleans, 1:30 is 5400, 0755 is 493, 1.5e3 is a string, and a bare date is
// an error. Decode gives the JSON-compatible values Puppet would see, so data
// imported into tuningbox reads back through Hiera exactly as the files did,
// and refuses (with the line) what Puppet refuses or JSON cannot hold.
// Encode writes YAML that Psych reads back to the same values.
package puppetyaml

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Error is a YAML input Puppet would not load, or would load as something a
// JSON document cannot hold, at a line of the input.
type Error struct {
	Line int // 1-based; 0 when unknown
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// maxValues bounds the values one document may expand to through aliases
// ("billion laughs"), far above any real Hiera file.
const maxValues = 1_000_000

// Decode parses one YAML document into JSON-compatible values: map[string]any,
// []any, string, bool, nil and json.Number (integers of any size stay exact).
// An empty input decodes to nil. Merge keys (<<) and aliases are expanded as
// Psych does: a merge overwrites the keys before it, later keys overwrite the
// merge, and the earlier of merged mappings wins; a repeated key keeps its
// last value.
func Decode(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		// Psych would silently read only the first: refuse rather than drop data.
		return nil, &Error{Line: next.Line, Msg: "invalid YAML: more than one document"}
	}
	d := decoder{}
	return d.value(&doc, "")
}

var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(err error) error {
	msg := err.Error()
	if m := yamlErrorLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return &Error{Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

type decoder struct{ values int }

func (d *decoder) value(n *yaml.Node, path string) (any, error) {
	if d.values++; d.values > maxValues {
		return nil, &Error{Line: n.Line, Msg: fmt.Sprintf("YAML expands to more than %d values (alias loop or bomb)", maxValues)}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0], path)
	case yaml.AliasNode:
		return d.value(n.Alias, path)
	case yaml.SequenceNode:
		if err := collectionTag(n, path); err != nil {
			return nil, err
		}
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			v, err := d.value(item, joinPath(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		if err := collectionTag(n, path); err != nil {
			return nil, err
		}
		return d.mapping(n, path)
	case yaml.ScalarNode:
		return scalarValue(n, path)
	}
	return nil, &Error{Line: n.Line, Msg: describePath(path) + ": unsupported YAML node"}
}

// collectionTag refuses the tags on a mapping or list that make Psych load a
// class safe_load does not allow (!!set, !ruby/object:...); Psych ignores others.
func collectionTag(n *yaml.Node, path string) error {
	if n.Style&yaml.TaggedStyle == 0 {
		return nil
	}
	switch tag := n.Tag; {
	case tag == "!!set" || strings.HasPrefix(tag, "!ruby/") && tag != "!ruby/hash" && tag != "!ruby/array":
		return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: tag %s makes Psych load a Ruby class, which Puppet's yaml_data refuses", describePath(path), tag)}
	}
	return nil
}

// mapping converts a mapping the way Psych's revive_hash does, then
// Puppet's symkeys_to_string.
func (d *decoder) mapping(n *yaml.Node, path string) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		keyNode, valNode := n.Content[i], n.Content[i+1]
		if isMergeKey(keyNode) {
			merged, ok, err := d.merge(valNode, path)
			if err != nil {
				return nil, err
			}
			if ok {
				maps.Copy(out, merged)
				continue
			}
			// Psych keeps a << whose value is no mapping (or list of
			// mappings) as an ordinary key.
		}
		key, err := mappingKey(keyNode, path)
		if err != nil {
			return nil, err
		}
		v, err := d.value(valNode, joinPath(path, key))
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// isMergeKey: Psych merges at any key that reads as "<<", quoted or not,
// unless it is tagged !!str.
func isMergeKey(k *yaml.Node) bool {
	if k.Kind == yaml.ScalarNode && k.Style&yaml.TaggedStyle != 0 && k.Tag == "!!str" {
		return false
	}
	k = resolveAlias(k)
	if k.Kind != yaml.ScalarNode {
		return false
	}
	v, err := scalar(k)
	return err == nil && v == "<<"
}

// merge reads the value of a merge key: a mapping (or an alias of one), or
// a list of them where the earlier wins. ok is false when Psych would not merge it.
func (d *decoder) merge(v *yaml.Node, path string) (merged map[string]any, ok bool, err error) {
	var sources []*yaml.Node
	switch v.Kind {
	case yaml.AliasNode, yaml.MappingNode:
		sources = []*yaml.Node{v}
	case yaml.SequenceNode:
		sources = v.Content
	default:
		return nil, false, nil
	}
	merged = map[string]any{}
	for i := len(sources) - 1; i >= 0; i-- {
		src := resolveAlias(sources[i])
		if src.Kind != yaml.MappingNode {
			return nil, false, nil
		}
		m, err := d.mapping(src, path)
		if err != nil {
			return nil, false, err
		}
		maps.Copy(merged, m)
	}
	return merged, true, nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mappingKey is the string key Puppet sees. Psych's symbol keys become
// strings (Puppet's symkeys_to_string). Puppet's lookup refuses boolean,
// null and collection keys; it keeps number keys, but a JSON document has
// string keys only, so those are refused too rather than changed.
func mappingKey(n *yaml.Node, path string) (string, error) {
	resolved := resolveAlias(n)
	if resolved.Kind != yaml.ScalarNode {
		return "", &Error{Line: n.Line, Msg: describePath(path) + ": a mapping or list as a key, which Puppet's lookup refuses"}
	}
	v, err := scalar(resolved)
	if err != nil {
		return "", &Error{Line: n.Line, Msg: fmt.Sprintf("%s: key %q %v", describePath(path), resolved.Value, err)}
	}
	switch k := v.(type) {
	case string:
		return k, nil
	case symbol:
		return string(k), nil
	case *big.Int, float64:
		return "", &Error{Line: n.Line, Msg: fmt.Sprintf("%s: key %s reads as a number in Puppet, and a JSON document's keys are strings; quote it ('%s') to store the string", describePath(path), resolved.Value, resolved.Value)}
	}
	return "", &Error{Line: n.Line, Msg: fmt.Sprintf("%s: key %s reads as %s in Puppet, which Puppet's lookup refuses as a key; quote it ('%s')", describePath(path), resolved.Value, rubyName(v), resolved.Value)}
}

// scalarValue converts a scalar to its JSON-compatible value.
func scalarValue(n *yaml.Node, path string) (any, error) {
	v, err := scalar(n)
	if err != nil {
		return nil, &Error{Line: n.Line, Msg: fmt.Sprintf("%s: %q %v", describePath(path), n.Value, err)}
	}
	switch t := v.(type) {
	case symbol:
		return nil, &Error{Line: n.Line, Msg: fmt.Sprintf("%s: %s reads as the Ruby Symbol :%s, which Puppet's lookup refuses (\"expects Puppet::LookupValue, got Runtime[ruby, 'Symbol']\"); quote it", describePath(path), n.Value, string(t))}
	case *big.Int:
		return json.Number(t.String()), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, &Error{Line: n.Line, Msg: fmt.Sprintf("%s: %s reads as the float %v in Puppet, which a JSON document cannot hold", describePath(path), n.Value, t)}
		}
		return json.Number(psychFloat(t)), nil
	}
	return v, nil
}

// scalar resolves a scalar node as Psych's ToRuby#deserialize does: a quoted
// or block scalar is a string, a plain one goes through tokenize, and an
// explicit tag decides for itself (!!int and other tags Psych does not act
// on still go through tokenize: "!!int yes" is true).
func scalar(n *yaml.Node) (any, error) {
	if n.Style&yaml.TaggedStyle == 0 {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return n.Value, nil
		}
		return tokenize(n.Value)
	}
	switch tag := n.Tag; {
	case tag == "!!str" || tag == "!str" || tag == "!ruby/string":
		return n.Value, nil
	case tag == "!!binary" || tag == "!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.Value), ""))
		if err != nil || !utf8.Valid(b) {
			return nil, &refusal{"is tagged !!binary but is not base64 of UTF-8 text, which a JSON document cannot hold"}
		}
		return string(b), nil
	case tag == "!!float" || tag == "!float":
		v, err := tokenize(n.Value)
		if err != nil {
			return nil, err
		}
		return toFloat(v, n.Value)
	case tag == "!ruby/sym" || tag == "!ruby/symbol" || strings.HasPrefix(tag, "!ruby/sym:") || strings.HasPrefix(tag, "!ruby/symbol:"):
		return symbol(n.Value), nil
	case strings.HasPrefix(tag, "!ruby/"):
		return nil, &refusal{"is tagged " + tag + ", a Ruby class Puppet's yaml_data refuses to load"}
	}
	return tokenize(n.Value)
}

// rubyName names a resolved value's Ruby type for messages.
func rubyName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return fmt.Sprintf("the Boolean %v", v)
	}
	return fmt.Sprintf("%v", v)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describePath(path string) string {
	if path == "" {
		return "document"
	}
	return "key " + path
}
