package configdb

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Explain answers, for every key of an effective document (every leaf under a
// deep merge: nested objects are walked, lists and scalars are leaves), its value
// and where it came from: the level path, values or overrides, the version of
// that document that wrote the value (the newest whose value at the key
// differs from the version before it), who wrote that version and when (from
// its version record; null for a version stored before versions recorded their
// writer), and the lower layers it shadows. Under a deep merge a list that
// merged lists of lower layers names them in merged_from. A key asked for below
// what the merge tracks (any nested key under the shallow merge, an element of
// a list) comes from the layer that set the value holding it.
//
//	{"merge": "deep", "keys": {"nova.workers": {"value": 32, "from": {...}, "shadows": [{..., "value": 16}]}}}

// Writer is who wrote a document version and when: stored on the version
// record, in the same atomic write as the version and its audit record.
type Writer = wire.Writer

// KeySource is the document version that wrote a key's value, as explain
// shows it (the wire's Layer; its Value, a shadowed layer's own, is unset):
// Level is the level path as show_lookup writes it, Version wrote the value
// (CreatedAt and WrittenBy are that version's), DocumentVersion is the
// version of the document that was read, and AtOrBefore says the value did
// not change over the walkBudget versions before DocumentVersion, so Version
// is the oldest of them and the value may be older still.
type KeySource = wire.Layer

// explainedKey is one key as explain shows it; its shadowed layers are the
// document versions that were read (no DocumentVersion).
type explainedKey = wire.ExplainedKey

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

// explain encodes the answer of explainKeys.
func (s *Service) explain(ctx context.Context, sn *snapshot, layers []layer, labels []string, mode MergeMode, key string) (*Document, error) {
	keys, err := s.explainKeys(ctx, sn, layers, labels, mode, key)
	if err != nil {
		return nil, err
	}
	body := encodeJSON(wire.Explanation{Merge: string(mode), Keys: keys})
	return &Document{Body: body, ETag: quote(sha256Hex(body))}, nil
}

// explainKeys explains the merge of layers, the layers of sn (labels are
// their level paths by depth): every key, or key and what is below it.
func (s *Service) explainKeys(ctx context.Context, sn *snapshot, layers []layer, labels []string, mode MergeMode, key string) (map[string]explainedKey, error) {
	deep := mode == MergeDeep
	var path []string
	if key != "" {
		path = splitDotPath(key)
	}
	docs := make([]*parsedDoc, len(layers))
	root := make(map[string]*origin)
	for i, l := range layers {
		d, err := s.layerDocument(ctx, l)
		if err != nil {
			return nil, err
		}
		docs[i] = d
		// The shallow merge places top-level values as stored, undecoded.
		var fields map[string]any
		switch {
		case path != nil:
			// Only the top-level key asked for is merged.
			raw, ok := d.fields[path[0]]
			if !ok {
				continue
			}
			var v any = raw
			if deep {
				if v, err = decodeJSON(raw); err != nil {
					return nil, err
				}
			}
			fields = map[string]any{path[0]: v}
		case deep:
			v, err := decodeJSON(d.raw)
			if err != nil {
				return nil, err
			}
			fields = v.(map[string]any)
		default:
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
	shadowed := func(i int, path []string) (any, bool) {
		raw, ok := docs[i].fields[path[0]]
		if !ok || len(path) == 1 {
			return raw, ok
		}
		v, ok := decoded[layerField{i, path[0]}]
		if !ok {
			v, _ = decodeJSON(raw) // stored documents are valid JSON
			decoded[layerField{i, path[0]}] = v
		}
		return lookupPath(v, path[1:])
	}
	view := func(i int) KeySource {
		l := layers[i]
		return KeySource{Level: labels[l.depth], Kind: string(l.kind), Version: l.version.Version, CreatedAt: l.version.CreatedAt, WrittenBy: l.version.WrittenBy}
	}
	keys := make(map[string]explainedKey)
	// written are the keys by the layer that set their value: the walk back
	// of each layer's versions names the version that wrote them.
	type writtenKey struct {
		dotted string
		path   []string
	}
	written := make(map[int][]writtenKey)
	add := func(path []string, o *origin, value any) {
		e := explainedKey{Value: value, From: view(o.from), Shadows: []KeySource{}}
		for _, i := range o.merged {
			e.MergedFrom = append(e.MergedFrom, view(i))
		}
		for _, i := range o.shadows {
			// A layer with nothing at the key hides nothing there (a nested
			// key under the shallow merge).
			if v, ok := shadowed(i, path); ok {
				sv := view(i)
				sv.Value = v
				e.Shadows = append(e.Shadows, sv)
			}
		}
		dotted := strings.Join(path, ".")
		keys[dotted] = e
		written[o.from] = append(written[o.from], writtenKey{dotted, path})
	}
	var walk func(path []string, o *origin)
	walk = func(path []string, o *origin) {
		if len(o.kids) > 0 {
			for k, c := range o.kids {
				walk(append(slices.Clip(path), k), c)
			}
			return
		}
		if o.kids != nil {
			add(path, o, map[string]any{})
		} else {
			add(path, o, o.value)
		}
	}
	if path == nil {
		for k, o := range root {
			walk([]string{k}, o)
		}
	} else {
		o, at := root[path[0]], 1
		for o != nil && at < len(path) && o.kids != nil {
			o, at = o.kids[path[at]], at+1
		}
		switch {
		case o == nil:
			return nil, errNoKeysPath
		case at == len(path):
			walk(path, o)
		default:
			// Below what the merge tracks: inside the value o's layer set.
			v := o.value
			if raw, ok := v.(json.RawMessage); ok {
				v, _ = decodeJSON(raw) // stored documents are valid JSON
			}
			sub, ok := lookupPath(v, path[at:])
			if !ok {
				return nil, errNoKeysPath
			}
			add(path, o, sub)
		}
	}
	for li, wk := range written {
		l := layers[li]
		paths := make([][]string, len(wk))
		for i, k := range wk {
			paths[i] = k.path
		}
		sources, err := s.writersOf(ctx, versionsPartition(sn.env.ID, sn.resdef.ID, l.kind, levelPath(sn.levels[:l.depth])), *l.version, paths)
		if err != nil {
			return nil, err
		}
		for i, k := range wk {
			e := keys[k.dotted]
			src := sources[i]
			src.Level, src.Kind, src.DocumentVersion = e.From.Level, e.From.Kind, e.From.Version
			e.From = src
			keys[k.dotted] = e
		}
	}
	return keys, nil
}

// KeyProvenance answers who wrote the value at key (a dot path, "a.b.0") of
// resource's effective values document at a node of environment env, as it
// was at instant at (zero: now), under the resource's default merge: the data
// a deployment of the node reads. node is the node level's value alone (the
// node's id, UUID or FQDN; its placement gives the levels above). The answer
// is the level and kind of the document that set the value, the version of it
// that wrote the value there (with its writer and time), and the document's
// version at that instant; for an object a deep merge made of several
// layers, the source written last. A key with no value is errs.Conflict, as
// its read is.
func (s *Service) KeyProvenance(ctx context.Context, env, node, resource, key string, at time.Time) (KeySource, error) {
	if key == "" {
		return KeySource{}, errs.Invalidf("key is required: a dot path such as nova.workers")
	}
	ref := DocRef{Env: env, Levels: []LevelValue{{Name: NodeLevel, Value: node}}, Resource: resource}
	sn, err := s.snapshots.load(ctx, ref, 0, "")
	if err == nil && !at.IsZero() {
		sn, err = s.rewind(ctx, sn, at)
	}
	if err != nil {
		return KeySource{}, err
	}
	keys, err := s.explainKeys(ctx, sn, sn.effectiveLayers(Values), sn.lookupLabels(), mergeMode(MergeDefault, sn.resdef), key)
	if err != nil {
		return KeySource{}, err
	}
	if e, ok := keys[key]; ok {
		return e.From, nil
	}
	var newest KeySource
	for _, e := range keys {
		if e.From.CreatedAt.After(newest.CreatedAt) {
			newest = e.From
		}
	}
	return newest, nil
}
