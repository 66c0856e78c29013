// Package overridesapi serves Puppet resource overrides (spec 001): applying
// override data, inline or from the ConfigDB, to a catalog.
package overridesapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/overrides"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Register adds the overrides routes to router.
func Register(router *routes.Router, svc *overrides.Service) {
	router.Mount(routes.Handlers{"config.overrides.apply": httpapi.Serve(func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
		var body applyBody
		if err := httpapi.Decode(r, &body); err != nil {
			return 0, nil, err
		}
		req := overrides.ApplyRequest{Catalog: body.Catalog, Data: body.Data, KnownTypes: body.KnownTypes}
		if body.Source != nil {
			// From 1.2 on the environment is a UUID, as in paths (spec 004).
			if err := httpapi.CheckPathID(r, string(body.Source.Env)); err != nil {
				return 0, nil, errs.Invalidf("source.env: %v", err)
			}
			req.Source = &overrides.Source{Env: string(body.Source.Env), Levels: body.Source.Levels, Resource: body.Source.Resource}
		}
		result, err := svc.Apply(r.Context(), req)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, resultView(*result), nil
	})})
}

// resultView is the overridden catalog and its report as the API shows them.
func resultView(res overrides.Result) wire.OverridesResult {
	entries := func(in []overrides.ReportEntry) []wire.OverridesEntry {
		return httpapi.Convert(in, func(e overrides.ReportEntry) wire.OverridesEntry { return wire.OverridesEntry(e) })
	}
	return wire.OverridesResult{
		Catalog: httpapi.Convert(res.Catalog, func(r overrides.Resource) wire.CatalogResource { return wire.CatalogResource(r) }),
		Report: wire.OverridesReport{
			Updated: entries(res.Report.Updated), Created: entries(res.Report.Created), Skipped: entries(res.Report.Skipped),
			UncheckedTypes: res.Report.UncheckedTypes,
		},
	}
}

// applyBody is wire.OverridesRequest as the server reads it: source.env is
// an id given as a number or a string, source.levels an object or a path
// ({catalog, data} or {catalog, source: {env, levels, resource}},
// with known_types when the caller knows which resource types exist.
type applyBody struct {
	Catalog    json.RawMessage `json:"catalog"`
	Data       json.RawMessage `json:"data"`
	Source     *sourceBody     `json:"source"`
	KnownTypes []string        `json:"known_types"`
}

type sourceBody struct {
	Env      envID  `json:"env"`
	Levels   levels `json:"levels"`
	Resource string `json:"resource"`
}

// envID is an environment id given as a number (9) or a string ("9" or a UUID).
type envID string

func (e *envID) UnmarshalJSON(b []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		*e = envID(v)
	case json.Number:
		*e = envID(v.String())
	default:
		return errors.New("source.env must be an environment id or UUID")
	}
	return nil
}

// levels is the level path, least specific first, given either as an object
// whose key order is the order of the levels ({"role": "compute", "nodes": "3"})
// or as a path of name/value segments ("role/compute/nodes/3", each segment URL-escaped).
type levels []overrides.Level

func (l *levels) UnmarshalJSON(b []byte) error {
	switch {
	case bytes.Equal(b, []byte("null")):
		*l = nil
		return nil
	case b[0] == '"':
		var p string
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		return l.fromPath(p)
	case b[0] == '{':
		return l.fromObject(b)
	default:
		return errors.New(`source.levels must be an object {"name": "value", ...} or a path "name/value/..."`)
	}
}

func (l *levels) fromPath(p string) error {
	p = strings.Trim(p, "/")
	if p == "" {
		*l = nil
		return nil
	}
	segs := strings.Split(p, "/")
	if len(segs)%2 != 0 {
		return fmt.Errorf("source.levels path %q is not name/value pairs", p)
	}
	out := make(levels, 0, len(segs)/2)
	for i := 0; i < len(segs); i += 2 {
		name, err1 := url.PathUnescape(segs[i])
		value, err2 := url.PathUnescape(segs[i+1])
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("source.levels path %q: %w", p, err)
		}
		out = append(out, overrides.Level{Name: name, Value: value})
	}
	*l = out
	return nil
}

// fromObject reads the object token by token, since its key order is the level order.
func (l *levels) fromObject(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the opening brace
		return err
	}
	out := levels{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name := tok.(string) // object keys are always strings
		var value any
		if err := dec.Decode(&value); err != nil {
			return err
		}
		level := overrides.Level{Name: name}
		switch v := value.(type) {
		case string:
			level.Value = v
		case json.Number:
			level.Value = v.String()
		default:
			return fmt.Errorf("source.levels.%s must be a string or a number", name)
		}
		for _, prev := range out {
			if prev.Name == name {
				return fmt.Errorf("source.levels names %q twice", name)
			}
		}
		out = append(out, level)
	}
	*l = out
	return nil
}
