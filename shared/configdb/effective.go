package configdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// ReadQuery asks for one document, or for the effective merge, at a level path.
type ReadQuery struct {
	DocRef
	// Kind is the addressed document (values or overrides).
	Kind Kind
	// Effective merges global .. addressed level, values then overrides at each level.
	Effective bool
	// ShowLookup (effective only) pairs each top-level value with the path where it was last set.
	ShowLookup bool
	// Key selects one value by a dot path ("a.b.0").
	Key string
	// Version, when > 0, reads that version of the addressed document (with
	// Effective: the addressed level's Kind document; every other one is at its latest).
	Version int
	// Merge (effective only) selects the merge; "" takes the definition's default.
	Merge MergeMode
	// Explain (effective only) answers where each key's value came from (see Explain).
	Explain bool
	// AsOf, when set, reads every document as it was at that instant.
	AsOf time.Time
	// Above (effective only) merges the levels above the addressed one and
	// leaves the addressed level out: what a node's data shares with its
	// placement (Fuel's common data, a task's $common).
	Above bool
}

// Effective returns the effective values document: what Hiera reads.
func (s *Service) Effective(ctx context.Context, q EffectiveQuery) (*Document, error) {
	return s.Read(ctx, ReadQuery{DocRef: q.DocRef(), Kind: Values, Effective: true, ShowLookup: q.ShowLookup, Key: q.Key, Version: q.Version})
}

// GetDocument returns the kind document at ref ({} when none is stored), at
// version when > 0 (404 when that version does not exist).
func (s *Service) GetDocument(ctx context.Context, ref DocRef, kind Kind, version int) (*Document, error) {
	return s.Read(ctx, ReadQuery{DocRef: ref, Kind: kind, Version: version})
}

// Read answers q. A warm read is one index BatchGet: documents come from the
// cache of parsed blobs, and the encoded answer from the cache keyed by its ETag,
// so nothing is merged or encoded again while nothing changed.
func (s *Service) Read(ctx context.Context, q ReadQuery) (*Document, error) {
	if q.ShowLookup && !q.Effective {
		return nil, errs.Conflictf("show_lookup needs effective")
	}
	if q.Version < 0 {
		return nil, errs.Invalidf("version must be a positive integer")
	}
	if err := q.checkOptions(); err != nil {
		return nil, err
	}
	sn, err := s.snapshots.load(ctx, q.DocRef, q.Version, q.Kind)
	if err != nil {
		return nil, err
	}
	return s.readLoaded(ctx, sn, q)
}

// readLoaded answers q from its loaded snapshot.
func (s *Service) readLoaded(ctx context.Context, sn *snapshot, q ReadQuery) (*Document, error) {
	var err error
	if !q.AsOf.IsZero() {
		if sn, err = s.rewind(ctx, sn, q.AsOf); err != nil {
			return nil, err
		}
	}
	if plain, ok := sn.plainFor(q); ok {
		return s.answers.render(ctx, plain.answer(sn))
	}
	var layers []layer
	if q.Effective {
		layers = sn.effectiveLayers(q.Kind)
		if q.Above {
			layers = slices.DeleteFunc(layers, func(l layer) bool { return l.depth == sn.depth() })
		}
	} else {
		layers = sn.addLayer(layers, sn.depth(), q.Kind, q.Kind)
		if q.Key == "" {
			if len(layers) == 0 {
				return emptyDoc, nil
			}
			d, err := s.documents.document(ctx, layers[0].sha)
			if err != nil {
				return nil, err
			}
			return d.asDocument, nil
		}
	}
	var labels []string
	if q.ShowLookup || q.Explain {
		labels = sn.lookupLabels()
	}
	mode := MergeShallow
	if q.Effective {
		mode = mergeMode(q.Merge, sn.resdef)
	}
	if q.Explain {
		return s.answers.render(ctx, explainAnswer(sn, layers, labels, q.Key, mode))
	}
	return s.answers.render(ctx, mergeAnswer(layers, labels, q.Key, mode))
}

// lookupLabels are the level paths of sn's depths as show_lookup writes them.
func (sn *snapshot) lookupLabels() []string {
	labels := make([]string, sn.depth()+1)
	for d := range labels {
		labels[d] = lookupLabel(sn.env, sn.levels[:d])
	}
	return labels
}

// layer is one stored document in merge order, at a depth of the level path.
type layer struct {
	depth   int
	sha     string
	kind    Kind
	version *Version
	// doc, when set, is the document itself: one not stored (a dry run's).
	doc *parsedDoc
}

// effectiveLayers lists the documents of sn in merge order: global .. addressed
// level, values then overrides at each; the requested version replaces the
// addressed level's document of kind addressed.
func (sn *snapshot) effectiveLayers(addressed Kind) []layer {
	layers := make([]layer, 0, 2*(sn.depth()+1))
	for d := 0; d <= sn.depth(); d++ {
		for _, k := range kinds {
			layers = sn.addLayer(layers, d, k, addressed)
		}
	}
	return layers
}

// addLayer appends the document of kind k at depth d, if one is stored.
func (sn *snapshot) addLayer(layers []layer, d int, k, addressed Kind) []layer {
	var v *Version
	if h := sn.heads[d][kindIndex(k)]; h != nil {
		v = &h.Version
	}
	if d == sn.depth() && k == addressed && sn.version != nil {
		v = sn.version
	}
	if v == nil {
		return layers
	}
	return append(layers, layer{depth: d, sha: v.SHA256, kind: k, version: v})
}

// layerDocument returns the document of l.
func (s *Service) layerDocument(ctx context.Context, l layer) (*parsedDoc, error) {
	if l.doc != nil {
		return l.doc, nil
	}
	return s.documents.document(ctx, l.sha)
}

// plainAnswer identifies a snapshot's effective answer without key or lookup
// labels, under its definition's merge: the read Hiera makes again and again.
// cachedSnapshots works it out once for a snapshot it keeps, so that a warm
// read finds its answer without listing layers or hashing them.
type plainAnswer struct {
	// kind is the kind the snapshot was loaded for; "" when none was worked out.
	kind            Kind
	mode            MergeMode
	merge, response [32]byte
}

// plainAnswerOf works out sn's plain answer of kind k.
func (sn *snapshot) plainAnswerOf(k Kind) plainAnswer {
	mode := mergeMode(MergeDefault, sn.resdef)
	merge, response := identities(sn.effectiveLayers(k), nil, "", mode)
	return plainAnswer{kind: k, mode: mode, merge: merge, response: response}
}

// plainFor returns sn's plain answer when q asks for exactly that one.
func (sn *snapshot) plainFor(q ReadQuery) (plainAnswer, bool) {
	p := sn.plain
	ok := p.kind != "" && p.kind == q.Kind && q.Effective && !q.ShowLookup && !q.Explain && !q.Above && q.Key == "" &&
		(q.Merge == MergeDefault || q.Merge == p.mode)
	return p, ok
}

// identities returns the identity of a merge (its ordered documents) and of an
// answer (the merge, the lookup labels and the key); the latter is the ETag.
// A shallow merge's identities are those of tuning-box's merge (no mode written).
func identities(layers []layer, labels []string, key string, mode MergeMode) (merge, response [32]byte) {
	ih := identityHashers.Get().(*identityHasher)
	defer identityHashers.Put(ih)
	in := ih.in[:0]
	if mode == MergeDeep {
		in = append(in, "merge=deep\x00"...)
	}
	for _, l := range layers {
		in = append(in, l.sha...)
		in = append(in, 0)
	}
	mergeLen := len(in)
	in = append(in, "key\x00"...)
	in = append(in, key...)
	in = append(in, 0)
	if labels != nil {
		in = append(in, "show_lookup\x00"...)
		for _, l := range layers {
			in = append(in, labels[l.depth]...)
			in = append(in, 0)
		}
	}
	ih.in = in
	ih.h.Reset()
	ih.h.Write(in[:mergeLen])
	ih.sum = ih.h.Sum(ih.sum[:0])
	copy(merge[:], ih.sum)
	ih.h.Write(in[mergeLen:])
	ih.sum = ih.h.Sum(ih.sum[:0])
	copy(response[:], ih.sum)
	return merge, response
}

// identityHasher is a SHA-256 with buffers for its input and sums, reused
// (identityHashers): identities runs on every effective read that no kept
// snapshot's plainAnswer answers (over an index others write too, with a
// key, show_lookup or explain).
type identityHasher struct {
	h       hash.Hash
	in, sum []byte
}

var identityHashers = sync.Pool{New: func() any { return &identityHasher{h: sha256.New()} }}

// merged is an effective document: each top-level key with its value and the layer that set it last.
type merged struct {
	keys    []string
	entries map[string]mergedValue
	// size is what the merge holds in bytes: it keeps its values alive even
	// after their documents leave the document cache.
	size int64
}

type mergedValue struct {
	raw   json.RawMessage
	layer int
}

// merge applies layers in order, replacing top-level keys (the merge is shallow).
func (s *Service) merge(ctx context.Context, layers []layer) (*merged, error) {
	m := &merged{entries: make(map[string]mergedValue)}
	for i, l := range layers {
		d, err := s.layerDocument(ctx, l)
		if err != nil {
			return nil, err
		}
		for k, v := range d.fields {
			m.entries[k] = mergedValue{raw: v, layer: i}
		}
	}
	m.keys = make([]string, 0, len(m.entries))
	m.size = entryOverhead
	for k, v := range m.entries {
		m.keys = append(m.keys, k)
		m.size += int64(2*len(k)+len(v.raw)) + 64
	}
	slices.Sort(m.keys)
	return m, nil
}

// encode writes the merged object (or the value at key), each value as
// [value, "lookup path"] when labels are given.
func (m *merged) encode(layers []layer, labels []string, key string) ([]byte, error) {
	value := func(buf []byte, v mergedValue, raw []byte) []byte {
		if labels == nil {
			return append(buf, raw...)
		}
		buf = append(buf, '[')
		buf = append(buf, raw...)
		buf = append(buf, ',')
		buf = appendJSONString(buf, labels[layers[v.layer].depth])
		return append(buf, ']')
	}
	if key != "" {
		path := splitDotPath(key)
		v, ok := m.entries[path[0]]
		if !ok {
			return nil, errNoKeysPath
		}
		raw := []byte(v.raw)
		if len(path) > 1 {
			node, err := decodeJSON(raw)
			if err != nil {
				return nil, err
			}
			sub, ok := lookupPath(node, path[1:])
			if !ok {
				return nil, errNoKeysPath
			}
			raw = encodeJSON(sub)
		}
		return value(nil, v, raw), nil
	}
	size := 2
	for _, k := range m.keys {
		size += len(k) + len(m.entries[k].raw) + 4
	}
	buf := make([]byte, 0, size+len(m.keys)*24)
	buf = append(buf, '{')
	for i, k := range m.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		v := m.entries[k]
		buf = value(buf, v, v.raw)
	}
	return append(buf, '}'), nil
}

// appendJSONString appends s as a JSON string, without HTML escaping (like the canonical form).
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20:
			buf = fmt.Appendf(buf, `\u%04x`, c)
		case c < utf8.RuneSelf:
			buf = append(buf, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, `\ufffd`...)
			} else {
				buf = append(buf, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(buf, '"')
}

// parsedDoc is a stored document: its canonical bytes, ETag and top-level fields.
type parsedDoc struct {
	raw        []byte
	etag       string
	fields     map[string]json.RawMessage
	asDocument *Document
}

func (d *parsedDoc) cost() int64 { return int64(2*len(d.raw) + 128) }

// parseDocument parses a stored document's canonical bytes; its fields are
// slices of raw, so a cached document holds its bytes once.
func parseDocument(raw []byte, sha string) (*parsedDoc, error) {
	fields, isObject, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	if !isObject {
		return nil, errs.Invalidf("a stored document is not a JSON object")
	}
	d := &parsedDoc{raw: raw, etag: quote(sha), fields: fields}
	d.asDocument = &Document{Body: raw, ETag: d.etag}
	return d, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
