package configdb

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

func keyOps(t *testing.T, s string) []KeyOp {
	t.Helper()
	var ops []KeyOp
	if err := json.Unmarshal([]byte(s), &ops); err != nil {
		t.Fatalf("bad test ops %s: %v", s, err)
	}
	return ops
}

func TestApplyKeyOps(t *testing.T) {
	const doc = `{"a":{"b":"old","list":[1,2,3]},"n":1.50,"s":"x"}`
	tests := []struct {
		name string
		edit KeyEdit
		ops  string
		want string
		kind errs.Kind // when the batch fails
	}{
		{name: "set existing nested key", edit: SetKey, ops: `[["a","b","new"]]`, want: `{"a":{"b":"new","list":[1,2,3]},"n":1.50,"s":"x"}`},
		{name: "set adds one new key", edit: SetKey, ops: `[["a","c",{"d":1}]]`, want: `{"a":{"b":"old","c":{"d":1},"list":[1,2,3]},"n":1.50,"s":"x"}`},
		{name: "set top-level key", edit: SetKey, ops: `[["t",true]]`, want: `{"a":{"b":"old","list":[1,2,3]},"n":1.50,"s":"x","t":true}`},
		{name: "set replaces list element by string index", edit: SetKey, ops: `[["a","list","1",20]]`, want: `{"a":{"b":"old","list":[1,20,3]},"n":1.50,"s":"x"}`},
		{name: "set replaces list element by integer index", edit: SetKey, ops: `[["a","list",0,10]]`, want: `{"a":{"b":"old","list":[10,2,3]},"n":1.50,"s":"x"}`},
		{name: "several sets apply in order", edit: SetKey, ops: `[["x",{}],["x","y",1]]`, want: `{"a":{"b":"old","list":[1,2,3]},"n":1.50,"s":"x","x":{"y":1}}`},
		{name: "big numbers round-trip", edit: SetKey, ops: `[["big",12345678901234567890123]]`, want: `{"a":{"b":"old","list":[1,2,3]},"big":12345678901234567890123,"n":1.50,"s":"x"}`},
		{name: "set cannot append to a list", edit: SetKey, ops: `[["a","list","3",4]]`, kind: errs.Conflict},
		{name: "set refuses a missing object on the path", edit: SetKey, ops: `[["a","x","y",1]]`, kind: errs.Conflict},
		{name: "set creating the path creates missing objects", edit: SetKeyCreatingPath, ops: `[["a","x","y",1],["new","z",true]]`, want: `{"a":{"b":"old","list":[1,2,3],"x":{"y":1}},"n":1.50,"new":{"z":true},"s":"x"}`},
		{name: "set creating the path does not create list elements", edit: SetKeyCreatingPath, ops: `[["a","list","5","y",1]]`, kind: errs.Conflict},
		{name: "set through a scalar", edit: SetKey, ops: `[["s","x",1]]`, kind: errs.Conflict},
		{name: "set without a key", edit: SetKey, ops: `[["only-value"]]`, kind: errs.Conflict},
		{name: "set batch is all or nothing", edit: SetKey, ops: `[["n",2],["s","x",1]]`, kind: errs.Conflict},
		{name: "set path element of a wrong type", edit: SetKey, ops: `[[true,1]]`, kind: errs.Invalid},
		{name: "empty batch", edit: SetKey, ops: `[]`, kind: errs.Invalid},
		{name: "delete nested key", ops: `[["a","b"]]`, want: `{"a":{"list":[1,2,3]},"n":1.50,"s":"x"}`},
		{name: "delete list element", ops: `[["a","list","0"]]`, want: `{"a":{"b":"old","list":[2,3]},"n":1.50,"s":"x"}`},
		{name: "delete several", ops: `[["n"],["s"]]`, want: `{"a":{"b":"old","list":[1,2,3]}}`},
		{name: "delete missing key", ops: `[["nope"]]`, kind: errs.Conflict},
		{name: "delete out of range", ops: `[["a","list","9"]]`, kind: errs.Conflict},
		{name: "delete through a scalar", ops: `[["n","x"]]`, kind: errs.Conflict},
		{name: "delete empty path", ops: `[[]]`, kind: errs.Conflict},
		{name: "delete batch is all or nothing", ops: `[["n"],["n"]]`, kind: errs.Conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyKeyOps([]byte(doc), keyOps(t, tt.ops), tt.edit)
			if tt.want == "" {
				if err == nil || errs.KindOf(err) != tt.kind {
					t.Fatalf("got %s, %v; want an error of kind %d", got, err, tt.kind)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// A refused key path names the key that is missing or what is in the way.
func TestKeyOpsErrorsNameTheKey(t *testing.T) {
	const doc = `{"a":{"b":"old","list":[1,2,3]},"s":"x"}`
	for ops, want := range map[string]string{
		`[["s","x",1]]`:               "Keys path s.x doesn't exist: s is a string, not an object or a list",
		`[["a","b","c","d",1]]`:       "Keys path a.b.c.d doesn't exist: a.b is a string, not an object or a list",
		`[["a","list","3",4]]`:        "Keys path a.list.3 doesn't exist: a.list is a list of 3, with no element 3",
		`[["a","list","x","y",true]]`: "Keys path a.list.x.y doesn't exist: a.list is a list of 3, with no element x",
	} {
		if _, err := applyKeyOps([]byte(doc), keyOps(t, ops), SetKeyCreatingPath); err == nil || err.Error() != want {
			t.Errorf("set %s: %v, want %q", ops, err, want)
		}
	}
	// Without creating the path (tuning-box's keys/set), the first missing object is named.
	const want = "Keys path a.x.y doesn't exist: there is no key a.x"
	if _, err := applyKeyOps([]byte(doc), keyOps(t, `[["a","x","y",1]]`), SetKey); err == nil || err.Error() != want {
		t.Errorf("set a.x.y: %v, want %q", err, want)
	}
	for ops, want := range map[string]string{
		`[["a","c"]]`:        "Keys path a.c doesn't exist: there is no key a.c",
		`[["x","y","z"]]`:    "Keys path x.y.z doesn't exist: there is no key x",
		`[["s","x"]]`:        "Keys path s.x doesn't exist: s is a string, not an object or a list",
		`[["a","list","9"]]`: "Keys path a.list.9 doesn't exist: a.list is a list of 3, with no element 9",
	} {
		if _, err := applyKeyOps([]byte(doc), keyOps(t, ops), DeleteKey); err == nil || err.Error() != want {
			t.Errorf("delete %s: %v, want %q", ops, err, want)
		}
	}
}

func TestKeyOpsKeepDocumentsWithinTheDepthLimit(t *testing.T) {
	nested := func(levels int) string { // levels of lists around a scalar
		return strings.Repeat("[", levels) + "1" + strings.Repeat("]", levels)
	}
	// The document itself is one level: a value of MaxDocumentDepth-1 levels fits.
	if _, err := applyKeyOps([]byte(`{}`), keyOps(t, `[["k",`+nested(MaxDocumentDepth-1)+`]]`), SetKey); err != nil {
		t.Fatalf("%d levels: %v", MaxDocumentDepth, err)
	}
	_, err := applyKeyOps([]byte(`{}`), keyOps(t, `[["k",`+nested(MaxDocumentDepth)+`]]`), SetKey)
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "more than 64 levels") {
		t.Fatalf("%d levels: %v, want 400", MaxDocumentDepth+1, err)
	}
	// Step by step: each set nests one level deeper than the last.
	doc, path := []byte(`{}`), `"k"`
	for level := 2; ; level++ {
		next, err := applyKeyOps(doc, keyOps(t, `[[`+path+`,{}]]`), SetKey)
		if level > MaxDocumentDepth {
			if !errs.Is(err, errs.Invalid) {
				t.Fatalf("level %d: %v, want 400", level, err)
			}
			break
		}
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		doc, path = next, path+`,"k"`
	}
}

func TestLookupDotPath(t *testing.T) {
	node, err := decodeJSON([]byte(`{"a":{"b":[{"c":1},{"c":2}]},"1":"one","l":[[0,[5]]]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key  string
		want string // "" = path does not exist
	}{
		{"a", `{"b":[{"c":1},{"c":2}]}`},
		{"a.b.1.c", `2`},
		{"a.b.0", `{"c":1}`},
		{"1", `"one"`},
		{"l.0.1.0", `5`},
		{"a.b.2", ""},
		{"a.b.-1", ""},
		{"a.b.01", ""},
		{"a.b.x", ""},
		{"a.x", ""},
		{"a.b.0.c.d", ""},
		{"", ""},
	}
	for _, tt := range tests {
		v, ok := lookupPath(node, splitDotPath(tt.key))
		got := ""
		if ok {
			got = string(encodeJSON(v))
		}
		if got != tt.want {
			t.Errorf("key %q: got %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestCanonicalDocument(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`{ "b": 1.0, "a": [1e400, -0, 0.1] }`, `{"a":[1e400,-0,0.1],"b":1.0}`, true},
		{`{"html":"<a&b>","u":"é"}`, `{"html":"<a&b>","u":"é"}`, true},
		{`{"dup":1,"dup":2}`, `{"dup":2}`, true},
		{`[1,2]`, "", false},
		{`"s"`, "", false},
		{`null`, "", false},
		{`{"a":`, "", false},
		{`{} {}`, "", false},
		{`{"a":1}}`, "", false},
		{`{"a":1}]`, "", false},
	}
	for _, tt := range tests {
		got, err := canonicalDocument([]byte(tt.in))
		if tt.ok != (err == nil) || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.in, got, err, tt.want)
		}
		if err != nil && errs.KindOf(err) != errs.Invalid {
			t.Errorf("%s: error kind %d, want Invalid", tt.in, errs.KindOf(err))
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"astute", true},
		{"override/plugins", true},
		{"override/configuration/node", true},
		{"dots.in.name", true},
		{"", false},
		{"/lead", false},
		{"trail/", false},
		{"a//b", false},
		{"../x", false},
		{"a/./b", false},
		{"..", false},
		{"tab\tname", false},
		{"42", false},
		{"0b9c3a35-2b2e-4f7a-9d2a-1c8e7f0d5a11", false},
		{strings.Repeat("a", 255), true},
		{strings.Repeat("é", 256), false},
	}
	for _, tt := range tests {
		if err := validName("name", tt.name); (err == nil) != tt.ok {
			t.Errorf("validName(%.30q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
