package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/jsonone"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
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

// toObject turns a wire type of the API client into decoded JSON, the form
// the CLI renders (the wire types encode exactly what the server sent).
func toObject(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("a wire type does not encode: %v", err))
	}
	out, err := decodeJSON(b)
	if err != nil {
		panic(err)
	}
	return out
}

// toObjects is toObject of each item.
func toObjects[T any](items []T) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = toObject(it)
	}
	return out
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

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
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
		out, err = puppetyaml.Encode(v)
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
		return puppetyaml.Decode(data)
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
		return puppetyaml.Decode([]byte(v))
	case "":
		return inferScalar(v), nil
	}
	return nil, usagef("unknown --type %q (want null, int, str, json, yaml or bool)", typ)
}

// inferScalar reads v as a YAML scalar (an int, a float, a bool, null); any
// other text, including what would read as a list or a map, stays a string.
func inferScalar(v string) any {
	parsed, err := puppetyaml.Decode([]byte(v))
	if err != nil || strings.TrimSpace(v) == "" {
		return v
	}
	switch parsed.(type) {
	case map[string]any, []any:
		return v
	}
	return parsed
}
