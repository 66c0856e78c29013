package overrides

import (
	"maps"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/jsonone"
)

// Resource is one resource of a catalog. Parameter values are JSON values
// (numbers as json.Number) and are never modified in place.
type Resource struct {
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Parameters map[string]any `json:"parameters"`
}

// Ref returns the resource's identity; types compare case-insensitively, so
// a catalog's Package[mc] is the override data's package/mc.
func (r Resource) Ref() Ref { return Ref{Type: strings.ToLower(r.Type), Title: r.Title} }

// ParseCatalog parses a JSON list of resources {type, title, parameters};
// errors are errs.Invalid naming the element, e.g. "catalog[3].parameters: must be a map".
func ParseCatalog(doc []byte) ([]Resource, error) {
	v, err := jsonone.Any(doc)
	if err != nil {
		return nil, catalogPath.invalidf("not valid JSON: %v", err)
	}
	return parseCatalog(v)
}

const catalogPath path = "catalog"

func parseCatalog(v any) ([]Resource, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, catalogPath.invalidf("must be a list of resources")
	}
	out := make([]Resource, len(items))
	for i, item := range items {
		p := catalogPath.index(i)
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, p.invalidf("must be an object with type, title and parameters")
		}
		r := Resource{Parameters: map[string]any{}}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			switch k {
			case "type", "title":
				s, ok := obj[k].(string)
				if !ok {
					return nil, p.key(k).invalidf("must be a string")
				}
				if k == "type" {
					r.Type = s
				} else {
					r.Title = s
				}
			case "parameters":
				params, ok := obj[k].(map[string]any)
				if !ok {
					return nil, p.key(k).invalidf("must be a map")
				}
				r.Parameters = params
			default:
				return nil, p.key(k).invalidf("unknown field; a resource has type, title and parameters")
			}
		}
		out[i] = r
	}
	return out, nil
}

// indexCatalog validates the resources of a catalog (type names, titles,
// unique identities, resource references in metaparameters) and indexes them.
func indexCatalog(catalog []Resource) (map[Ref]int, error) {
	index := make(map[Ref]int, len(catalog))
	for i, r := range catalog {
		p := catalogPath.index(i)
		if !validTypeName(r.Type) {
			return nil, p.key("type").invalidf("%q is not a valid resource type name", r.Type)
		}
		if r.Title == "" {
			return nil, p.key("title").invalidf("resource title must not be empty")
		}
		ref := r.Ref()
		if first, dup := index[ref]; dup {
			return nil, p.invalidf("duplicate resource %s (first at %s)", ref, catalogPath.index(first))
		}
		index[ref] = i
		for _, name := range metaparameters {
			if v, ok := r.Parameters[name]; ok {
				if _, err := refList(p.key("parameters").key(name), v); err != nil {
					return nil, err
				}
			}
		}
	}
	return index, nil
}
