// Package overrides implements Puppet resource overrides (spec 001): the
// `configuration` / `configuration_options` data that fuel-library's
// override_resources type applied to a catalog, its validation, and its
// application to a catalog of resources with a report of what changed.
package overrides

import (
	"maps"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/jsonone"
)

// ValidatorName is the name under which ValidateData is registered as a ConfigDB
// validator; a resource definition whose content says {"validator": ValidatorName}
// holds override data.
const ValidatorName = "puppet-resource-overrides"

// Data is parsed, valid override data.
type Data struct {
	// Resources are the entries of `configuration`, sorted by type then title.
	Resources []Override
	Options   Options
}

// Override is one `configuration.<type>.<title>` entry.
type Override struct {
	Ref
	Parameters map[string]any
}

// Options are the `configuration_options`; absent options keep spec 001's
// defaults (DefaultOptions): create true, empty lists, no defaults.
type Options struct {
	Create                bool
	TypesFilter           []string
	TitlesFilter          []string
	TypesCreateException  []string
	TitlesCreateException []string
	// Defaults holds default parameters by lower-case type.
	Defaults map[string]map[string]any
}

// DefaultOptions are the options of data without `configuration_options`:
// spec 001 says create is "Default value True", and the lists default to [].
func DefaultOptions() Options { return Options{Create: true} }

// Parse parses and validates override data: a JSON object with the optional keys
// `configuration` and `configuration_options`. Errors are errs.Invalid and start
// with the path of the bad element, e.g. "configuration.package.mc: parameters must be a map".
func Parse(doc []byte) (*Data, error) { return parseDocument(doc, "") }

// ValidateData checks that doc is valid override data; it is the ConfigDB
// validator registered as ValidatorName.
func ValidateData(doc []byte) error {
	_, err := Parse(doc)
	return err
}

func parseDocument(doc []byte, root path) (*Data, error) {
	v, err := jsonone.Any(doc)
	if err != nil {
		return nil, root.invalidf("override data is not valid JSON: %v", err)
	}
	return parseData(v, root)
}

func parseData(v any, root path) (*Data, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, root.invalidf("override data must be an object with configuration and configuration_options")
	}
	data := &Data{Options: DefaultOptions()}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		var err error
		switch k {
		case "configuration":
			data.Resources, err = parseConfiguration(root.key(k), obj[k])
		case "configuration_options":
			data.Options, err = parseOptions(root.key(k), obj[k])
		default:
			err = root.key(k).invalidf("unknown key; override data has only configuration and configuration_options")
		}
		if err != nil {
			return nil, err
		}
	}
	return data, nil
}

func parseConfiguration(p path, v any) ([]Override, error) {
	byType, ok := v.(map[string]any)
	if !ok {
		return nil, p.invalidf("Configuration data should contain a resources hash!")
	}
	seen := map[string]string{}
	var out []Override
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		tp := p.key(typ)
		lower, err := typeKey(tp, typ, seen)
		if err != nil {
			return nil, err
		}
		byTitle, ok := byType[typ].(map[string]any)
		if !ok {
			return nil, tp.invalidf("titles must be a map of resource titles to parameters")
		}
		for _, title := range slices.Sorted(maps.Keys(byTitle)) {
			if title == "" {
				return nil, tp.key(title).invalidf("resource title must not be empty")
			}
			params, err := parseParams(tp.key(title), byTitle[title])
			if err != nil {
				return nil, err
			}
			out = append(out, Override{Ref: Ref{Type: lower, Title: title}, Parameters: params})
		}
	}
	slices.SortFunc(out, func(a, b Override) int { return compareRefs(a.Ref, b.Ref) })
	return out, nil
}

func compareRefs(a, b Ref) int {
	if c := strings.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return strings.Compare(a.Title, b.Title)
}

// typeKey validates a resource type name used as a map key and returns its
// lower-case form; seen maps the lower-case forms met so far to their spelling,
// so that "Package" and "package" in one map are rejected as duplicates.
func typeKey(p path, typ string, seen map[string]string) (string, error) {
	if typ == "" {
		return "", p.invalidf("resource type must not be empty")
	}
	if !validTypeName(typ) {
		return "", p.invalidf("%q is not a valid resource type name", typ)
	}
	lower := strings.ToLower(typ)
	if prev, dup := seen[lower]; dup {
		return "", p.invalidf("resource type duplicates %q (type names are case-insensitive)", prev)
	}
	seen[lower] = typ
	return lower, nil
}

// parseParams validates a parameter map: non-empty names, and metaparameters
// holding resource references.
func parseParams(p path, v any) (map[string]any, error) {
	params, ok := v.(map[string]any)
	if !ok {
		return nil, p.invalidf("parameters must be a map")
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if name == "" {
			return nil, p.key(name).invalidf("parameter name must not be empty")
		}
		if isMetaparameter(name) {
			if _, err := refList(p.key(name), params[name]); err != nil {
				return nil, err
			}
		}
	}
	return params, nil
}

func parseOptions(p path, v any) (Options, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Options{}, p.invalidf("options must be a map")
	}
	opts := DefaultOptions()
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		kp, val := p.key(k), obj[k]
		var err error
		switch k {
		case "create":
			b, ok := val.(bool)
			if !ok {
				err = kp.invalidf("must be true or false")
			}
			opts.Create = b
		case "types_filter":
			opts.TypesFilter, err = parseTypeList(kp, val)
		case "types_create_exception":
			opts.TypesCreateException, err = parseTypeList(kp, val)
		case "titles_filter":
			opts.TitlesFilter, err = parseTitleList(kp, val)
		case "titles_create_exception":
			opts.TitlesCreateException, err = parseTitleList(kp, val)
		case "defaults":
			opts.Defaults, err = parseDefaults(kp, val)
		default:
			err = kp.invalidf("unknown option; expected create, types_filter, titles_filter, types_create_exception, titles_create_exception or defaults")
		}
		if err != nil {
			return Options{}, err
		}
	}
	return opts, nil
}

func parseTitleList(p path, v any) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, p.invalidf("must be a list of resource titles")
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok || s == "" {
			return nil, p.index(i).invalidf("must be a non-empty string")
		}
		out[i] = s
	}
	return out, nil
}

// parseTypeList reads a list of type names in lower case.
func parseTypeList(p path, v any) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, p.invalidf("must be a list of resource types")
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok || !validTypeName(s) {
			return nil, p.index(i).invalidf("must be a resource type name such as package")
		}
		out[i] = strings.ToLower(s)
	}
	return out, nil
}

func parseDefaults(p path, v any) (map[string]map[string]any, error) {
	byType, ok := v.(map[string]any)
	if !ok {
		return nil, p.invalidf("Defaults data should contain a defaults hash!")
	}
	seen := map[string]string{}
	out := make(map[string]map[string]any, len(byType))
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		tp := p.key(typ)
		lower, err := typeKey(tp, typ, seen)
		if err != nil {
			return nil, err
		}
		if out[lower], err = parseParams(tp, byType[typ]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
