package puppetyaml

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The documents and results below are what Ruby's Psych gives (checked with
// Puppet's YAML.safe_load(permitted_classes: [Symbol], aliases: true)).
func TestDecode(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "null"},
		{"comment only", "# nothing\n", "null"},
		{"yaml 1.1 scalars", "a: yes\nb: Off\nc: ~\nd: 1:30\ne: 0755\nf: 1.5e3\ng: 1.5e+3\nh: 0x1F\ni: y\n",
			`{"a":true,"b":false,"c":null,"d":5400,"e":493,"f":"1.5e3","g":1500.0,"h":31,"i":"y"}`},
		{"quoted and block scalars stay strings", "a: 'yes'\nb: \"1:30\"\nc: |-\n  on\nd: >-\n  0755\n", `{"a":"yes","b":"1:30","c":"on","d":"0755"}`},
		{"empty value", "a:\n", `{"a":null}`},
		{"big integer stays exact", "a: 123456789012345678901234567890\n", `{"a":123456789012345678901234567890}`},
		{"float keeps its float form", "a: 1.0\nb: 1.0e+20\n", `{"a":1.0,"b":1.0e+20}`},
		{"symbol key becomes a string", ":foo: 1\n", `{"foo":1}`},
		{"merge after a key overwrites it", "b: &b {a: 1, c: 3}\nx:\n  a: 2\n  <<: *b\n", `{"b":{"a":1,"c":3},"x":{"a":1,"c":3}}`},
		{"key after a merge overwrites it", "b: &b {a: 1, c: 3}\nx:\n  <<: *b\n  a: 2\n", `{"b":{"a":1,"c":3},"x":{"a":2,"c":3}}`},
		{"merge list: the earlier wins", "b1: &b1 {a: 1}\nb2: &b2 {a: 2, d: 4}\nx:\n  <<: [*b1, *b2]\n", `{"b1":{"a":1},"b2":{"a":2,"d":4},"x":{"a":1,"d":4}}`},
		{"quoted << merges too", "b: &b {a: 1}\nx:\n  '<<': *b\n", `{"b":{"a":1},"x":{"a":1}}`},
		{"!!str << is a key", "b: &b {a: 1}\nx:\n  !!str <<: *b\n", `{"b":{"a":1},"x":{"<<":{"a":1}}}`},
		{"<< of a scalar is a key", "s: &s 5\nx:\n  <<: *s\n", `{"s":5,"x":{"<<":5}}`},
		{"<< of an aliased list is a key", "s: &s [1]\nx:\n  <<: *s\n", `{"s":[1],"x":{"<<":[1]}}`},
		{"repeated key: the last wins", "a: 1\na: 2\n", `{"a":2}`},
		{"anchors and aliases", "a: &x [1, {b: on}]\nc: *x\n", `{"a":[1,{"b":true}],"c":[1,{"b":true}]}`},
		{"!!int on a quoted scalar", "a: !!int '12'\n", `{"a":12}`},
		{"!!int on yes is still true", "a: !!int yes\n", `{"a":true}`},
		{"!!float", "a: !!float 1\nb: !!float 1.5e3\nc: !!float 1:30\nd: !!float ' 12 '\ne: !!float 0x1A\n", `{"a":1.0,"b":1500.0,"c":5400.0,"d":12.0,"e":26.0}`},
		{"!!str", "a: !!str 1:30\nb: !str 12\nc: !!str\n", `{"a":"1:30","b":"12","c":""}`},
		{"unknown tags are ignored", "a: !foo yes\nb: !foo {x: 1}\nc: !!null x\n", `{"a":true,"b":{"x":1},"c":"x"}`},
		{"!!binary", "a: !!binary aGVsbG8=\n", `{"a":"hello"}`},
		{"word branch across lines", "a: y\n\n  no\n", `{"a":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := compactJSON(t, v); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		want     string
	}{
		{"bare date", "a: 1\nb: 2001-12-14\n", 2, "Ruby Date"},
		{"timestamp", "a:\n  b: 2001-12-14t21:59:43.10-05:00\n", 2, "Ruby Time"},
		{"date in a list", "a:\n  - x\n  - 2001-02-30\n", 3, "key a.1"},
		{"symbol value", "a: :sym\n", 1, "Symbol"},
		{"boolean key", "on: 1\n", 1, "the Boolean true"},
		{"null key", "~: 1\n", 1, "nil"},
		{"number key", "a:\n  1: x\n", 2, "reads as a number"},
		{"list key", "? [1]\n: 2\n", 1, "a mapping or list as a key"},
		{"infinity", "a: .inf\n", 1, "JSON document cannot hold"},
		{"nan", "a: .nan\n", 1, "JSON document cannot hold"},
		{"bad !!float", "a: !!float abc\n", 1, "Float()"},
		{"integer Ruby rejects", "a: 0x_\n", 1, "Integer()"},
		{"ruby object", "a: !ruby/object:BigDecimal 18:0.1e1\n", 1, "Ruby class"},
		{"set", "a: !!set {x, y}\n", 1, "Ruby class"},
		{"binary that is not text", "a: !!binary /w==\n", 1, "base64 of UTF-8"},
		{"syntax", "a: 1\n  b: 2\n", 2, "invalid YAML: mapping values are not allowed"},
		{"two documents", "a: 1\n---\nb: 2\n", 2, "more than one document"},
		{"alias bomb", bomb(), 0, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want a *puppetyaml.Error", err)
			}
			if !strings.Contains(e.Msg, tt.want) || (tt.line != 0 && e.Line != tt.line) {
				t.Errorf("err = %v, want line %d and %q", err, tt.line, tt.want)
			}
		})
	}
}

func compactJSON(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func bomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestEncodeRoundTrip(t *testing.T) {
	in := `{"yes":"yes","time":"1:30","sym":":x","comma":"1,000","date":"2001-12-14","oct":"0755","e":"1.5e3","null":"~","word":"y",
		"n":5400,"f":1500.0,"big":1.0e+20,"tiny":1e-7,"neg":-0.5,"t":true,"nil":null,"multi":"line1\nline2\n","s":"true","merge":{"<<":{"a":1}},"list":["on",1,{"1":"one"}],"huge":123456789012345678901234567890}`
	v, err := Decode([]byte(in)) // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	out, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if a, b := compactJSON(t, v), compactJSON(t, back); a != b {
		t.Errorf("round trip changed the document:\n%s\ngot  %s\nwant %s", out, b, a)
	}
	for _, quoted := range []string{`"yes"`, `"1:30"`, `":x"`, `"1,000"`, `"2001-12-14"`, `"0755"`, `"~"`, `"1"`} {
		if !strings.Contains(string(out), quoted) {
			t.Errorf("%s is not quoted:\n%s", quoted, out)
		}
	}
}
