package configdb

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// MergeMode selects how the layers of an effective document combine.
//
// Shallow (the default, tuning-box's merge): a top-level key set by a later
// layer replaces the whole value of earlier layers.
//
// Deep (Hiera's `deep` merge with its default options): objects merge key by key,
// recursively; two lists merge into one holding the later (higher-priority)
// layer's elements first, then the earlier layer's elements it does not already
// hold, duplicates removed and nothing flattened (merge_hash_arrays and
// sort_merged_arrays off, no knockout prefix); anything else, including a type
// change or null, is replaced by the later layer's value.
type MergeMode string

const (
	// MergeDefault takes the resource definition's "merge" (shallow when it has none).
	MergeDefault MergeMode = ""
	MergeShallow MergeMode = "shallow"
	MergeDeep    MergeMode = "deep"
)

// ParseMergeMode accepts "deep" and "shallow" ("" is the definition's default).
func ParseMergeMode(s string) (MergeMode, error) {
	switch m := MergeMode(s); m {
	case MergeDefault, MergeShallow, MergeDeep:
		return m, nil
	}
	return "", errs.Invalidf("merge must be %q or %q, not %q", MergeShallow, MergeDeep, s)
}

// definitionMerge is the merge a definition's content asks for ({"merge": "deep"}).
// The byte check keeps the common definition without one free of any decoding.
func definitionMerge(content json.RawMessage) MergeMode {
	if !bytes.Contains(content, []byte(`"merge"`)) {
		return MergeShallow
	}
	var c struct {
		Merge MergeMode `json:"merge"`
	}
	if json.Unmarshal(content, &c) != nil || c.Merge != MergeDeep {
		return MergeShallow
	}
	return MergeDeep
}

// checkDefinitionMerge refuses a definition content whose "merge" is not a merge mode.
func checkDefinitionMerge(content json.RawMessage) error {
	var c map[string]json.RawMessage
	if json.Unmarshal(content, &c) != nil {
		return nil // not an object: it names no merge
	}
	raw, ok := c["merge"]
	if !ok {
		return nil
	}
	var m string
	if json.Unmarshal(raw, &m) != nil || (m != string(MergeShallow) && m != string(MergeDeep)) {
		return errs.Invalidf("content.merge must be %q or %q, not %s", MergeShallow, MergeDeep, raw)
	}
	return nil
}

// mergeMode resolves a query's merge against the definition's default.
func mergeMode(q MergeMode, def resdefRecord) MergeMode {
	if q != MergeDefault {
		return q
	}
	return definitionMerge(def.Content)
}

// deepMerge merges layers deeply; a key set by one layer only keeps its stored
// bytes, so only keys that several layers set are decoded and encoded again.
func (s *Service) deepMerge(ctx context.Context, layers []layer) (*merged, error) {
	m, err := s.merge(ctx, layers)
	if err != nil {
		return nil, err
	}
	setBy := make(map[string][]json.RawMessage)
	for _, l := range layers {
		d, err := s.layerDocument(ctx, l)
		if err != nil {
			return nil, err
		}
		for k, v := range d.fields {
			setBy[k] = append(setBy[k], v)
		}
	}
	for k, values := range setBy {
		if len(values) < 2 || !mergeable(values[len(values)-1]) {
			continue
		}
		var acc any
		for i, raw := range values {
			v, err := decodeJSON(raw)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				acc = v
				continue
			}
			acc = deepMergeValues(acc, v)
		}
		e := m.entries[k]
		e.raw = encodeJSON(acc)
		m.entries[k] = e
	}
	return m, nil
}

// mergeable reports whether a raw JSON value is an object or a list.
func mergeable(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && (raw[0] == '{' || raw[0] == '[')
}

// deepMergeValues merges hi (the later, higher-priority value) into lo.
// Both are decoded JSON owned by the caller; lo may be modified.
func deepMergeValues(lo, hi any) any {
	switch h := hi.(type) {
	case map[string]any:
		l, ok := lo.(map[string]any)
		if !ok {
			return hi
		}
		for k, v := range h {
			if old, ok := l[k]; ok {
				l[k] = deepMergeValues(old, v)
			} else {
				l[k] = v
			}
		}
		return l
	case []any:
		l, ok := lo.([]any)
		if !ok {
			return hi
		}
		return mergeLists(h, l)
	}
	return hi
}

// mergeLists is Hiera's deep merge of two lists: hi's elements first, then lo's
// elements not already there, without duplicates.
func mergeLists(hi, lo []any) []any {
	out := make([]any, 0, len(hi)+len(lo))
	seen := make(map[string]bool, len(hi)+len(lo))
	for _, list := range [2][]any{hi, lo} {
		for _, v := range list {
			key := string(encodeJSON(v))
			if !seen[key] {
				seen[key] = true
				out = append(out, v)
			}
		}
	}
	return slices.Clip(out)
}
