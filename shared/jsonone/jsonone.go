// Package jsonone decodes a byte slice that must hold exactly one JSON value,
// the rule shared by request bodies, stored documents and override data.
package jsonone

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailingData reports bytes other than JSON whitespace after the value.
var ErrTrailingData = errors.New("data after the JSON document")

// Decode decodes the one JSON value in b into v with numbers as json.Number,
// so that they pass through unchanged. With strict, fields that v does not
// have are errors. Errors are encoding/json's, or ErrTrailingData.
func Decode(b []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	// dec.More would miss a stray "}" or "]", and bytes.TrimSpace would pass
	// \v or U+0085, which JSON does not count as whitespace: only the end of
	// input may follow the value.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ErrTrailingData
	}
	return nil
}

// Any decodes the one JSON value in b as any.
func Any(b []byte) (any, error) {
	var v any
	if err := Decode(b, &v, false); err != nil {
		return nil, err
	}
	return v, nil
}
