package overrides

import (
	"maps"
	"slices"
)

// Result is a catalog with override data applied, and what was done.
type Result struct {
	Catalog []Resource `json:"catalog"`
	Report  Report     `json:"report"`
}

// Report lists the override entries by outcome, each in the order of the data (type, then title).
type Report struct {
	Updated []ReportEntry `json:"updated"`
	Created []ReportEntry `json:"created"`
	Skipped []ReportEntry `json:"skipped"`
}

// ReportEntry is the outcome for one `configuration.<type>.<title>` entry.
type ReportEntry struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	// Parameters names the parameters set on an updated or created resource, defaults included.
	Parameters []string `json:"parameters,omitempty"`
	Reason     string   `json:"reason"`
}

// Apply applies data to catalog the way override_resources did:
//   - entries whose type or title is filtered out are skipped;
//   - parameters are defaults[type] overlaid by the entry's own;
//   - a resource in the catalog is updated: metaparameters (before, notify,
//     require, subscribe) are appended to, other parameters overwritten;
//   - a missing resource is created if type_create(type) OR title_create(title), where
//     x_create(v) = create ? v not in x_create_exception : v in x_create_exception;
//   - otherwise it is skipped.
//
// Updated and created resources are appended to the result in data order.
// If their relationships close a dependency cycle, Apply returns an errs.Invalid
// error containing "dependency cycle" and no catalog. catalog itself is never modified.
func Apply(catalog []Resource, data *Data) (*Result, error) {
	index, err := indexCatalog(catalog)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(catalog)
	report := Report{Updated: []ReportEntry{}, Created: []ReportEntry{}, Skipped: []ReportEntry{}}
	var touched []int
	for _, o := range data.Resources {
		if reason, skip := filteredOut(o.Ref, data.Options); skip {
			report.Skipped = append(report.Skipped, entry(o.Ref, nil, reason))
			continue
		}
		params := withDefaults(data.Options.Defaults[o.Type], o.Parameters)
		names := slices.Sorted(maps.Keys(params))
		if i, found := index[o.Ref]; found {
			out[i] = updated(out[i], params)
			touched = append(touched, i)
			report.Updated = append(report.Updated, entry(o.Ref, names, "found in the catalog"))
			continue
		}
		reason, create := createDecision(o.Ref, data.Options)
		if !create {
			report.Skipped = append(report.Skipped, entry(o.Ref, nil, reason))
			continue
		}
		index[o.Ref] = len(out)
		touched = append(touched, len(out))
		out = append(out, updated(Resource{Type: o.Type, Title: o.Title}, params))
		report.Created = append(report.Created, entry(o.Ref, names, reason))
	}
	if err := checkCycles(out, index, touched); err != nil {
		return nil, err
	}
	return &Result{Catalog: out, Report: report}, nil
}

func entry(r Ref, params []string, reason string) ReportEntry {
	return ReportEntry{Type: r.Type, Title: r.Title, Parameters: params, Reason: reason}
}

// filteredOut applies types_filter and titles_filter; an empty filter lets everything through.
func filteredOut(r Ref, opts Options) (string, bool) {
	if len(opts.TypesFilter) > 0 && !slices.Contains(opts.TypesFilter, r.Type) {
		return "type not in types_filter", true
	}
	if len(opts.TitlesFilter) > 0 && !slices.Contains(opts.TitlesFilter, r.Title) {
		return "title not in titles_filter", true
	}
	return "", false
}

// createDecision decides whether a resource missing from the catalog is
// created: type_create(type) OR title_create(title), with
// x_create(v) = create ? v not in x_create_exception : v in x_create_exception.
func createDecision(r Ref, opts Options) (string, bool) {
	typeListed := slices.Contains(opts.TypesCreateException, r.Type)
	titleListed := slices.Contains(opts.TitlesCreateException, r.Title)
	if opts.Create {
		switch {
		case !typeListed && !titleListed:
			return "create is true", true
		case !typeListed:
			return "create is true and the type is not in types_create_exception", true
		case !titleListed:
			return "create is true and the title is not in titles_create_exception", true
		default:
			return "not in the catalog; create is true but both the type and the title are create exceptions", false
		}
	}
	switch {
	case typeListed:
		return "create is false but the type is in types_create_exception", true
	case titleListed:
		return "create is false but the title is in titles_create_exception", true
	default:
		return "not in the catalog; create is false and neither the type nor the title is a create exception", false
	}
}

// withDefaults returns defaults overlaid by own: own values win.
func withDefaults(defaults, own map[string]any) map[string]any {
	params := make(map[string]any, len(defaults)+len(own))
	maps.Copy(params, defaults)
	maps.Copy(params, own)
	return params
}

// updated returns r with params applied: metaparameters are appended to
// (as lists, without repeating a reference already there), others overwritten.
func updated(r Resource, params map[string]any) Resource {
	merged := make(map[string]any, len(r.Parameters)+len(params))
	maps.Copy(merged, r.Parameters)
	for name, v := range params {
		if isMetaparameter(name) {
			merged[name] = appendRefs(merged[name], v)
		} else {
			merged[name] = v
		}
	}
	r.Parameters = merged
	return r
}

// appendRefs appends the references of added to those of existing; each may be
// absent, one reference or a list of them. The result is always a list.
func appendRefs(existing, added any) []any {
	out := []any{}
	seen := map[Ref]bool{}
	for _, v := range slices.Concat(asList(existing), asList(added)) {
		s, _ := v.(string)
		if r, ok := parseRef(s); ok {
			if seen[r] {
				continue
			}
			seen[r] = true
		}
		out = append(out, v)
	}
	return out
}

func asList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		return []any{v}
	}
}
