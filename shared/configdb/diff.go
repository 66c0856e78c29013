package configdb

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// DiffSide is one side of a diff: a document (raw or effective) of a resource at
// a level path of an environment, now, at an instant or at a version.
type DiffSide struct {
	Env string
	// Levels maps level names to values; they are put in the environment's order.
	Levels   map[string]string
	Resource string
	Kind     Kind
	// Effective compares effective documents (merged with Merge) rather than stored ones.
	Effective bool
	Merge     MergeMode
	ReadAt
}

// Diff is what changed from one document to another, by dot key path: objects
// are compared key by key, lists and scalars (and empty objects) as whole
// values. Values are the documents' canonical JSON, undecoded.
type Diff struct {
	Added   map[string]json.RawMessage `json:"added"`
	Removed map[string]json.RawMessage `json:"removed"`
	Changed map[string]Change          `json:"changed"`
}

// Change is one changed value.
type Change struct {
	From json.RawMessage `json:"from"`
	To   json.RawMessage `json:"to"`
}

// Empty reports whether the two documents were equal.
func (d Diff) Empty() bool { return len(d.Added)+len(d.Removed)+len(d.Changed) == 0 }

// Diff compares the documents of two sides.
func (s *Service) Diff(ctx context.Context, from, to DiffSide) (Diff, error) {
	a, err := s.sideDocument(ctx, from)
	if err != nil {
		return Diff{}, err
	}
	b, err := s.sideDocument(ctx, to)
	if err != nil {
		return Diff{}, err
	}
	return diffJSON(a, b)
}

// sideDocument reads one side's document, undecoded.
func (s *Service) sideDocument(ctx context.Context, side DiffSide) ([]byte, error) {
	env, err := s.GetEnvironment(ctx, side.Env)
	if err != nil {
		return nil, err
	}
	levels, err := orderLevels(env, side.Levels)
	if err != nil {
		return nil, err
	}
	if side.Kind == "" {
		side.Kind = Values
	}
	d, err := s.Read(ctx, ReadQuery{
		DocRef: DocRef{Env: side.Env, Levels: levels, Resource: side.Resource}, Kind: side.Kind,
		Effective: side.Effective, Merge: side.Merge, Version: side.Version, AsOf: side.AsOf,
	})
	if err != nil {
		return nil, err
	}
	return d.Body, nil
}

// orderLevels puts named level values in the environment's hierarchy order.
func orderLevels(env Environment, named map[string]string) ([]LevelValue, error) {
	var levels []LevelValue
	seen := 0
	for _, l := range env.Levels {
		for name, value := range named {
			if levelNameMatches(name, l.Name) {
				levels = append(levels, LevelValue{Name: name, Value: value})
				seen++
			}
		}
	}
	if seen != len(named) {
		var unknown []string
		for name := range named {
			if !slices.ContainsFunc(env.Levels, func(l Level) bool { return levelNameMatches(name, l.Name) }) {
				unknown = append(unknown, name)
			}
		}
		slices.Sort(unknown)
		return nil, errs.Invalidf("environment %d has no level named %s", env.ID, strings.Join(unknown, ", "))
	}
	return levels, nil
}

// diffJSON compares the JSON documents a and b, both in the canonical form,
// where equal values have equal bytes. It decodes no value: documents are
// walked one object level at a time, and the values in the answer are slices
// of a and b (decoding both 7 MB documents whole took several times their size).
func diffJSON(a, b []byte) (Diff, error) {
	d := Diff{Added: map[string]json.RawMessage{}, Removed: map[string]json.RawMessage{}, Changed: map[string]Change{}}
	var walk func(path string, a, b []byte) error
	walk = func(path string, a, b []byte) error {
		if bytes.Equal(a, b) {
			return nil
		}
		am, aObj, err := objectFields(a)
		if err != nil {
			return err
		}
		bm, bObj, err := objectFields(b)
		if err != nil {
			return err
		}
		if aObj && bObj && (len(am) > 0 && len(bm) > 0 || path == "") {
			for _, k := range slices.Sorted(maps.Keys(am)) {
				if bv, ok := bm[k]; ok {
					err = walk(join(path, k), am[k], bv)
				} else {
					err = leaves(join(path, k), am[k], d.Removed)
				}
				if err != nil {
					return err
				}
			}
			for k, bv := range bm {
				if _, ok := am[k]; !ok {
					if err := leaves(join(path, k), bv, d.Added); err != nil {
						return err
					}
				}
			}
			return nil
		}
		d.Changed[path] = Change{From: a, To: b}
		return nil
	}
	return d, walk("", a, b)
}

// leaves adds every leaf of the JSON value v under path to out.
func leaves(path string, v []byte, out map[string]json.RawMessage) error {
	fields, isObject, err := objectFields(v)
	if err != nil {
		return err
	}
	if isObject && len(fields) > 0 {
		for k, c := range fields {
			if err := leaves(join(path, k), c, out); err != nil {
				return err
			}
		}
		return nil
	}
	out[path] = v
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
