package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tuningbox/tuningbox/shared/jsonone"
)

// Documents travel through the CLI as JSON-compatible Go values: map[string]any,
// []any, string, bool, nil and json.Number. json.Number keeps integers of any
// size exact (a 20-digit id in astute.yaml must not become a float).

// decodeJSON parses exactly one JSON value, numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	v, err := jsonone.Any(data)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return v, nil
}

// encodeJSON renders v as indented JSON without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// canonicalJSON renders v compactly with sorted object keys: equal documents
// give equal bytes.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// maxYAMLNodes bounds the values one YAML document may expand to through
// aliases ("billion laughs"), far above any real Hiera file.
const maxYAMLNodes = 10_000_000

// decodeYAML parses one YAML document into JSON-compatible values. Mapping
// keys become strings (1 -> "1", true -> "true", ~ -> "null"); merge keys (<<)
// and aliases are expanded; integers stay exact; timestamps keep their text.
// An empty input decodes to nil.
func decodeYAML(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid YAML: more than one document")
	}
	conv := yamlConverter{}
	return conv.value(&doc, "")
}

type yamlConverter struct{ nodes int }

func (c *yamlConverter) value(n *yaml.Node, path string) (any, error) {
	if c.nodes++; c.nodes > maxYAMLNodes {
		return nil, fmt.Errorf("YAML expands to more than %d values (alias loop or bomb)", maxYAMLNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], path)
	case yaml.AliasNode:
		return c.value(n.Alias, path)
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			v, err := c.value(item, joinPath(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		return c.mapping(n, path)
	case yaml.ScalarNode:
		return scalarValue(n, path)
	}
	return nil, fmt.Errorf("%s: unsupported YAML node (line %d)", describePath(path), n.Line)
}

// mapping converts a YAML mapping. Explicit keys beat merged ones (<<), and
// in a merge list the earlier mapping wins, as the YAML merge key type says.
func (c *yamlConverter) mapping(n *yaml.Node, path string) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		keyNode, valNode := resolveAlias(n.Content[i]), n.Content[i+1]
		if keyNode.Kind == yaml.ScalarNode && keyNode.ShortTag() == "!!merge" {
			merges = append(merges, valNode)
			continue
		}
		key, err := mappingKey(keyNode, path)
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%s: key %q appears twice (line %d)", describePath(path), key, keyNode.Line)
		}
		v, err := c.value(valNode, joinPath(path, key))
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	for _, m := range merges {
		sources := []*yaml.Node{m}
		if resolveAlias(m).Kind == yaml.SequenceNode {
			sources = resolveAlias(m).Content
		}
		for _, src := range sources {
			if resolveAlias(src).Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s: a merge key (<<) takes a mapping or a list of mappings (line %d)", describePath(path), src.Line)
			}
			merged, err := c.mapping(resolveAlias(src), path)
			if err != nil {
				return nil, err
			}
			for k, v := range merged {
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		}
	}
	return out, nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mappingKey turns a scalar key into the string JSON needs.
func mappingKey(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%s: only scalar mapping keys can become JSON keys (line %d)", describePath(path), n.Line)
	}
	v, err := scalarValue(n, path)
	if err != nil {
		return "", err
	}
	switch k := v.(type) {
	case string:
		return k, nil
	case json.Number:
		return k.String(), nil
	case bool:
		return strconv.FormatBool(k), nil
	case nil:
		return "null", nil
	}
	return "", fmt.Errorf("%s: unsupported key %q (line %d)", describePath(path), n.Value, n.Line)
}

func scalarValue(n *yaml.Node, path string) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!binary", "!!timestamp":
		// Timestamps keep their text: JSON has no date type.
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("%s: %w", describePath(path), err)
		}
		return b, nil
	case "!!int":
		// big.Int with base 0 reads every form YAML resolves as !!int
		// (0x1F, 0o17, 017, 1_000) and keeps integers beyond 64 bits exact.
		if i, ok := new(big.Int).SetString(strings.TrimPrefix(n.Value, "+"), 0); ok {
			return json.Number(i.String()), nil
		}
		return nil, fmt.Errorf("%s: %q is not an integer (line %d)", describePath(path), n.Value, n.Line)
	case "!!float":
		// yaml.v3 resolves a plain integer beyond 64 bits as a float: keep its digits.
		if n.Style&yaml.TaggedStyle == 0 && decimalInteger.MatchString(n.Value) {
			if i, ok := new(big.Int).SetString(strings.TrimPrefix(n.Value, "+"), 10); ok {
				return json.Number(i.String()), nil
			}
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("%s: %w", describePath(path), err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%s: %s has no JSON representation (line %d)", describePath(path), n.Value, n.Line)
		}
		return floatNumber(f), nil
	}
	return nil, fmt.Errorf("%s: unsupported YAML tag %s (line %d)", describePath(path), n.Tag, n.Line)
}

var decimalInteger = regexp.MustCompile(`^[-+]?[0-9]+$`)

// floatNumber writes f so that it still reads as a float (1.0, not 1).
func floatNumber(f float64) json.Number {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return json.Number(s)
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

// encodeYAML renders a JSON-compatible value as YAML with sorted keys; numbers
// keep their JSON text and strings that would read as something else are quoted.
func encodeYAML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(yamlNode(v)); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func yamlNode(v any) *yaml.Node {
	switch t := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, yamlNode(t[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, item := range t {
			n.Content = append(n.Content, yamlNode(item))
		}
		return n
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprint(v)}
}

// Output and input formats.
const (
	formatJSON  = "json"
	formatYAML  = "yaml"
	formatPlain = "plain"
	formatTable = "table"
)

// render writes v in format: json, yaml, or plain (a string as it is, other
// values as JSON).
func render(w io.Writer, v any, format string) error {
	var (
		out []byte
		err error
	)
	switch format {
	case formatJSON:
		out, err = encodeJSON(v)
	case formatYAML:
		out, err = encodeYAML(v)
	case formatPlain:
		if s, ok := v.(string); ok {
			out = []byte(s + "\n")
		} else {
			out, err = encodeJSON(v)
		}
	default:
		return usagef("unknown --format %q (want json, yaml or plain)", format)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// parseDocument reads a document given in format (json or yaml).
func parseDocument(data []byte, format string) (any, error) {
	switch format {
	case formatJSON:
		return decodeJSON(data)
	case formatYAML:
		return decodeYAML(data)
	}
	return nil, usagef("unknown input --format %q (want json or yaml)", format)
}

// Value types of --type.
const (
	typeNull = "null"
	typeInt  = "int"
	typeStr  = "str"
	typeJSON = "json"
	typeYAML = "yaml"
	typeBool = "bool"
)

// typedValue converts a --value (or, for json and yaml without --value, stdin)
// to the value --type names. Without --type the value reads as a YAML scalar:
// 2 is an int, true a bool, ~ null, anything else a string.
func typedValue(typ string, value *string, stdin io.Reader) (any, error) {
	if value == nil {
		switch typ {
		case typeNull:
			return nil, nil
		case typeJSON, typeYAML:
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimSpace(data)) == 0 {
				return nil, usagef("--type %s without --value reads the value from stdin, which is empty", typ)
			}
			return parseDocument(data, typ)
		case "":
			return nil, usagef("--key needs --value, or --type null, or --type json|yaml with the value on stdin")
		}
		return nil, usagef("--type %s needs --value", typ)
	}
	v := *value
	switch typ {
	case typeNull:
		return nil, usagef("--type null takes no --value")
	case typeStr:
		return v, nil
	case typeInt:
		i, ok := new(big.Int).SetString(strings.TrimSpace(v), 10)
		if !ok {
			return nil, usagef("--value %q is not an integer", v)
		}
		return json.Number(i.String()), nil
	case typeBool:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, usagef("--value %q is not a boolean (true or false)", v)
		}
		return b, nil
	case typeJSON:
		return decodeJSON([]byte(v))
	case typeYAML:
		return decodeYAML([]byte(v))
	case "":
		return inferScalar(v), nil
	}
	return nil, usagef("unknown --type %q (want null, int, str, json, yaml or bool)", typ)
}

// inferScalar reads v as a YAML scalar (an int, a float, a bool, null); any
// other text, including what would read as a list or a map, stays a string.
func inferScalar(v string) any {
	parsed, err := decodeYAML([]byte(v))
	if err != nil || strings.TrimSpace(v) == "" {
		return v
	}
	switch parsed.(type) {
	case map[string]any, []any:
		return v
	}
	return parsed
}
