package overrides

import (
	"maps"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
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
	// UncheckedTypes lists, when the caller named no known types, the types of
	// entries missing from the catalog whose existence nobody checked (sorted).
	UncheckedTypes []string `json:"unchecked_types,omitempty"`
}

// ReportEntry is the outcome for one `configuration.<type>.<title>` entry.
type ReportEntry struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	// Parameters names the parameters set on an updated or created resource, defaults included.
	Parameters []string `json:"parameters,omitempty"`
	Reason     string   `json:"reason"`
}

// Apply applies data to catalog by spec 001's algorithm:
//   - entries whose type or title is filtered out are skipped;
//   - an entry of a type that is neither in the catalog nor in knownTypes is an
//     error ("raises an error if the resource ... is not found within modulepath");
//   - parameters are defaults[type] overlaid by the entry's own;
//   - a resource in the catalog is updated: metaparameters (before, notify,
//     require, subscribe) are appended to, other parameters overwritten;
//   - a missing resource is created when create is true and neither its type is
//     in types_create_exception nor its title in titles_create_exception, or when
//     create is false and its type or its title is listed there;
//   - otherwise it is skipped.
//
// knownTypes names the resource types that exist where the catalog is compiled
// (lower case); nil means the caller could not say, and the report's
// UncheckedTypes lists what went unchecked.
//
// Updated and created resources are appended to the result in data order.
// If their relationships close a dependency cycle, Apply returns an errs.Invalid
// error containing "dependency cycle" and no catalog. catalog itself is never modified.
func Apply(catalog []Resource, data *Data, knownTypes []string) (*Result, error) {
	index, err := indexCatalog(catalog)
	if err != nil {
		return nil, err
	}
	types := newTypeCheck(catalog, knownTypes)
	out := slices.Clone(catalog)
	report := Report{Updated: []ReportEntry{}, Created: []ReportEntry{}, Skipped: []ReportEntry{}}
	var touched []int
	for _, o := range data.Resources {
		if reason, skip := filteredOut(o.Ref, data.Options); skip {
			report.Skipped = append(report.Skipped, entry(o.Ref, nil, reason))
			continue
		}
		if err := types.check(o.Ref); err != nil {
			return nil, err
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
	report.UncheckedTypes = types.unchecked()
	return &Result{Catalog: out, Report: report}, nil
}

// typeCheck knows which resource types exist: those of the catalog's
// resources, and the caller's known types when it named them.
type typeCheck struct {
	exists    map[string]bool
	checked   bool
	uncertain map[string]bool
}

func newTypeCheck(catalog []Resource, knownTypes []string) *typeCheck {
	tc := &typeCheck{exists: map[string]bool{}, checked: knownTypes != nil, uncertain: map[string]bool{}}
	for _, r := range catalog {
		tc.exists[r.Ref().Type] = true
	}
	for _, t := range knownTypes {
		tc.exists[strings.ToLower(t)] = true
	}
	return tc
}

// check fails for a type known not to exist and notes a type nobody could check.
func (tc *typeCheck) check(r Ref) error {
	switch {
	case tc.exists[r.Type]:
		return nil
	case tc.checked:
		return errs.Invalidf("%s: unknown resource type %s: it is not in the catalog nor among the known types; nothing was applied", r, r.Type)
	default:
		tc.uncertain[r.Type] = true
		return nil
	}
}

func (tc *typeCheck) unchecked() []string { return slices.Sorted(maps.Keys(tc.uncertain)) }

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
// created. Spec 001: with create true the exception lists name what must not
// be created (either list suffices), with create false what must be created.
func createDecision(r Ref, opts Options) (string, bool) {
	typeListed := slices.Contains(opts.TypesCreateException, r.Type)
	titleListed := slices.Contains(opts.TitlesCreateException, r.Title)
	if opts.Create {
		switch {
		case typeListed:
			return "not in the catalog; create is true but the type is in types_create_exception", false
		case titleListed:
			return "not in the catalog; create is true but the title is in titles_create_exception", false
		default:
			return "create is true", true
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
