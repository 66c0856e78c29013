package configdb

import (
	"encoding/json"
	"testing"
)

func TestDiffJSON(t *testing.T) {
	from := `{"a":{"b":1,"c":[1,2],"d":{}},"gone":{"x":"1","y":{"z":true}},"same":{"deep":[1,{"k":"v"}]},"n":1.50}`
	to := `{"a":{"b":2,"c":[1,2],"d":{"new":null}},"added":{"p":[]},"same":{"deep":[1,{"k":"v"}]},"n":1.50}`
	got, err := diffJSON([]byte(from), []byte(to))
	if err != nil {
		t.Fatal(err)
	}
	// Values as the documents hold them; an empty object is a leaf: it changes as a whole.
	want := `{"added":{"added.p":[]},"removed":{"gone.x":"1","gone.y.z":true},"changed":{"a.b":{"from":1,"to":2},"a.d":{"from":{},"to":{"new":null}}}}`
	if answer, err := json.Marshal(got); err != nil || string(answer) != want {
		t.Errorf("diff:\n got %s (%v)\nwant %s", answer, err, want)
	}
	if d, err := diffJSON([]byte(from), []byte(from)); err != nil || !d.Empty() {
		t.Errorf("a document against itself: %#v, %v", d, err)
	}
	if _, err := diffJSON([]byte(`{"a":{"b":1}}`), []byte(`{"a":{"b":}}`)); err == nil {
		t.Error("invalid JSON compared without an error")
	}
}

// TestObjectFieldsShareTheDocument: a parsed document's fields are slices of
// its bytes, so the document cache holds a 7 MB document once, not twice.
func TestObjectFieldsShareTheDocument(t *testing.T) {
	raw := []byte(` {"a" : {"b":[1,2]}, "c":"x\"y", "d":null}`)
	fields, isObject, err := objectFields(raw)
	if err != nil || !isObject {
		t.Fatalf("objectFields: %v, object %t", err, isObject)
	}
	want := map[string]string{"a": `{"b":[1,2]}`, "c": `"x\"y"`, "d": "null"}
	if len(fields) != len(want) {
		t.Fatalf("fields %q, want %q", fields, want)
	}
	for k, v := range want {
		if string(fields[k]) != v {
			t.Errorf("field %q = %s, want %s", k, fields[k], v)
		}
	}
	raw[len(raw)-2] = 'X' // the last byte of "null"
	if string(fields["d"]) != "nulX" {
		t.Errorf("field d is a copy (%s), not a slice of the document", fields["d"])
	}
	for _, v := range []string{`[1,2]`, `"s"`, `3`, `null`} {
		if _, isObject, err := objectFields([]byte(v)); isObject || err != nil {
			t.Errorf("%s: object %t, %v", v, isObject, err)
		}
	}
}
