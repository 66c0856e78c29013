package configdb

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/levelpath"
	"github.com/tuningbox/tuningbox/shared/store"
)

// NodeLevel is the node-bound level (see levelpath): a path may name the node
// by legacy id, UUID or FQDN (any case), the node must be registered in that
// environment, and its documents are stored under its legacy id whichever form
// was used. Every other level keeps free values.
const NodeLevel = levelpath.NodeLevel

// IsNodeLevel reports whether a level of that name is node-bound.
func IsNodeLevel(name string) bool { return levelpath.IsNodeLevel(name) }

// levelNameMatches reports whether a path's level name addresses the environment's level named env.
func levelNameMatches(path, env string) bool {
	return path == env || IsNodeLevel(path) && IsNodeLevel(env)
}

// Node is what the ConfigDB needs to know of a registered node.
type Node struct {
	ID          int64
	UUID        string
	FQDN        string
	Environment int64
	// Levels is the node's placement: its values for the levels above the node level.
	Levels map[string]string
}

// NodeRegistry resolves the values of the node-bound level. shared/app adapts
// the node registry (shared/nodes) to it.
type NodeRegistry interface {
	// Resolve finds the node ref names (legacy id, UUID or FQDN); unknown is errs.NotFound.
	Resolve(ctx context.Context, ref string) (Node, error)
	// RecordKey is the index item that holds node id. A read fetches it in the
	// same batch as the documents, so a cached resolution is confirmed at no cost
	// and a node that was changed, moved or deleted is never answered from the cache.
	RecordKey(id int64) store.Key
	// DecodeRecord decodes the value of a RecordKey item.
	DecodeRecord(value []byte) (Node, error)
}

// WithNodes makes the levels named "nodes" or "node" node-bound, resolved
// through r. Without it they hold free values like any other level.
func WithNodes(r NodeRegistry) Option { return func(s *Service) { s.nodes = r } }

// placement is what the level path of a reference that names a node resolved to.
type placement struct {
	// levels is the canonical path: the environment's level names, the node's id at the node level.
	levels []LevelValue
	node   Node
	// ref is the node reference as the path gave it.
	ref string
	// envRev is the revision of the environment the path was resolved against.
	envRev int64
	// above is how many levels come before the node level; short means the path
	// started at the node level and they came from the node's placement.
	above int
	short bool
	// confirmed holds the node record bytes that last confirmed the placement:
	// while they stay the same, a read compares them instead of decoding them.
	confirmed atomic.Pointer[[]byte]
}

// cost approximates the bytes a cached placement holds.
func (p *placement) cost() int64 {
	n := len(p.ref) + len(p.node.UUID) + len(p.node.FQDN)
	for _, l := range p.levels {
		n += len(l.Name) + len(l.Value) + 32
	}
	for k, v := range p.node.Levels {
		n += len(k) + len(v) + 32
	}
	// the confirming record holds about the node's fields again
	return int64(2*n + entryOverhead)
}

// placementKey is the cache key of a level path in environment env.
func placementKey(env int64, levels []LevelValue) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(env, 10))
	for _, lv := range levels {
		b.WriteString("\x00" + lv.Name + "\x00" + lv.Value)
	}
	return b.String()
}

// place resolves a level path that names a node in environment env; nil when it
// names none (or no registry is configured), so the path is used as given.
// The path may give every level down to the node's, or start at the node level
// (the short path), whose levels above then come from the node's placement.
func (s *Service) place(ctx context.Context, env int64, levels []LevelValue) (*placement, error) {
	at := slices.IndexFunc(levels, func(lv LevelValue) bool { return IsNodeLevel(lv.Name) })
	if s.nodes == nil || at < 0 {
		return nil, nil
	}
	key := placementKey(env, levels)
	if p, ok := s.cache.placements.Get(key); ok {
		return p, nil
	}
	rec, envRev, err := getRecord[envRecord](ctx, s.idx, envKey(env))
	if err != nil {
		return nil, notFound(err, "environment %d not found", env)
	}
	envAt := slices.IndexFunc(rec.Levels, func(l Level) bool { return IsNodeLevel(l.Name) })
	if envAt < 0 || at != envAt && at != 0 {
		return nil, nil // not this environment's node level: checkLevels names the mismatch
	}
	ref := levels[at].Value
	if err := validLevelValue(levels[at]); err != nil {
		return nil, err
	}
	n, err := s.nodes.Resolve(ctx, ref)
	if errs.Is(err, errs.NotFound) {
		return nil, errs.NotFoundf("node %s not found", ref)
	}
	if err != nil {
		return nil, err
	}
	if n.Environment != env {
		return nil, errs.NotFoundf("node %s is not assigned to environment %d", ref, env)
	}
	p := &placement{node: n, ref: ref, envRev: envRev, above: envAt, short: at != envAt}
	p.levels = make([]LevelValue, 0, envAt+len(levels)-at)
	if p.short {
		for _, l := range rec.Levels[:envAt] {
			v, ok := n.Levels[l.Name]
			if !ok {
				return nil, errs.Conflictf("node %s has no value for level %q of environment %d (the levels above %q); "+
					"set the node's levels or give the full path", ref, l.Name, env, rec.Levels[envAt].Name)
			}
			p.levels = append(p.levels, LevelValue{Name: l.Name, Value: v})
		}
	} else {
		p.levels = append(p.levels, levels[:at]...)
	}
	p.levels = append(p.levels, LevelValue{Name: rec.Levels[envAt].Name, Value: strconv.FormatInt(n.ID, 10)})
	p.levels = append(p.levels, levels[at+1:]...)
	s.cache.placements.Add(key, p)
	return p, nil
}

// confirmedBy reports whether the node's freshly fetched record raw confirms p.
func (p *placement) confirmedBy(env int64, raw []byte, decode func([]byte) (Node, error)) (bool, error) {
	if last := p.confirmed.Load(); last != nil && bytes.Equal(*last, raw) {
		return true, nil
	}
	n, err := decode(raw)
	if err != nil || !p.holds(env, n) {
		return false, err
	}
	raw = bytes.Clone(raw) // not the whole batch's values
	p.confirmed.Store(&raw)
	return true, nil
}

// holds confirms from the node's freshly fetched record that the path still resolves to p.
func (p *placement) holds(env int64, n Node) bool {
	switch {
	case n.Environment != env:
		return false
	case ident.IsUUID(p.ref):
		if !strings.EqualFold(n.UUID, p.ref) {
			return false
		}
	case !ident.IsIntegerID(p.ref):
		if n.FQDN != strings.ToLower(strings.TrimSuffix(p.ref, ".")) {
			return false
		}
	}
	if p.short {
		for _, lv := range p.levels[:p.above] {
			if n.Levels[lv.Name] != lv.Value {
				return false
			}
		}
	}
	return true
}
