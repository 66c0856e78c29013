package puppetyaml

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Encode renders a JSON-compatible value (as Decode returns) as YAML with
// sorted keys that Psych, and so Puppet, reads back to the same value: a
// string Psych would read as something else ("yes", "1:30", ":x", "1,000")
// is quoted, and a float is written in a form Psych reads as a float.
func Encode(v any) ([]byte, error) {
	n, err := node(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func node(v any) (*yaml.Node, error) {
	switch t := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			child, err := node(t[k])
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, stringNode(k), child)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, item := range t {
			child, err := node(item)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, child)
		}
		return n, nil
	case string:
		return stringNode(t), nil
	case json.Number:
		if !strings.ContainsAny(t.String(), ".eE") {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: t.String()}, nil
		}
		f, err := strconv.ParseFloat(t.String(), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s has no YAML float form Puppet reads: %w", t, err)
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: psychFloat(f)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("no YAML form for %T", v)
}

// stringNode quotes s when Psych would not read it back as the same string.
// "<<" is tagged instead: Psych merges at a quoted "<<" key too.
func stringNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if v, err := tokenize(s); err != nil || v != any(s) {
		n.Style = yaml.DoubleQuotedStyle
	} else if s == "<<" {
		n.Style = yaml.TaggedStyle
	}
	return n
}

// psychFloat writes f as Psych's FLOAT reads it: a dot in the mantissa and
// a signed exponent (1.0e+20; Psych reads 1e+20 as a string).
func psychFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	mantissa, exp, hasExp := strings.Cut(s, "e")
	if !strings.Contains(mantissa, ".") {
		mantissa += ".0"
	}
	if hasExp {
		return mantissa + "e" + exp
	}
	return mantissa
}
