package jsonone_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tuningbox/tuningbox/shared/jsonone"
)

func TestAny(t *testing.T) {
	for _, tc := range []struct {
		in       string
		want     any
		trailing bool
		invalid  bool
	}{
		{in: `{"a":1}`, want: map[string]any{"a": json.Number("1")}},
		{in: " \t\r\n[1.50]\n ", want: []any{json.Number("1.50")}},
		{in: `"x"`, want: "x"},
		{in: `{}}`, trailing: true},
		{in: `[]]`, trailing: true},
		{in: `1 2`, trailing: true},
		{in: "{}\v", trailing: true},
		{in: "{}\f", trailing: true},
		{in: "{}\u0085", trailing: true},
		{in: "{", invalid: true},
		{in: "", invalid: true},
		{in: "\v{}", invalid: true},
	} {
		got, err := jsonone.Any([]byte(tc.in))
		switch {
		case tc.trailing:
			if !errors.Is(err, jsonone.ErrTrailingData) {
				t.Errorf("Any(%q) = %v, %v; want ErrTrailingData", tc.in, got, err)
			}
		case tc.invalid:
			if err == nil || errors.Is(err, jsonone.ErrTrailingData) {
				t.Errorf("Any(%q) = %v, %v; want a syntax error", tc.in, got, err)
			}
		default:
			if err != nil {
				t.Fatalf("Any(%q): %v", tc.in, err)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(tc.want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("Any(%q) = %s, want %s", tc.in, gotJSON, wantJSON)
			}
		}
	}
}

func TestDecodeStrict(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	if err := jsonone.Decode([]byte(`{"a":1,"b":2}`), &v, true); err == nil {
		t.Fatal("strict decode accepted an unknown field")
	}
	if err := jsonone.Decode([]byte(`{"a":1,"b":2}`), &v, false); err != nil || v.A != 1 {
		t.Fatalf("lenient decode: %v, %+v", err, v)
	}
}
