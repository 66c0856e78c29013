package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// fuzzMaxBody is a small body cap, so that the fuzzer reaches the 413 path.
const fuzzMaxBody = 512

// FuzzReadBody sends any body with any Content-Type through the middleware to
// ReadBody: the answer is the body itself when it is one JSON value, otherwise
// exactly one of 413 (over the cap), 415 (not JSON) or 400 — never a 5xx —
// whether the middleware (which reads JSON bodies for their nesting) or
// ReadBody refuses it.
// Seeds: testdata/fuzz/FuzzReadBody.
func FuzzReadBody(f *testing.F) {
	var got []byte
	var gotErr error
	var reached bool
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		got, gotErr = httpapi.ReadBody(r)
	}), httpapi.Options{MaxBody: fuzzMaxBody})
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		r := httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		got, gotErr, reached = nil, nil, false
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		status := w.Code
		if reached {
			if gotErr == nil {
				if !json.Valid(got) || !bytes.Equal(got, bytes.Trim(body, " \t\r\n")) || len(body) > fuzzMaxBody {
					t.Fatalf("ReadBody(%q) returned %q", body, got)
				}
				return
			}
			status = httpapi.StatusOf(gotErr)
		}
		switch status {
		case http.StatusRequestEntityTooLarge:
			if len(body) <= fuzzMaxBody {
				t.Fatalf("413 for %d bytes", len(body))
			}
		case http.StatusUnsupportedMediaType, http.StatusBadRequest:
		default:
			t.Fatalf("ReadBody(%q, %q): status %d: %v %s", body, contentType, status, gotErr, w.Body)
		}
	})
}

// decodeTargets are the shapes the API's handlers decode bodies into.
func decodeTargets() []any {
	type level struct {
		Name string `json:"name"`
	}
	return []any{
		&struct {
			Name                string            `json:"name"`
			ID                  int64             `json:"id"`
			Components          []json.RawMessage `json:"components"`
			HierarchyLevels     []string          `json:"hierarchy_levels"`
			ResourceDefinitions []level           `json:"resource_definitions"`
			Content             json.RawMessage   `json:"content"`
			Optional            *string           `json:"optional"`
			Flags               map[string]bool   `json:"flags"`
			Count               float64           `json:"count"`
		}{},
		&[][]json.RawMessage{}, // keys/set and keys/delete batches
		new(any),
		&map[string]json.RawMessage{},
	}
}

// FuzzDecodeStrict decodes any bytes into the API's body shapes: every failure
// is a 400 error, and a success means the body was exactly one valid JSON
// value (nothing trailing). Seeds: testdata/fuzz/FuzzDecodeStrict.
func FuzzDecodeStrict(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, target := range decodeTargets() {
			err := httpapi.DecodeStrict(body, target)
			if err != nil {
				if !errs.Is(err, errs.Invalid) {
					t.Fatalf("DecodeStrict(%q, %T): kind %v: %v", body, target, errs.KindOf(err), err)
				}
				continue
			}
			if !json.Valid(body) {
				t.Fatalf("DecodeStrict accepted %q into %T, which is not one JSON value", body, target)
			}
		}
	})
}

// FuzzDecode runs Decode (ReadBody, then DecodeStrict) as a handler would:
// a failure is a 400, a success was one valid JSON value. Seeds: testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPut, "/x", io.NopCloser(bytes.NewReader(body)))
		var v map[string]json.RawMessage
		if err := httpapi.Decode(r, &v); err != nil {
			if s := httpapi.StatusOf(err); s != http.StatusBadRequest {
				t.Fatalf("Decode(%q): status %d: %v", body, s, err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("Decode accepted %q", body)
		}
	})
}
