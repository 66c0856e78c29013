package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

func TestCheckDepth(t *testing.T) {
	tests := []struct {
		body string
		max  int
		ok   bool
	}{
		{`{}`, 1, true},
		{`{"a":[1,{"b":2}]}`, 3, true},
		{`{"a":[1,{"b":2}]}`, 2, false},
		{`"[[[[[["`, 1, true},
		{`{"a\"[[[":1}`, 1, true},
		{`{"a\\":[[1]]}`, 2, false},
		{`[[[]]] [[[]]]`, 3, true},
		{`]]]][[[`, 3, true},
	}
	for _, tt := range tests {
		err := httpapi.CheckDepth([]byte(tt.body), tt.max)
		if (err == nil) != tt.ok {
			t.Errorf("CheckDepth(%s, %d) = %v, want ok=%v", tt.body, tt.max, err, tt.ok)
		}
		if err != nil && !errs.Is(err, errs.Invalid) {
			t.Errorf("CheckDepth(%s): %v is not Invalid", tt.body, err)
		}
	}
}

// FuzzCheckDepth: on valid JSON, CheckDepth accepts exactly the documents
// whose nesting (measured by a real JSON decoder) is within the limit, and it
// never fails with anything but a 400 error. Seeds: testdata/fuzz.
func FuzzCheckDepth(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, limit uint8) {
		maxDepth := int(limit%16) + 1
		err := httpapi.CheckDepth(body, maxDepth)
		if err != nil && !errs.Is(err, errs.Invalid) {
			t.Fatalf("error of kind %v: %v", errs.KindOf(err), err)
		}
		if !json.Valid(body) {
			return
		}
		depth, derr := jsonDepth(body)
		if derr != nil {
			t.Fatalf("valid JSON %q: %v", body, derr)
		}
		if (err == nil) != (depth <= maxDepth) {
			t.Fatalf("CheckDepth(%q, %d) = %v, but the depth is %d", body, maxDepth, err, depth)
		}
	})
}

// jsonDepth measures the deepest nesting of a valid JSON text with encoding/json's tokenizer
// (numbers as json.Number: 1E700 is valid JSON but no float64).
func jsonDepth(body []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest, nil
		}
		if err != nil {
			return 0, err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
