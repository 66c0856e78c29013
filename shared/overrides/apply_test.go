package overrides

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

func mustParse(t *testing.T, doc string) *Data {
	t.Helper()
	data, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return data
}

func mustCatalog(t *testing.T, doc string) []Resource {
	t.Helper()
	catalog, err := ParseCatalog([]byte(doc))
	if err != nil {
		t.Fatalf("ParseCatalog: %v", err)
	}
	return catalog
}

// jsonValue turns v into plain decoded JSON so that values built in different
// ways (string slices, []any) compare equal when they encode equally; numbers
// stay json.Number so that they compare digit for digit.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	raw, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return out
}

func assertJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	if g, w := jsonValue(t, got), jsonValue(t, want); !reflect.DeepEqual(g, w) {
		gotJSON, _ := json.Marshal(got)
		t.Errorf("%s =\n  %s\nwant\n  %s", what, gotJSON, want)
	}
}

// puppetTypes are the known resource types the tests name, as a Puppet
// compile would: the native types they use.
var puppetTypes = []string{"package", "service", "file", "exec"}

func TestApply(t *testing.T) {
	tests := []struct {
		name        string
		catalog     string
		data        string
		wantCatalog string
		wantReport  string
	}{
		{
			name: "reference: both packages are updated when present",
			catalog: `[{"type": "package", "title": "mc", "parameters": {"ensure": "installed"}},
			           {"type": "package", "title": "fontconfig-config"},
			           {"type": "service", "title": "ntpd", "parameters": {"ensure": "running"}}]`,
			data: `{"configuration": {"package": {"fontconfig-config": {"ensure": "latest"}, "mc": {"ensure": "absent"}}}}`,
			wantCatalog: `[{"type": "package", "title": "mc", "parameters": {"ensure": "absent"}},
			               {"type": "package", "title": "fontconfig-config", "parameters": {"ensure": "latest"}},
			               {"type": "service", "title": "ntpd", "parameters": {"ensure": "running"}}]`,
			wantReport: `{"updated": [{"type": "package", "title": "fontconfig-config", "parameters": ["ensure"], "reason": "found in the catalog"},
			                          {"type": "package", "title": "mc", "parameters": ["ensure"], "reason": "found in the catalog"}],
			              "created": [], "skipped": []}`,
		},
		{
			name:    "spec example: with create unset (true by default) missing packages are created",
			catalog: `[]`,
			data:    `{"configuration": {"package": {"fontconfig-config": {"ensure": "latest"}, "mc": {"ensure": "absent"}}}}`,
			wantCatalog: `[{"type": "package", "title": "fontconfig-config", "parameters": {"ensure": "latest"}},
			               {"type": "package", "title": "mc", "parameters": {"ensure": "absent"}}]`,
			wantReport: `{"updated": [], "skipped": [], "created": [
			  {"type": "package", "title": "fontconfig-config", "parameters": ["ensure"], "reason": "create is true"},
			  {"type": "package", "title": "mc", "parameters": ["ensure"], "reason": "create is true"}]}`,
		},
		{
			name:        "missing packages are skipped when create is false",
			catalog:     `[]`,
			data:        `{"configuration": {"package": {"fontconfig-config": {"ensure": "latest"}, "mc": {"ensure": "absent"}}}, "configuration_options": {"create": false}}`,
			wantCatalog: `[]`,
			wantReport: `{"updated": [], "created": [], "skipped": [
			  {"type": "package", "title": "fontconfig-config", "reason": "not in the catalog; create is false and neither the type nor the title is a create exception"},
			  {"type": "package", "title": "mc", "reason": "not in the catalog; create is false and neither the type nor the title is a create exception"}]}`,
		},
		{
			name:    "reference: create=true creates a file that notifies a new service",
			catalog: `[]`,
			data: `{"configuration": {"file": {"/etc/httpd/httpd.conf": {"notify": "Service[httpd]"}}, "service": {"httpd": {}}},
			        "configuration_options": {"create": true}}`,
			wantCatalog: `[{"type": "file", "title": "/etc/httpd/httpd.conf", "parameters": {"notify": ["Service[httpd]"]}},
			               {"type": "service", "title": "httpd", "parameters": {}}]`,
			wantReport: `{"updated": [], "skipped": [], "created": [
			  {"type": "file", "title": "/etc/httpd/httpd.conf", "parameters": ["notify"], "reason": "create is true"},
			  {"type": "service", "title": "httpd", "reason": "create is true"}]}`,
		},
		{
			name: "reference: types_filter ignores file and service; package defaults lose to own values",
			catalog: `[{"type": "package", "title": "htop", "parameters": {"ensure": "installed"}},
			           {"type": "package", "title": "ntpd", "parameters": {}},
			           {"type": "file", "title": "/etc/motd", "parameters": {}},
			           {"type": "service", "title": "ntpd", "parameters": {"ensure": "running"}}]`,
			data: `{"configuration": {"package": {"htop": {"ensure": "absent"}, "ntpd": {}},
			                          "file": {"/etc/motd": {"content": "hi"}}, "service": {"ntpd": {"ensure": "stopped"}}},
			        "configuration_options": {"types_filter": ["package"], "defaults": {"package": {"ensure": "present"}}}}`,
			wantCatalog: `[{"type": "package", "title": "htop", "parameters": {"ensure": "absent"}},
			               {"type": "package", "title": "ntpd", "parameters": {"ensure": "present"}},
			               {"type": "file", "title": "/etc/motd", "parameters": {}},
			               {"type": "service", "title": "ntpd", "parameters": {"ensure": "running"}}]`,
			wantReport: `{"created": [],
			  "updated": [{"type": "package", "title": "htop", "parameters": ["ensure"], "reason": "found in the catalog"},
			              {"type": "package", "title": "ntpd", "parameters": ["ensure"], "reason": "found in the catalog"}],
			  "skipped": [{"type": "file", "title": "/etc/motd", "reason": "type not in types_filter"},
			              {"type": "service", "title": "ntpd", "reason": "type not in types_filter"}]}`,
		},
		{
			name: "titles_filter skips other titles of every type",
			catalog: `[{"type": "package", "title": "mc", "parameters": {}},
			           {"type": "package", "title": "htop", "parameters": {}}]`,
			data: `{"configuration": {"package": {"mc": {"ensure": "absent"}, "htop": {"ensure": "absent"}}},
			        "configuration_options": {"titles_filter": ["mc"]}}`,
			wantCatalog: `[{"type": "package", "title": "mc", "parameters": {"ensure": "absent"}},
			               {"type": "package", "title": "htop", "parameters": {}}]`,
			wantReport: `{"created": [],
			  "updated": [{"type": "package", "title": "mc", "parameters": ["ensure"], "reason": "found in the catalog"}],
			  "skipped": [{"type": "package", "title": "htop", "reason": "title not in titles_filter"}]}`,
		},
		{
			name: "types_filter and titles_filter together: both must admit the entry",
			catalog: `[{"type": "package", "title": "mc", "parameters": {}},
			           {"type": "service", "title": "mc", "parameters": {}},
			           {"type": "package", "title": "htop", "parameters": {}}]`,
			data: `{"configuration": {"package": {"mc": {"x": 1}, "htop": {"x": 1}}, "service": {"mc": {"x": 1}}},
			        "configuration_options": {"types_filter": ["package"], "titles_filter": ["mc"]}}`,
			wantCatalog: `[{"type": "package", "title": "mc", "parameters": {"x": 1}},
			               {"type": "service", "title": "mc", "parameters": {}},
			               {"type": "package", "title": "htop", "parameters": {}}]`,
			wantReport: `{"created": [],
			  "updated": [{"type": "package", "title": "mc", "parameters": ["x"], "reason": "found in the catalog"}],
			  "skipped": [{"type": "package", "title": "htop", "reason": "title not in titles_filter"},
			              {"type": "service", "title": "mc", "reason": "type not in types_filter"}]}`,
		},
		{
			name:    "defaults apply to created resources of their type only",
			catalog: `[]`,
			data: `{"configuration": {"package": {"htop": {}, "mc": {"ensure": "absent"}}, "service": {"ntpd": {}}},
			        "configuration_options": {"create": true, "defaults": {"package": {"ensure": "present", "provider": "apt"}}}}`,
			wantCatalog: `[{"type": "package", "title": "htop", "parameters": {"ensure": "present", "provider": "apt"}},
			               {"type": "package", "title": "mc", "parameters": {"ensure": "absent", "provider": "apt"}},
			               {"type": "service", "title": "ntpd", "parameters": {}}]`,
			wantReport: `{"updated": [], "skipped": [], "created": [
			  {"type": "package", "title": "htop", "parameters": ["ensure", "provider"], "reason": "create is true"},
			  {"type": "package", "title": "mc", "parameters": ["ensure", "provider"], "reason": "create is true"},
			  {"type": "service", "title": "ntpd", "reason": "create is true"}]}`,
		},
		{
			name: "metaparameters append (scalar or list), other parameters are overwritten",
			catalog: `[{"type": "service", "title": "httpd", "parameters": {
			  "ensure": "stopped", "notify": "Exec[reload]", "require": ["Package[httpd]"], "enable": true, "tags": ["a"]}}]`,
			data: `{"configuration": {"service": {"httpd": {
			  "ensure": "running", "notify": "Exec[flush]", "require": ["File[conf]", "File[site]"],
			  "subscribe": "File[cert]", "before": ["Exec[check]"], "tags": ["b"]}}}}`,
			wantCatalog: `[{"type": "service", "title": "httpd", "parameters": {
			  "ensure": "running", "enable": true, "tags": ["b"],
			  "notify": ["Exec[reload]", "Exec[flush]"], "require": ["Package[httpd]", "File[conf]", "File[site]"],
			  "subscribe": ["File[cert]"], "before": ["Exec[check]"]}}]`,
			wantReport: `{"created": [], "skipped": [], "updated": [{"type": "service", "title": "httpd",
			  "parameters": ["before", "ensure", "notify", "require", "subscribe", "tags"], "reason": "found in the catalog"}]}`,
		},
		{
			name:    "a metaparameter reference already present is not repeated",
			catalog: `[{"type": "file", "title": "conf", "parameters": {"notify": ["Service[httpd]", "Exec[x]"]}}]`,
			data:    `{"configuration": {"file": {"conf": {"notify": ["service[httpd]", "Exec[y]"]}}}}`,
			wantCatalog: `[{"type": "file", "title": "conf", "parameters": {
			  "notify": ["Service[httpd]", "Exec[x]", "Exec[y]"]}}]`,
			wantReport: `{"created": [], "skipped": [], "updated": [{"type": "file", "title": "conf", "parameters": ["notify"], "reason": "found in the catalog"}]}`,
		},
		{
			name:    "a metaparameter default is overlaid by the entry's own, then appended",
			catalog: `[{"type": "service", "title": "httpd", "parameters": {"require": "Package[httpd]"}}]`,
			data: `{"configuration": {"service": {"httpd": {"require": "File[conf]"}}},
			        "configuration_options": {"defaults": {"service": {"require": "Exec[default]", "ensure": "running"}}}}`,
			wantCatalog: `[{"type": "service", "title": "httpd", "parameters": {"require": ["Package[httpd]", "File[conf]"], "ensure": "running"}}]`,
			wantReport: `{"created": [], "skipped": [], "updated": [{"type": "service", "title": "httpd",
			  "parameters": ["ensure", "require"], "reason": "found in the catalog"}]}`,
		},
		{
			name:    "nested values are replaced whole, numbers pass through unchanged",
			catalog: `[{"type": "file", "title": "conf", "parameters": {"content": {"a": 1, "b": 2}, "mode": 420}}]`,
			data:    `{"configuration": {"file": {"conf": {"content": {"a": 10}, "size": 12345678901234567890}}}}`,
			wantCatalog: `[{"type": "file", "title": "conf", "parameters": {
			  "content": {"a": 10}, "mode": 420, "size": 12345678901234567890}}]`,
			wantReport: `{"created": [], "skipped": [], "updated": [{"type": "file", "title": "conf",
			  "parameters": ["content", "size"], "reason": "found in the catalog"}]}`,
		},
		{
			name:        "type names match case-insensitively; the catalog's spelling stays",
			catalog:     `[{"type": "Package", "title": "mc", "parameters": {}}]`,
			data:        `{"configuration": {"package": {"mc": {"ensure": "absent"}}}}`,
			wantCatalog: `[{"type": "Package", "title": "mc", "parameters": {"ensure": "absent"}}]`,
			wantReport:  `{"created": [], "skipped": [], "updated": [{"type": "package", "title": "mc", "parameters": ["ensure"], "reason": "found in the catalog"}]}`,
		},
		{
			name:        "titles are case-sensitive",
			catalog:     `[{"type": "package", "title": "MC", "parameters": {}}]`,
			data:        `{"configuration": {"package": {"mc": {"ensure": "absent"}}}}`,
			wantCatalog: `[{"type": "package", "title": "MC", "parameters": {}}, {"type": "package", "title": "mc", "parameters": {"ensure": "absent"}}]`,
			wantReport: `{"updated": [], "skipped": [], "created": [
			  {"type": "package", "title": "mc", "parameters": ["ensure"], "reason": "create is true"}]}`,
		},
		{
			name: "created resources follow the catalog in data order; updates stay in place",
			catalog: `[{"type": "service", "title": "b", "parameters": {}},
			           {"type": "package", "title": "a", "parameters": {}}]`,
			data: `{"configuration": {"service": {"b": {"x": 1}, "a": {}}, "package": {"z": {}, "a": {"x": 1}}},
			        "configuration_options": {"create": true}}`,
			wantCatalog: `[{"type": "service", "title": "b", "parameters": {"x": 1}},
			               {"type": "package", "title": "a", "parameters": {"x": 1}},
			               {"type": "package", "title": "z", "parameters": {}},
			               {"type": "service", "title": "a", "parameters": {}}]`,
			wantReport: `{"skipped": [],
			  "updated": [{"type": "package", "title": "a", "parameters": ["x"], "reason": "found in the catalog"},
			              {"type": "service", "title": "b", "parameters": ["x"], "reason": "found in the catalog"}],
			  "created": [{"type": "package", "title": "z", "reason": "create is true"},
			              {"type": "service", "title": "a", "reason": "create is true"}]}`,
		},
		{
			name:        "no configuration changes nothing",
			catalog:     `[{"type": "package", "title": "mc", "parameters": {"ensure": "installed"}}]`,
			data:        `{"configuration_options": {"create": true}}`,
			wantCatalog: `[{"type": "package", "title": "mc", "parameters": {"ensure": "installed"}}]`,
			wantReport:  `{"updated": [], "created": [], "skipped": []}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			catalog := mustCatalog(t, tt.catalog)
			before := jsonValue(t, catalog)
			got, err := Apply(catalog, mustParse(t, tt.data), puppetTypes)
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, "catalog", got.Catalog, tt.wantCatalog)
			assertJSON(t, "report", got.Report, tt.wantReport)
			if !reflect.DeepEqual(jsonValue(t, catalog), before) {
				t.Error("Apply modified its input catalog")
			}
			again, err := Apply(got.Catalog, mustParse(t, tt.data), puppetTypes)
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, "catalog after applying the same data twice", again.Catalog, tt.wantCatalog)
		})
	}
}

// TestCreateExceptionTruthTable covers spec 001's exception lists for a
// resource missing from the catalog: with create true they name what must not
// be created, with create false what must be created; either list suffices.
func TestCreateExceptionTruthTable(t *testing.T) {
	tests := []struct {
		create, typeListed, titleListed bool
		wantCreated                     bool
		wantReason                      string
	}{
		{false, false, false, false, "not in the catalog; create is false and neither the type nor the title is a create exception"},
		{false, true, false, true, "create is false but the type is in types_create_exception"},
		{false, false, true, true, "create is false but the title is in titles_create_exception"},
		{false, true, true, true, "create is false but the type is in types_create_exception"},
		{true, false, false, true, "create is true"},
		{true, true, false, false, "not in the catalog; create is true but the type is in types_create_exception"},
		{true, false, true, false, "not in the catalog; create is true but the title is in titles_create_exception"},
		{true, true, true, false, "not in the catalog; create is true but the type is in types_create_exception"},
	}
	listed := func(yes bool, item, other string) string {
		if yes {
			return `["` + other + `", "` + item + `"]`
		}
		return `["` + other + `"]`
	}
	for _, tt := range tests {
		name := strings.NewReplacer("true", "T", "false", "F").Replace(
			jsonString(t, map[string]bool{"create": tt.create, "type_listed": tt.typeListed, "title_listed": tt.titleListed}))
		t.Run(name, func(t *testing.T) {
			data := mustParse(t, `{"configuration": {"package": {"mc": {"ensure": "latest"}}},
			  "configuration_options": {"create": `+jsonString(t, tt.create)+`,
			    "types_create_exception": `+listed(tt.typeListed, "package", "file")+`,
			    "titles_create_exception": `+listed(tt.titleListed, "mc", "htop")+`}}`)
			got, err := Apply(nil, data, puppetTypes)
			if err != nil {
				t.Fatal(err)
			}
			want := ReportEntry{Type: "package", Title: "mc", Reason: tt.wantReason}
			entries, other := got.Report.Skipped, got.Report.Created
			if tt.wantCreated {
				want.Parameters = []string{"ensure"}
				entries, other = got.Report.Created, got.Report.Skipped
			}
			if len(entries) != 1 || len(other) != 0 || !reflect.DeepEqual(entries[0], want) {
				t.Fatalf("report = %+v, want only %+v (created=%v)", got.Report, want, tt.wantCreated)
			}
			if created := len(got.Catalog) == 1; created != tt.wantCreated {
				t.Errorf("catalog has %d resources, want created=%v", len(got.Catalog), tt.wantCreated)
			}

			// A resource already in the catalog is updated whatever the create rules say.
			present, err := Apply([]Resource{{Type: "package", Title: "mc"}}, data, puppetTypes)
			if err != nil {
				t.Fatal(err)
			}
			if len(present.Report.Updated) != 1 || present.Catalog[0].Parameters["ensure"] != "latest" {
				t.Errorf("present resource not updated: %+v", present.Report)
			}
		})
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyRejectsDependencyCycles(t *testing.T) {
	tests := []struct {
		name, catalog, data, wantCycle string
	}{
		{
			name:      "reference: created files notify each other",
			catalog:   `[]`,
			data:      `{"configuration": {"file": {"a": {"notify": "File[b]"}, "b": {"notify": "File[a]"}}}, "configuration_options": {"create": true}}`,
			wantCycle: "File[a] -> File[b] -> File[a]",
		},
		{
			name:      "require both ways",
			catalog:   `[{"type": "file", "title": "a"}, {"type": "file", "title": "b"}]`,
			data:      `{"configuration": {"file": {"a": {"require": "File[b]"}, "b": {"require": ["File[a]"]}}}}`,
			wantCycle: "File[b] -> File[a] -> File[b]",
		},
		{
			name:      "before and require on one resource",
			catalog:   `[{"type": "file", "title": "a"}, {"type": "service", "title": "b"}]`,
			data:      `{"configuration": {"file": {"a": {"before": "Service[b]", "require": "Service[b]"}}}}`,
			wantCycle: "File[a] -> Service[b] -> File[a]",
		},
		{
			name:      "subscribe closes a loop through an untouched resource",
			catalog:   `[{"type": "service", "title": "b", "parameters": {"require": "File[a]"}}, {"type": "file", "title": "a"}]`,
			data:      `{"configuration": {"file": {"a": {"subscribe": "Service[b]"}}}}`,
			wantCycle: "Service[b] -> File[a] -> Service[b]",
		},
		{
			name:      "three created resources in a ring",
			catalog:   `[]`,
			data:      `{"configuration": {"exec": {"x": {"before": "Exec[y]"}, "y": {"before": "Exec[z]"}, "z": {"before": "Exec[x]"}}}, "configuration_options": {"create": true}}`,
			wantCycle: "Exec[x] -> Exec[y] -> Exec[z] -> Exec[x]",
		},
		{
			name:      "a resource before itself",
			catalog:   `[{"type": "file", "title": "a"}]`,
			data:      `{"configuration": {"file": {"a": {"before": "File[a]"}}}}`,
			wantCycle: "File[a] -> File[a]",
		},
		{
			name:      "an edge added to an existing scalar value",
			catalog:   `[{"type": "file", "title": "a", "parameters": {"notify": "Service[b]"}}, {"type": "service", "title": "b"}]`,
			data:      `{"configuration": {"service": {"b": {"notify": "File[a]"}}}}`,
			wantCycle: "Service[b] -> File[a] -> Service[b]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			catalog := mustCatalog(t, tt.catalog)
			before := jsonValue(t, catalog)
			got, err := Apply(catalog, mustParse(t, tt.data), puppetTypes)
			if err == nil {
				t.Fatalf("Apply succeeded with catalog %s", jsonString(t, got.Catalog))
			}
			if got != nil {
				t.Error("Apply returned a result along with the cycle error")
			}
			want := "dependency cycle: " + tt.wantCycle + "; the catalog was left unchanged"
			if !errs.Is(err, errs.Invalid) || errs.Message(err) != want {
				t.Errorf("error = %v (kind %v), want Invalid %q", err, errs.KindOf(err), want)
			}
			if !reflect.DeepEqual(jsonValue(t, catalog), before) {
				t.Error("the input catalog changed")
			}
		})
	}
}

func TestApplyAcceptsAcyclicRelationships(t *testing.T) {
	tests := []struct{ name, catalog, data string }{
		{"before and subscribe name the same direction", `[{"type": "file", "title": "a"}, {"type": "service", "title": "b"}]`,
			`{"configuration": {"file": {"a": {"before": "Service[b]"}}, "service": {"b": {"subscribe": "File[a]"}}}}`},
		{"references to resources outside the catalog", `[{"type": "file", "title": "a"}]`,
			`{"configuration": {"file": {"a": {"require": "Package[missing]", "notify": "Service[missing]"}}}}`},
		{"a cycle already in the catalog among untouched resources", `[
			{"type": "file", "title": "x", "parameters": {"before": "File[y]"}},
			{"type": "file", "title": "y", "parameters": {"before": "File[x]"}},
			{"type": "file", "title": "a"}]`,
			`{"configuration": {"file": {"a": {"require": "Package[z]"}}}}`},
		{"a diamond", `[]`,
			`{"configuration": {"exec": {"top": {"before": ["Exec[l]", "Exec[r]"]}, "l": {"before": "Exec[bottom]"}, "r": {"notify": "Exec[bottom]"}, "bottom": {}}},
			  "configuration_options": {"create": true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Apply(mustCatalog(t, tt.catalog), mustParse(t, tt.data), puppetTypes); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCreatedResourcesDependOnEachOther checks the reference example's edge File -> Service.
func TestCreatedResourcesDependOnEachOther(t *testing.T) {
	got, err := Apply(nil, mustParse(t, `{"configuration": {"file": {"/etc/httpd/httpd.conf": {"notify": "Service[httpd]"}}, "service": {"httpd": {}}}}`), puppetTypes)
	if err != nil {
		t.Fatal(err)
	}
	index, err := indexCatalog(got.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newDependencyGraph(got.Catalog, index)
	if err != nil {
		t.Fatal(err)
	}
	file, service := index[Ref{"file", "/etc/httpd/httpd.conf"}], index[Ref{"service", "httpd"}]
	if want := [][]int{{service}, nil}; !reflect.DeepEqual(g.next, want) {
		t.Errorf("dependencies = %v, want File[%d] -> Service[%d] only", g.next, file, service)
	}
}

func TestCatalogErrors(t *testing.T) {
	tests := []struct{ name, catalog, want string }{
		{"not JSON", `[`, "catalog: not valid JSON: unexpected EOF"},
		{"not a list", `{"type": "file"}`, "catalog: must be a list of resources"},
		{"item not an object", `[{"type": "file", "title": "a"}, "File[b]"]`, "catalog[1]: must be an object with type, title and parameters"},
		{"type not a string", `[{"type": 1, "title": "a"}]`, "catalog[0].type: must be a string"},
		{"title not a string", `[{"type": "file", "title": null}]`, "catalog[0].title: must be a string"},
		{"parameters not a map", `[{"type": "file", "title": "a", "parameters": []}]`, "catalog[0].parameters: must be a map"},
		{"unknown field", `[{"type": "file", "title": "a", "tags": []}]`, "catalog[0].tags: unknown field; a resource has type, title and parameters"},
		{"missing type", `[{"title": "a"}]`, `catalog[0].type: "" is not a valid resource type name`},
		{"empty title", `[{"type": "file", "title": ""}]`, "catalog[0].title: resource title must not be empty"},
		{"duplicate resource", `[{"type": "Package", "title": "mc"}, {"type": "file", "title": "a"}, {"type": "package", "title": "mc"}]`,
			"catalog[2]: duplicate resource Package[mc] (first at catalog[0])"},
		{"bad reference", `[{"type": "file", "title": "a", "parameters": {"notify": ["Service[a]", "b"]}}]`,
			`catalog[0].parameters.notify[1]: "b" is not a resource reference like Service[httpd]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			catalog, err := ParseCatalog([]byte(tt.catalog))
			if err == nil {
				_, err = Apply(catalog, &Data{}, puppetTypes)
			}
			if !errs.Is(err, errs.Invalid) || errs.Message(err) != tt.want {
				t.Errorf("error = %v, want Invalid %q", err, tt.want)
			}
		})
	}
}

// TestUnknownTypes covers spec 001's "The resource generator raises an error
// if the resource defined in data structure is not found within modulepath":
// the caller names the types that exist, or the report says what went unchecked.
func TestUnknownTypes(t *testing.T) {
	data := mustParse(t, `{"configuration": {"file": {"/tmp/a": {"content": "a"}}, "no_such_type_xyz": {"x": {"p": 1}},
	  "service": {"ntpd": {"ensure": "running"}}}}`)
	catalog := []Resource{{Type: "Service", Title: "ntpd"}}

	_, err := Apply(catalog, data, []string{"file"})
	want := "No_such_type_xyz[x]: unknown resource type no_such_type_xyz: it is not in the catalog nor among the known types; nothing was applied"
	if !errs.Is(err, errs.Invalid) || errs.Message(err) != want {
		t.Errorf("known types without it: error %v, want Invalid %q", err, want)
	}

	t.Run("a type in the catalog is known; a filtered-out entry is not checked", func(t *testing.T) {
		filtered := *data
		filtered.Options.TypesFilter = []string{"file", "service"}
		got, err := Apply(catalog, &filtered, []string{})
		if err == nil || !strings.Contains(errs.Message(err), "File[/tmp/a]: unknown resource type file") {
			t.Fatalf("empty known types: error %v, want File[/tmp/a] unknown", err)
		}
		if got, err = Apply(catalog, &filtered, []string{"FILE"}); err != nil {
			t.Fatal(err)
		}
		if len(got.Report.Created) != 1 || len(got.Report.Updated) != 1 || got.Report.UncheckedTypes != nil {
			t.Errorf("report = %+v", got.Report)
		}
	})

	t.Run("create false: an unknown type is still an error", func(t *testing.T) {
		noCreate := *data
		noCreate.Options.Create = false
		if _, err := Apply(catalog, &noCreate, []string{"file"}); err == nil || !strings.Contains(errs.Message(err), "No_such_type_xyz[x]") {
			t.Errorf("error %v, want No_such_type_xyz[x] unknown", err)
		}
	})

	t.Run("no known types: created, and the report names the unchecked types", func(t *testing.T) {
		got, err := Apply(catalog, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"file", "no_such_type_xyz"}; !reflect.DeepEqual(got.Report.UncheckedTypes, want) {
			t.Errorf("unchecked_types = %v, want %v", got.Report.UncheckedTypes, want)
		}
		if len(got.Report.Created) != 2 {
			t.Errorf("created = %+v", got.Report.Created)
		}
	})
}
