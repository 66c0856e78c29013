package configapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// diffSide is one side of POST /diff (wire.DiffSide) as the server reads it:
// whether a field is given at all decides what "to" inherits. In "to", a field left out takes the value
// "from" gave it, except as_of and version (left out: the latest).
type diffSide struct {
	Environment json.RawMessage    `json:"environment"`
	Levels      *map[string]string `json:"levels"`
	Resource    json.RawMessage    `json:"resource"`
	Kind        *string            `json:"kind"`
	Effective   *bool              `json:"effective"`
	Merge       *string            `json:"merge"`
	AsOf        string             `json:"as_of"`
	Version     int                `json:"version"`
}

// diff answers POST /api/v1/config/diff (microversion 1.3): what changed from
// one document to another, {"added", "removed", "changed"} by dot key path.
// It computes and stores nothing, so observers may call it.
func (h *handlers) diff(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if !httpapi.RequestVersion(r).AtLeast(httpapi.V1_3) {
		return 0, nil, errs.NotFoundf("POST %s/diff needs API microversion 1.3 (OpenStack-API-Version: config 1.3)", Prefix)
	}
	var body struct {
		From *diffSide `json:"from"`
		To   *diffSide `json:"to"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	if body.From == nil || body.To == nil {
		return 0, nil, errs.Invalidf(`a diff needs "from" and "to"`)
	}
	from, err := body.From.side(idsFor(r), "from")
	if err != nil {
		return 0, nil, err
	}
	body.To.inherit(body.From)
	to, err := body.To.side(idsFor(r), "to")
	if err != nil {
		return 0, nil, err
	}
	d, err := h.svc.Diff(r.Context(), from, to)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, diffView(d), nil
}

// diffView is d as the API shows it: its values are the documents' own
// JSON (json.RawMessage), written as they are.
func diffView(d configdb.Diff) wire.Diff {
	out := wire.Diff{Added: values(d.Added), Removed: values(d.Removed)}
	if d.Changed != nil {
		out.Changed = make(map[string]wire.Change, len(d.Changed))
	}
	for k, c := range d.Changed {
		out.Changed[k] = wire.Change{From: c.From, To: c.To}
	}
	return out
}

// values holds raw JSON values as wire.Diff's any (nil stays nil).
func values(raw map[string]json.RawMessage) map[string]any {
	if raw == nil {
		return nil
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		out[k] = v
	}
	return out
}

// inherit fills the fields "to" left out from "from".
func (s *diffSide) inherit(from *diffSide) {
	if s.Environment == nil {
		s.Environment = from.Environment
	}
	if s.Levels == nil {
		s.Levels = from.Levels
	}
	if s.Resource == nil {
		s.Resource = from.Resource
	}
	if s.Kind == nil {
		s.Kind = from.Kind
	}
	if s.Effective == nil {
		s.Effective = from.Effective
	}
	if s.Merge == nil {
		s.Merge = from.Merge
	}
}

func (s *diffSide) side(v ids, name string) (configdb.DiffSide, error) {
	var (
		out configdb.DiffSide
		err error
	)
	if out.Env, err = v.bodyRef(name+".environment", s.Environment, false); err != nil {
		return out, err
	}
	if out.Resource, err = v.bodyRef(name+".resource", s.Resource, true); err != nil {
		return out, err
	}
	if s.Levels != nil {
		out.Levels = *s.Levels
	}
	out.Kind = configdb.Values
	if s.Kind != nil {
		k, ok := configdb.ParseKind(*s.Kind)
		if !ok {
			return out, errs.Invalidf("%s.kind must be values or overrides", name)
		}
		out.Kind = k
	}
	out.Effective = s.Effective != nil && *s.Effective
	if s.Merge != nil {
		if out.Merge, err = configdb.ParseMergeMode(*s.Merge); err != nil {
			return out, err
		}
	}
	if s.Version < 0 {
		return out, errs.Invalidf("%s.version must be a positive integer", name)
	}
	out.Version = s.Version
	out.AsOf, err = parseAsOf(s.AsOf)
	return out, err
}

// parseAsOf reads a side's RFC 3339 instant ("" is none).
func parseAsOf(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errs.Invalidf("as_of must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", s)
	}
	return t, nil
}
