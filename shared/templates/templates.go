// Package templates holds deploy templates (Ironic spec "Deploy Templates",
// API 1.55): a trait name mapped to deploy steps with their arguments, the
// default deploy steps of each environment, and the merge that turns a node's
// requested instance traits into the ordered steps a deployment runs.
package templates

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Template is a deploy template.
type Template struct {
	UUID  string `json:"uuid"`
	Name  string `json:"name"`
	Steps []Step `json:"steps"`
	// Extra is free-form metadata, always a JSON object.
	Extra     json.RawMessage `json:"extra"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt *time.Time      `json:"updated_at"`
}

// record is a template as stored: Seq orders templates by creation.
type record struct {
	Seq int64 `json:"seq"`
	Template
}

// Index layout, all under the "tpl#" prefix:
//
//	tpl#rec      / SortID(seq) -> record
//	tpl#uuid     / uuid        -> {"seq":N}
//	tpl#name     / name        -> {"seq":N}
//	tpl#counter  / seq         -> sequence counter
//	tpl#defaults / SortID(env) -> {"steps":[...]}  (see defaults.go)
const (
	partRecords = "tpl#rec"
	partUUID    = "tpl#uuid"
	partName    = "tpl#name"
)

var counterKey = store.Key{Partition: "tpl#counter", Sort: "seq"}

func recordKey(seq int64) store.Key {
	return store.Key{Partition: partRecords, Sort: store.SortID(seq)}
}
func uuidKey(u string) store.Key    { return store.Key{Partition: partUUID, Sort: u} }
func nameKey(name string) store.Key { return store.Key{Partition: partName, Sort: name} }

type pointer struct {
	Seq int64 `json:"seq"`
}

// Service stores deploy templates and default deploy steps in an index.
type Service struct {
	idx store.Index
	now func() time.Time
}

// NewService returns the template service over idx.
func NewService(idx store.Index) *Service {
	return &Service{idx: idx, now: func() time.Time { return time.Now().UTC() }}
}

// document is the client-settable part of a template.
type document struct {
	UUID  string          `json:"uuid"`
	Name  string          `json:"name"`
	Steps []Step          `json:"steps"`
	Extra json.RawMessage `json:"extra"`
}

// parseDocument validates a whole template document (a POST body, or the
// result of a PATCH): name and steps required; uuid and extra optional; nothing else.
func parseDocument(raw []byte) (document, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return document{}, errs.Invalidf("a deploy template must be a JSON object")
	}
	var p problems
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains([]string{"uuid", "name", "steps", "extra"}, k) {
			p.add("unknown property %q", k)
		}
	}
	var d document
	if raw, ok := fields["name"]; !ok || json.Unmarshal(raw, &d.Name) != nil {
		p.add("name is required and must be a string")
	} else if err := nodes.CheckTrait(d.Name); err != nil {
		p.add("name: %s", errs.Message(err))
	}
	if raw, ok := fields["steps"]; !ok {
		p.add("steps is required")
	} else {
		d.Steps = parseSteps(raw, "steps", templateSteps, &p)
	}
	if raw, ok := fields["uuid"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &d.UUID) != nil || !ident.IsUUID(d.UUID) {
			p.add("Invalid uuid %s", strings.Trim(string(raw), `"`))
		}
		d.UUID = strings.ToLower(d.UUID)
	}
	d.Extra = json.RawMessage(`{}`)
	if raw, ok := fields["extra"]; ok && string(raw) != "null" {
		if !isObject(raw) {
			p.add("extra must be an object")
		}
		d.Extra = compact(raw)
	}
	if len(p) > 0 {
		return document{}, errs.Invalidf("%s", strings.Join(p, "; "))
	}
	return d, nil
}

// Create validates doc and stores it as a new template. A duplicate name or
// UUID is a conflict.
func (s *Service) Create(ctx context.Context, doc []byte) (Template, error) {
	d, err := parseDocument(doc)
	if err != nil {
		return Template{}, err
	}
	if d.UUID == "" {
		d.UUID = uuid.NewString()
	}
	seq, err := store.NextID(ctx, s.idx, counterKey)
	if err != nil {
		return Template{}, fmt.Errorf("allocate template sequence: %w", err)
	}
	rec := record{Seq: seq, Template: Template{UUID: d.UUID, Name: d.Name, Steps: d.Steps, Extra: d.Extra, CreatedAt: s.now()}}
	ptr := mustJSON(pointer{Seq: seq})
	err = s.idx.Write(ctx,
		store.Create(recordKey(seq), mustJSON(rec)),
		store.Create(uuidKey(d.UUID), ptr),
		store.Create(nameKey(d.Name), ptr),
	)
	if errors.Is(err, store.ErrConflict) {
		if s.exists(ctx, nameKey(d.Name)) {
			return Template{}, errs.Conflictf("a deploy template with name %s already exists", d.Name)
		}
		return Template{}, errs.Conflictf("a deploy template with uuid %s already exists", d.UUID)
	}
	if err != nil {
		return Template{}, fmt.Errorf("create deploy template %s: %w", d.Name, err)
	}
	return rec.Template, nil
}

func (s *Service) exists(ctx context.Context, k store.Key) bool {
	_, err := s.idx.Get(ctx, k)
	return err == nil
}

// Get returns the template named by ref: its UUID when ref looks like one, else its name.
func (s *Service) Get(ctx context.Context, ref string) (Template, error) {
	rec, _, err := s.get(ctx, ref)
	return rec.Template, err
}

func (s *Service) get(ctx context.Context, ref string) (record, int64, error) {
	lookup := nameKey(ref)
	if ident.IsUUID(ref) {
		lookup = uuidKey(strings.ToLower(ref))
	}
	var p pointer
	if _, err := store.GetJSON(ctx, s.idx, lookup, &p); errors.Is(err, store.ErrNotFound) {
		return record{}, 0, errs.NotFoundf("deploy template %s not found", ref)
	} else if err != nil {
		return record{}, 0, fmt.Errorf("look up deploy template %s: %w", ref, err)
	}
	var rec record
	rev, err := store.GetJSON(ctx, s.idx, recordKey(p.Seq), &rec)
	if errors.Is(err, store.ErrNotFound) {
		return record{}, 0, errs.NotFoundf("deploy template %s not found", ref)
	}
	if err != nil {
		return record{}, 0, fmt.Errorf("read deploy template %s: %w", ref, err)
	}
	return rec, rev, nil
}

// MaxPage is the largest page List returns.
const MaxPage = 1000

// ListOptions select and order a page of templates.
type ListOptions struct {
	// Limit caps the page (0 or more than MaxPage = MaxPage).
	Limit int
	// Marker is the UUID of the last template of the previous page.
	Marker string
	// SortKey is "" (creation order), created_at, updated_at, name or uuid.
	SortKey string
	// SortDir is "" or asc, or desc.
	SortDir string
}

// sortKeys are the template attributes a list may be sorted by.
var sortKeys = map[string]func(a, b record) int{
	"":           func(a, b record) int { return cmp.Compare(a.Seq, b.Seq) },
	"created_at": func(a, b record) int { return a.CreatedAt.Compare(b.CreatedAt) },
	"updated_at": func(a, b record) int { return compareUpdated(a.UpdatedAt, b.UpdatedAt) },
	"name":       func(a, b record) int { return strings.Compare(a.Name, b.Name) },
	"uuid":       func(a, b record) int { return strings.Compare(a.UUID, b.UUID) },
}

// compareUpdated orders never-updated templates first.
func compareUpdated(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Compare(*b)
}

// List returns one page of templates.
func (s *Service) List(ctx context.Context, o ListOptions) ([]Template, error) {
	compare, ok := sortKeys[o.SortKey]
	switch {
	case o.SortKey == "steps" || o.SortKey == "extra":
		return nil, errs.Invalidf("The sort_key value %q is an invalid field for sorting", o.SortKey)
	case !ok:
		return nil, errs.Invalidf("unknown sort_key %q: use one of created_at, updated_at, name, uuid", o.SortKey)
	}
	desc := false
	switch o.SortDir {
	case "", "asc":
	case "desc":
		desc = true
	default:
		return nil, errs.Invalidf("Invalid sort direction: %s. Acceptable values are 'asc' or 'desc'", o.SortDir)
	}
	if o.Limit < 0 {
		return nil, errs.Invalidf("limit must be positive, got %d", o.Limit)
	}
	limit := o.Limit
	if limit == 0 || limit > MaxPage {
		limit = MaxPage
	}
	all, err := s.all(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b record) int {
		c := cmp.Or(compare(a, b), cmp.Compare(a.Seq, b.Seq))
		if desc {
			return -c
		}
		return c
	})
	start := 0
	if o.Marker != "" {
		i := slices.IndexFunc(all, func(r record) bool { return strings.EqualFold(r.UUID, o.Marker) })
		if i < 0 {
			return nil, errs.Invalidf("marker %s not found", o.Marker)
		}
		start = i + 1
	}
	page := all[start:min(start+limit, len(all))]
	out := make([]Template, len(page))
	for i, r := range page {
		out[i] = r.Template
	}
	return out, nil
}

// all reads every template; deploy templates are few (one per offered configuration).
func (s *Service) all(ctx context.Context) ([]record, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: partRecords})
	if err != nil {
		return nil, fmt.Errorf("list deploy templates: %w", err)
	}
	out := make([]record, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it.Value, &out[i]); err != nil {
			return nil, fmt.Errorf("decode deploy template %s: %w", it.Sort, err)
		}
	}
	return out, nil
}

// Delete removes the template named by ref.
func (s *Service) Delete(ctx context.Context, ref string) error {
	return store.RetryConflicts(ctx, "delete deploy template "+ref, func() error {
		rec, rev, err := s.get(ctx, ref)
		if err != nil {
			return err
		}
		err = s.idx.Write(ctx,
			store.DeleteAt(recordKey(rec.Seq), rev),
			store.Delete(uuidKey(rec.UUID)),
			store.Delete(nameKey(rec.Name)),
		)
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("delete deploy template %s: %w", rec.Name, err)
		}
		return err
	})
}

// ByNames returns the templates whose names are among names, keyed by name.
func (s *Service) ByNames(ctx context.Context, names []string) (map[string]Template, error) {
	out := map[string]Template{}
	for chunk := range slices.Chunk(names, 100) {
		keys := make([]store.Key, len(chunk))
		for i, n := range chunk {
			keys[i] = nameKey(n)
		}
		pointers, err := s.idx.BatchGet(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("look up deploy templates: %w", err)
		}
		recKeys := make([]store.Key, 0, len(pointers))
		for _, it := range pointers {
			var p pointer
			if err := json.Unmarshal(it.Value, &p); err != nil {
				return nil, fmt.Errorf("decode deploy template pointer %s: %w", it.Sort, err)
			}
			recKeys = append(recKeys, recordKey(p.Seq))
		}
		recs, err := s.idx.BatchGet(ctx, recKeys)
		if err != nil {
			return nil, fmt.Errorf("read deploy templates: %w", err)
		}
		for _, it := range recs {
			var r record
			if err := json.Unmarshal(it.Value, &r); err != nil {
				return nil, fmt.Errorf("decode deploy template %s: %w", it.Sort, err)
			}
			out[r.Name] = r.Template
		}
	}
	return out, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with plain structs and valid raw JSON
	}
	return b
}
