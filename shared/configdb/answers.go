package configdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/cache"
)

// A read works out what answers it (an answer: which documents merge, how,
// with what lookup labels and key) and leaves the rendering to the answer
// layer: mergedAnswers merges and encodes; cachedAnswers decorates it with
// the encoded answers kept by their identity, as the document and snapshot
// caches decorate their readers (readcache.go). An answer's identity fixes
// its body, so nothing kept is stale.

// Document is an encoded JSON answer with its strong ETag (quoted, as sent in the header).
// Body is shared with a cache and must not be modified.
type Document struct {
	Body []byte
	ETag string
}

// answer is what answers a read, before it is rendered.
type answer struct {
	// id identifies the answer: its ETag, unless it explains (explainAnswer).
	// merge identifies the merge it encodes.
	id, merge [32]byte
	mode      MergeMode
	// layers are the documents merged, in merge order; labels (show_lookup)
	// are the lookup paths by depth, nil for plain values; key selects one value.
	layers []layer
	labels []string
	key    string
	// sn is the snapshot read; a plain answer (plainAnswer) lists its layers,
	// sn's effective layers of kind, only when it is rendered, and an
	// explanation reads the versions' histories from it.
	sn      *snapshot
	kind    Kind
	plain   bool
	explain bool
}

// mergeAnswer is the answer that merges layers under mode, with labels and key.
func mergeAnswer(layers []layer, labels []string, key string, mode MergeMode) answer {
	merge, id := identities(layers, labels, key, mode)
	return answer{id: id, merge: merge, mode: mode, layers: layers, labels: labels, key: key}
}

// answer is sn's plain answer, its layers listed only if it is rendered.
func (p plainAnswer) answer(sn *snapshot) answer {
	return answer{id: p.response, merge: p.merge, mode: p.mode, sn: sn, kind: p.kind, plain: true}
}

// explainAnswer is the answer that explains the merge of sn's layers. It is
// fixed by the layers (immutable versions, which name their writers, over
// immutable histories), the labels, the key and the merge. The layers' shas
// alone do not name their versions: equal content is stored at other levels,
// environments and versions too.
func explainAnswer(sn *snapshot, layers []layer, labels []string, key string, mode MergeMode) answer {
	_, response := identities(layers, labels, key, mode)
	id := fmt.Appendf(response[:], "explain\x00%d\x00%d", sn.env.ID, sn.resdef.ID)
	for _, l := range layers {
		id = fmt.Appendf(id, "\x00%s%d", l.kind, l.version.Version)
	}
	return answer{id: sha256.Sum256(id), mode: mode, layers: layers, labels: labels, key: key, sn: sn, explain: true}
}

// answerRenderer renders answers.
type answerRenderer interface {
	render(ctx context.Context, a answer) (*Document, error)
}

// mergedAnswers renders answers by merging their documents (through the
// cache of merges) and encoding the result.
type mergedAnswers struct{ s *Service }

func (r mergedAnswers) render(ctx context.Context, a answer) (*Document, error) {
	s := r.s
	if a.explain {
		return s.explain(ctx, a.sn, a.layers, a.labels, a.mode, a.key)
	}
	layers := a.layers
	if a.plain {
		layers = a.sn.effectiveLayers(a.kind)
	}
	etag := quote(hex.EncodeToString(a.id[:]))
	if len(layers) == 1 && layers[0].doc == nil && a.labels == nil && a.key == "" {
		// One stored document merges, shallow or deep, to itself: its
		// canonical bytes (keys sorted) are the answer, unparsed.
		raw, err := s.blobs.Get(ctx, layers[0].sha)
		if err != nil {
			return nil, fmt.Errorf("document blob %s: %w", layers[0].sha, err)
		}
		return &Document{Body: raw, ETag: etag}, nil
	}
	m, ok := s.cache.merges.Get(a.merge)
	if !ok {
		var err error
		merge := s.merge
		if a.mode == MergeDeep {
			merge = s.deepMerge
		}
		if m, err = merge(ctx, layers); err != nil {
			return nil, err
		}
		s.cache.merges.Add(a.merge, m)
	}
	body, err := m.encode(layers, a.labels, a.key)
	if err != nil {
		return nil, err
	}
	return &Document{Body: body, ETag: etag}, nil
}

// cachedAnswers keeps what next renders by the answer's identity.
type cachedAnswers struct {
	next      answerRenderer
	responses *cache.LRU[[32]byte, *Document]
}

func newCachedAnswers(next answerRenderer, maxBytes int64) cachedAnswers {
	return cachedAnswers{next: next, responses: cache.New[[32]byte](maxBytes, func(d *Document) int64 { return int64(len(d.Body)+len(d.ETag)) + entryOverhead })}
}

func (c cachedAnswers) render(ctx context.Context, a answer) (*Document, error) {
	if d, ok := c.responses.Get(a.id); ok {
		return d, nil
	}
	d, err := c.next.render(ctx, a)
	if err != nil {
		return nil, err
	}
	c.responses.Add(a.id, d)
	return d, nil
}

func quote(s string) string { return strconv.Quote(s) }

// emptyETag is the ETag of a level where no document is stored (its body is {}).
var (
	emptyETag = quote(sha256Hex(emptyDocument))
	emptyDoc  = &Document{Body: emptyDocument, ETag: emptyETag}
)

// ETagMatches reports whether an If-Match or If-None-Match header value matches
// etag: "*" matches anything, else one of the comma-separated entity tags must be
// exactly etag (strong comparison; tuningbox only issues strong ETags).
func ETagMatches(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}
