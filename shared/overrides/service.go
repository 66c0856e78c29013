package overrides

import (
	"context"
	"encoding/json"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Level is one hierarchy level of an environment with its value, e.g. nodes=3.
type Level struct {
	Name  string
	Value string
}

// EffectiveSource supplies the effective (merged) values of a ConfigDB resource
// at an environment's level path; shared/app implements it over the ConfigDB service.
// Errors keep their errs kinds (an unknown environment, level or resource is errs.NotFound).
type EffectiveSource interface {
	EffectiveJSON(ctx context.Context, env string, levels []Level, resource string) ([]byte, error)
}

// Service applies override data, given inline or read from the ConfigDB, to catalogs.
type Service struct {
	source EffectiveSource
}

// NewService returns a Service reading ConfigDB values through source.
func NewService(source EffectiveSource) *Service { return &Service{source: source} }

// Source names the ConfigDB values whose effective document holds the
// `configuration` and `configuration_options` to apply.
type Source struct {
	Env      string
	Levels   []Level
	Resource string
}

// ApplyRequest is a catalog (a JSON list of resources) and exactly one of
// inline override data or a Source. KnownTypes names the resource types that
// exist where the catalog is compiled; nil when the caller cannot say (see Apply).
type ApplyRequest struct {
	Catalog    json.RawMessage
	Data       json.RawMessage
	Source     *Source
	KnownTypes []string
}

// Apply parses the request and applies its override data to its catalog with the package function Apply.
// Errors name the bad element: "catalog[2].title: ...", "data.configuration.package.mc: ...".
func (s *Service) Apply(ctx context.Context, req ApplyRequest) (*Result, error) {
	if req.Catalog == nil {
		return nil, errs.Invalidf("catalog is required: a list of resources {type, title, parameters}")
	}
	catalog, err := ParseCatalog(req.Catalog)
	if err != nil {
		return nil, err
	}
	var data *Data
	switch {
	case req.Data != nil && req.Source != nil:
		return nil, errs.Invalidf("give either data or source, not both")
	case req.Data != nil:
		data, err = parseDocument(req.Data, "data")
	case req.Source != nil:
		data, err = s.effectiveData(ctx, *req.Source)
	default:
		return nil, errs.Invalidf("either data (override data) or source (a ConfigDB resource holding it) is required")
	}
	if err != nil {
		return nil, err
	}
	for i, t := range req.KnownTypes {
		if !validTypeName(t) {
			return nil, path("known_types").index(i).invalidf("%q is not a resource type name such as package", t)
		}
	}
	return Apply(catalog, data, req.KnownTypes)
}

func (s *Service) effectiveData(ctx context.Context, src Source) (*Data, error) {
	if src.Env == "" {
		return nil, errs.Invalidf("source.env is required")
	}
	if src.Resource == "" {
		return nil, errs.Invalidf("source.resource is required")
	}
	for i, l := range src.Levels {
		if l.Name == "" || l.Value == "" {
			return nil, path("source").key("levels").index(i).invalidf("a level needs a name and a value")
		}
	}
	doc, err := s.source.EffectiveJSON(ctx, src.Env, src.Levels, src.Resource)
	if err != nil {
		return nil, err
	}
	data, err := Parse(doc)
	if err != nil {
		return nil, errs.Invalidf("effective values of resource %q in environment %s: %s", src.Resource, src.Env, errs.Message(err))
	}
	return data, nil
}
