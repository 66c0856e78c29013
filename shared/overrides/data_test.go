package overrides

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

func TestParseRejectsMalformedData(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not JSON", `{"configuration":`, "override data is not valid JSON: unexpected EOF"},
		{"trailing data", `{} {}`, "override data is not valid JSON: data after the JSON document"},
		{"document not a map", `[]`, "override data must be an object with configuration and configuration_options"},
		{"unknown top-level key", `{"configuraton": {}}`, "configuraton: unknown key; override data has only configuration and configuration_options"},
		{"configuration a list", `{"configuration": []}`, "configuration: Configuration data should contain a resources hash!"},
		{"configuration a string", `{"configuration": "package"}`, "configuration: Configuration data should contain a resources hash!"},
		{"configuration null", `{"configuration": null}`, "configuration: Configuration data should contain a resources hash!"},
		{"empty type", `{"configuration": {"": {"mc": {}}}}`, `configuration[""]: resource type must not be empty`},
		{"bad type name", `{"configuration": {"my type": {"mc": {}}}}`, `configuration["my type"]: "my type" is not a valid resource type name`},
		{"type names differ only in case", `{"configuration": {"Package": {"a": {}}, "package": {"b": {}}}}`, `configuration.package: resource type duplicates "Package" (type names are case-insensitive)`},
		{"titles not a map", `{"configuration": {"package": ["mc"]}}`, "configuration.package: titles must be a map of resource titles to parameters"},
		{"empty title", `{"configuration": {"package": {"": {}}}}`, `configuration.package[""]: resource title must not be empty`},
		{"params a string", `{"configuration": {"package": {"mc": "absent"}}}`, "configuration.package.mc: parameters must be a map"},
		{"params null", `{"configuration": {"package": {"mc": null}}}`, "configuration.package.mc: parameters must be a map"},
		{"params of a title with a slash", `{"configuration": {"file": {"/etc/motd": 1}}}`, `configuration.file["/etc/motd"]: parameters must be a map`},
		{"empty parameter name", `{"configuration": {"package": {"mc": {"": 1}}}}`, `configuration.package.mc[""]: parameter name must not be empty`},
		{"notify not a reference", `{"configuration": {"file": {"a": {"notify": "httpd"}}}}`, `configuration.file.a.notify: "httpd" is not a resource reference like Service[httpd]`},
		{"require a number", `{"configuration": {"file": {"a": {"require": 3}}}}`, "configuration.file.a.require: must be a resource reference like Service[httpd] or a list of them"},
		{"before list with a number", `{"configuration": {"file": {"a": {"before": ["Service[x]", 1]}}}}`, "configuration.file.a.before[1]: must be a resource reference string like Service[httpd]"},
		{"subscribe list with an empty title", `{"configuration": {"file": {"a": {"subscribe": ["Service[]"]}}}}`, `configuration.file.a.subscribe[0]: "Service[]" is not a resource reference like Service[httpd]`},
		{"options a list", `{"configuration_options": []}`, "configuration_options: options must be a map"},
		{"unknown option", `{"configuration_options": {"creat": true}}`, "configuration_options.creat: unknown option"},
		{"create a string", `{"configuration_options": {"create": "yes"}}`, "configuration_options.create: must be true or false"},
		{"types_filter a string", `{"configuration_options": {"types_filter": "package"}}`, "configuration_options.types_filter: must be a list of resource types"},
		{"types_filter bad item", `{"configuration_options": {"types_filter": ["package", "a b"]}}`, "configuration_options.types_filter[1]: must be a resource type name such as package"},
		{"titles_filter bad item", `{"configuration_options": {"titles_filter": ["mc", ""]}}`, "configuration_options.titles_filter[1]: must be a non-empty string"},
		{"types_create_exception not a list", `{"configuration_options": {"types_create_exception": {}}}`, "configuration_options.types_create_exception: must be a list of resource types"},
		{"titles_create_exception not a list", `{"configuration_options": {"titles_create_exception": null}}`, "configuration_options.titles_create_exception: must be a list of resource titles"},
		{"defaults a list", `{"configuration_options": {"defaults": []}}`, "configuration_options.defaults: Defaults data should contain a defaults hash!"},
		{"defaults params not a map", `{"configuration_options": {"defaults": {"package": "present"}}}`, "configuration_options.defaults.package: parameters must be a map"},
		{"defaults bad metaparameter", `{"configuration_options": {"defaults": {"service": {"require": "x"}}}}`, `configuration_options.defaults.service.require: "x" is not a resource reference like Service[httpd]`},
		{"defaults empty type", `{"configuration_options": {"defaults": {"": {}}}}`, `configuration_options.defaults[""]: resource type must not be empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			if err == nil {
				t.Fatalf("Parse(%s) succeeded, want error %q", tt.doc, tt.want)
			}
			if !errs.Is(err, errs.Invalid) {
				t.Errorf("error kind = %v, want Invalid", errs.KindOf(err))
			}
			if !strings.HasPrefix(errs.Message(err), tt.want) {
				t.Errorf("error = %q, want it to start with %q", errs.Message(err), tt.want)
			}
			if ValidateData([]byte(tt.doc)) == nil {
				t.Error("ValidateData accepted what Parse rejects")
			}
		})
	}
}

func TestParseValidData(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want *Data
	}{
		{"empty document: create defaults to true (spec 001)", `{}`, &Data{Options: Options{Create: true}}},
		{"options only (a level may hold just these)", `{"configuration_options": {"create": false}}`, &Data{Options: Options{Create: false}}},
		{"options without create keep its default", `{"configuration_options": {"types_filter": []}}`,
			&Data{Options: Options{Create: true, TypesFilter: []string{}}}},
		{
			name: "entries sorted by type then title, types lower-cased",
			doc: `{"configuration": {"Service": {"httpd": {}}, "package": {"mc": {"ensure": "absent"}, "fontconfig-config": {"ensure": "latest"}}},
			       "configuration_options": {"create": false, "types_filter": ["Package"], "titles_filter": ["mc"],
			         "types_create_exception": ["File"], "titles_create_exception": ["/etc/motd"],
			         "defaults": {"Package": {"ensure": "present"}}}}`,
			want: &Data{
				Resources: []Override{
					{Ref{"package", "fontconfig-config"}, map[string]any{"ensure": "latest"}},
					{Ref{"package", "mc"}, map[string]any{"ensure": "absent"}},
					{Ref{"service", "httpd"}, map[string]any{}},
				},
				Options: Options{
					TypesFilter: []string{"package"}, TitlesFilter: []string{"mc"},
					TypesCreateException: []string{"file"}, TitlesCreateException: []string{"/etc/motd"},
					Defaults: map[string]map[string]any{"package": {"ensure": "present"}},
				},
			},
		},
		{
			name: "metaparameters as one reference or a list",
			doc:  `{"configuration": {"file": {"a": {"notify": "Service[httpd]", "require": ["Package[httpd]", "Nova_config[DEFAULT/debug]"], "before": []}}}}`,
			want: &Data{Resources: []Override{{Ref{"file", "a"}, map[string]any{
				"notify": "Service[httpd]", "require": []any{"Package[httpd]", "Nova_config[DEFAULT/debug]"}, "before": []any{},
			}}}, Options: DefaultOptions()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestRefString(t *testing.T) {
	tests := map[Ref]string{
		{"service", "httpd"}:             "Service[httpd]",
		{"nova_config", "DEFAULT/debug"}: "Nova_config[DEFAULT/debug]",
		{"foo::bar", "x"}:                "Foo::Bar[x]",
	}
	for ref, want := range tests {
		if got := ref.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", ref, got, want)
		}
		if back, ok := parseRef(want); !ok || back != ref {
			t.Errorf("parseRef(%q) = %#v, %v", want, back, ok)
		}
	}
}
