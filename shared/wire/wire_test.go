package wire

import (
	"encoding/json"
	"testing"
)

// An id goes out as the form its microversion has: a number before 1.2, the UUID from it on.
func TestIDForms(t *testing.T) {
	const uuid = "0b9a3c1e-6f1d-4b7e-9a51-1c0f2b3d4e5f"
	for _, tt := range []struct {
		id   ID
		json string
	}{{IDOf(false, 7, uuid), `7`}, {IDOf(true, 7, uuid), `"` + uuid + `"`}, {"fuel", `"fuel"`}, {"", `""`}} {
		b, err := json.Marshal(tt.id)
		if err != nil || string(b) != tt.json {
			t.Errorf("Marshal(%q) = %s, %v; want %s", tt.id, b, err, tt.json)
		}
		var back ID
		if err := json.Unmarshal(b, &back); err != nil || back != tt.id {
			t.Errorf("Unmarshal(%s) = %q, %v", b, back, err)
		}
	}
	if UUIDBeside(false, uuid) != uuid || UUIDBeside(true, uuid) != "" {
		t.Error("the uuid beside the id is shown before 1.2 only")
	}
}

// A task document passes through as its writer gave it; an empty one is null.
func TestTaskDocument(t *testing.T) {
	in := `{"claim":{"task":{"id":"a","type":"shell","x":[1,"<b>"]}},"none":null}`
	var v struct {
		Claim Claim        `json:"claim"`
		None  TaskDocument `json:"none"`
	}
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if got := string(v.Claim.Task); got != `{"id":"a","type":"shell","x":[1,"<b>"]}` {
		t.Errorf("task = %s", got)
	}
	if b, err := json.Marshal(TaskDocument(nil)); err != nil || string(b) != "null" {
		t.Errorf("empty task = %s, %v", b, err)
	}
}

// A node id is read from a string or an integer, nothing else.
func TestNodeID(t *testing.T) {
	var ids []NodeID
	if err := json.Unmarshal([]byte(`["7", 8, "node-uuid"]`), &ids); err != nil || len(ids) != 3 || ids[0] != "7" || ids[1] != "8" || ids[2] != "node-uuid" {
		t.Errorf("ids = %q, %v", ids, err)
	}
	if err := json.Unmarshal([]byte(`[true]`), &ids); err == nil {
		t.Error("a boolean node id was taken")
	}
}

func TestParseVersion(t *testing.T) {
	for s, want := range map[string]Version{"1.2": V1_2, " latest ": MaxVersion, "1.10": {1, 10}} {
		if v, err := ParseVersion(s); err != nil || v != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", s, v, err, want)
		}
	}
	for _, s := range []string{"", "1", "1.+2", "-1.0", "a.b", "1.2.3"} {
		if _, err := ParseVersion(s); err == nil {
			t.Errorf("ParseVersion(%q) took it", s)
		}
	}
}
