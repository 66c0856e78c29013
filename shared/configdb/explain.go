package configdb

import (
	"context"
	"crypto/sha256"
	"slices"
	"strings"
	"time"
)

// Explain answers, for every key of an effective document (every leaf under a
// deep merge: nested objects are walked, lists and scalars are leaves), its value
// and where it came from: the level path, values or overrides, the version of
// that document, who wrote that version and when (from its version record; null
// for a version stored before versions recorded their writer), and
// the lower layers it shadows. Under a deep merge a list that merged lists of
// lower layers names them in merged_from.
//
//	{"merge": "deep", "keys": {"nova.workers": {"value": 32, "from": {...}, "shadows": [{..., "value": 16}]}}}

// Writer is who wrote a document version and when: stored on the version
// record, in the same atomic write as the version and its audit record.
type Writer struct {
	Principal string `json:"principal"`
	Role      string `json:"role,omitempty"`
	// RequestID is the request that wrote the version, as its audit record names it.
	RequestID string    `json:"request_id,omitempty"`
	Time      time.Time `json:"time"`
}

// explainedLayer is one layer as explain shows it.
type explainedLayer struct {
	Level     string    `json:"level"`
	Kind      Kind      `json:"kind"`
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	WrittenBy *Writer   `json:"written_by"`
	// Value is the shadowed layer's own value at the key (shadows only).
	Value any `json:"value,omitempty"`
}

type explainedKey struct {
	Value      any              `json:"value"`
	From       explainedLayer   `json:"from"`
	MergedFrom []explainedLayer `json:"merged_from,omitempty"`
	Shadows    []explainedLayer `json:"shadows"`
}

// origin tracks where a merged value came from.
type origin struct {
	value any
	// kids is set for an object walked by the deep merge.
	kids    map[string]*origin
	from    int
	merged  []int
	shadows []int
}

// layersBelow lists every layer that contributed to o (or anything below it).
func (o *origin) layersBelow(out []int) []int {
	out = append(out, o.from)
	out = append(out, o.merged...)
	out = append(out, o.shadows...)
	for _, k := range o.kids {
		out = k.layersBelow(out)
	}
	return out
}

func newOrigin(v any, layer int, deep bool) *origin {
	o := &origin{value: v, from: layer}
	if m, ok := v.(map[string]any); ok && deep {
		o.kids = make(map[string]*origin, len(m))
		for k, c := range m {
			o.kids[k] = newOrigin(c, layer, deep)
		}
	}
	return o
}

// place puts v of layer over old (nil: nothing there yet), as the merge does.
func place(old *origin, v any, layer int, deep bool) *origin {
	if old != nil && deep {
		if m, ok := v.(map[string]any); ok && old.kids != nil {
			for k, c := range m {
				old.kids[k] = place(old.kids[k], c, layer, deep)
			}
			old.from = layer
			return old
		}
		if hi, ok := v.([]any); ok {
			if lo, ok := old.value.([]any); ok && old.kids == nil {
				return &origin{value: mergeLists(hi, lo), from: layer, merged: append(slices.Clone(old.merged), old.from), shadows: old.shadows}
			}
		}
	}
	o := newOrigin(v, layer, deep)
	if old != nil {
		below := old.layersBelow(nil)
		slices.Sort(below)
		o.shadows = slices.Compact(below)
	}
	return o
}

// cachedExplain answers explain through the response cache: the answer is
// fixed by the layers (immutable versions, which name their writers), the
// labels, the key and the merge.
func (s *Service) cachedExplain(ctx context.Context, layers []layer, labels []string, mode MergeMode, key string) (*Document, error) {
	_, response := identities(layers, labels, key, mode)
	cacheKey := sha256.Sum256(append(response[:], "explain"...))
	if d, ok := s.cache.responses.Get(cacheKey); ok {
		return d, nil
	}
	d, err := s.explain(ctx, layers, labels, mode, key)
	if err != nil {
		return nil, err
	}
	s.cache.responses.Add(cacheKey, d)
	return d, nil
}

func (s *Service) explain(ctx context.Context, layers []layer, labels []string, mode MergeMode, key string) (*Document, error) {
	deep := mode == MergeDeep
	docs := make([]*parsedDoc, len(layers))
	root := make(map[string]*origin)
	for i, l := range layers {
		d, err := s.layerDocument(ctx, l)
		if err != nil {
			return nil, err
		}
		docs[i] = d
		var fields map[string]any
		if deep {
			v, err := decodeJSON(d.raw)
			if err != nil {
				return nil, err
			}
			fields = v.(map[string]any)
		} else {
			// The shallow merge places top-level values as stored, undecoded.
			fields = make(map[string]any, len(d.fields))
			for k, raw := range d.fields {
				fields[k] = raw
			}
		}
		for k, c := range fields {
			root[k] = place(root[k], c, i, deep)
		}
	}
	// shadowed is layer i's own value at path: as stored at a top-level key,
	// else looked up in that key's value, decoded once per explain.
	type layerField struct {
		layer int
		key   string
	}
	decoded := map[layerField]any{}
	shadowed := func(i int, path []string) any {
		raw, ok := docs[i].fields[path[0]]
		if !ok {
			return nil
		}
		if len(path) == 1 {
			return raw
		}
		v, ok := decoded[layerField{i, path[0]}]
		if !ok {
			v, _ = decodeJSON(raw) // stored documents are valid JSON
			decoded[layerField{i, path[0]}] = v
		}
		v, _ = lookupPath(v, path[1:])
		return v
	}
	view := func(i int) explainedLayer {
		l := layers[i]
		return explainedLayer{Level: labels[l.depth], Kind: l.kind, Version: l.version.Version, CreatedAt: l.version.CreatedAt, WrittenBy: l.version.WrittenBy}
	}
	keys := make(map[string]explainedKey)
	var walk func(path []string, o *origin) error
	walk = func(path []string, o *origin) error {
		if len(o.kids) > 0 {
			for k, c := range o.kids {
				if err := walk(append(path, k), c); err != nil {
					return err
				}
			}
			return nil
		}
		dotted := strings.Join(path, ".")
		if key != "" && dotted != key && !strings.HasPrefix(dotted, key+".") {
			return nil
		}
		e := explainedKey{Value: o.value, From: view(o.from), Shadows: []explainedLayer{}}
		if o.kids != nil {
			e.Value = map[string]any{}
		}
		for _, i := range o.merged {
			e.MergedFrom = append(e.MergedFrom, view(i))
		}
		for _, i := range o.shadows {
			v := view(i)
			v.Value = shadowed(i, path)
			e.Shadows = append(e.Shadows, v)
		}
		keys[dotted] = e
		return nil
	}
	for k, o := range root {
		if err := walk([]string{k}, o); err != nil {
			return nil, err
		}
	}
	if key != "" && len(keys) == 0 {
		return nil, errNoKeysPath
	}
	body := encodeJSON(struct {
		Merge MergeMode               `json:"merge"`
		Keys  map[string]explainedKey `json:"keys"`
	}{mode, keys})
	return &Document{Body: body, ETag: quote(sha256Hex(body))}, nil
}
