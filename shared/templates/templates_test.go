package templates_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/templates"
)

func newService(t *testing.T) *templates.Service {
	t.Helper()
	b := mem.New()
	return templates.NewService(b.Index)
}

const mirrorDoc = `{
  "name": "CUSTOM_BM_CONFIG_RAID_DISK_MIRROR",
  "steps": [{"interface": "raid", "step": "create_configuration",
             "args": {"logical_disks": [{"size_gb": "MAX", "raid_level": "1", "is_root_volume": true}], "delete_configuration": true},
             "priority": 10}]
}`

func mustCreate(t *testing.T, s *templates.Service, doc string) templates.Template {
	t.Helper()
	tpl, err := s.Create(context.Background(), []byte(doc))
	if err != nil {
		t.Fatalf("create %s: %v", doc, err)
	}
	return tpl
}

// step builds a step document; priority is raw JSON so strings can be tested.
func step(iface, name, priority string) string {
	return fmt.Sprintf(`{"interface":%q,"step":%q,"args":{},"priority":%s}`, iface, name, priority)
}

func doc(name string, steps ...string) string {
	return fmt.Sprintf(`{"name":%q,"steps":[%s]}`, name, strings.Join(steps, ","))
}

func TestCreateValidation(t *testing.T) {
	ok := step("deploy", "x", "1")
	for _, tc := range []struct {
		name string
		doc  string
		want string // substring of the error; "" = valid
	}{
		{"spec example", mirrorDoc, ""},
		{"standard trait name", doc("HW_CPU_X86_VMX", ok), ""},
		{"255 characters", doc("CUSTOM_"+strings.Repeat("A", 248), ok), ""},
		{"256 characters", doc("CUSTOM_"+strings.Repeat("A", 249), ok), "longer than 255"},
		{"lowercase name", doc("CUSTOM_lower", ok), "custom trait"},
		{"bare CUSTOM_", doc("CUSTOM_", ok), "custom trait"},
		{"name not a trait", doc("my-template", ok), "must match"},
		{"missing name", `{"steps":[` + ok + `]}`, "name is required"},
		{"missing steps", `{"name":"CUSTOM_A"}`, "steps is required"},
		{"empty steps", doc("CUSTOM_A"), "at least one step"},
		{"steps not a list", `{"name":"CUSTOM_A","steps":{}}`, "array of steps"},
		{"extra property", `{"name":"CUSTOM_A","steps":[` + ok + `],"foo":1}`, `unknown property "foo"`},
		{"valid uuid", `{"uuid":"8221f906-208b-44a5-b575-f8e8a59c4a84","name":"CUSTOM_A","steps":[` + ok + `]}`, ""},
		{"bad uuid", `{"uuid":"not-a-uuid","name":"CUSTOM_A","steps":[` + ok + `]}`, "Invalid uuid not-a-uuid"},
		{"extra object", `{"name":"CUSTOM_A","steps":[` + ok + `],"extra":{"a":1}}`, ""},
		{"extra not object", `{"name":"CUSTOM_A","steps":[` + ok + `],"extra":[1]}`, "extra must be an object"},
		{"bad interface", doc("CUSTOM_A", step("network", "x", "1")), "interface must be one of"},
		{"empty step name", doc("CUSTOM_A", step("deploy", "", "1")), "step must be a non-empty string"},
		{"string priority", doc("CUSTOM_A", step("deploy", "x", `"10"`)), ""},
		{"zero priority", doc("CUSTOM_A", step("deploy", "x", "0")), ""},
		{"negative priority", doc("CUSTOM_A", step("deploy", "x", "-1")), "priority must be an integer"},
		{"fractional priority", doc("CUSTOM_A", step("deploy", "x", "1.5")), "priority must be an integer"},
		{"non-digit string priority", doc("CUSTOM_A", step("deploy", "x", `"ten"`)), "priority must be an integer"},
		{"huge priority", doc("CUSTOM_A", step("deploy", "x", "99999999999")), "too large"},
		{"missing args", doc("CUSTOM_A", `{"interface":"deploy","step":"x","priority":1}`), "args must be an object"},
		{"args not object", doc("CUSTOM_A", `{"interface":"deploy","step":"x","args":[],"priority":1}`), "args must be an object"},
		{"missing priority", doc("CUSTOM_A", `{"interface":"deploy","step":"x","args":{}}`), "priority is required"},
		{"extra step property", doc("CUSTOM_A", `{"interface":"deploy","step":"x","args":{},"priority":1,"when":2}`), `unknown property "when"`},
		{"the same step twice (spec 003: to partition multiple disks)", doc("CUSTOM_A", step("raid", "create_configuration", "1"), step("raid", "create_configuration", "2")), ""},
		{"the core step with a priority", doc("CUSTOM_A", step("raid", "x", "1"), step("deploy", "deploy", "50")),
			"steps[1]: the core step deploy.deploy may only be disabled (priority 0), not given priority 50"},
		{"the core step disabled", doc("CUSTOM_A", step("deploy", "deploy", "0")), ""},
		{"same step other interface", doc("CUSTOM_A", step("raid", "apply", "1"), step("bios", "apply", "2")), ""},
		{"not an object", `[]`, "must be a JSON object"},
		{"every problem reported", `{"name":"x","steps":[]}`, "must match ^CUSTOM_[A-Z0-9_]+$ or be a standard trait (A-Z, 0-9, _); steps must contain at least one step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newService(t)
			got, err := s.Create(context.Background(), []byte(tc.doc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if !ident.IsUUID(got.UUID) || len(got.Steps) == 0 || got.CreatedAt.IsZero() || got.UpdatedAt != nil {
					t.Fatalf("created %+v", got)
				}
				return
			}
			if !errs.Is(err, errs.Invalid) || !strings.Contains(errs.Message(err), tc.want) {
				t.Fatalf("err = %v, want Invalid containing %q", err, tc.want)
			}
		})
	}
}

func TestCreateKeepsStepsAndNormalisesPriority(t *testing.T) {
	s := newService(t)
	tpl := mustCreate(t, s, doc("CUSTOM_A", `{"interface":"bios","step":"apply_configuration","args":{"settings":[{"name":"VMX","value":"on"}], "big": 12345678901234567890},"priority":"150"}`))
	st := tpl.Steps[0]
	if st.Priority != 150 || string(st.Args) != `{"settings":[{"name":"VMX","value":"on"}],"big":12345678901234567890}` || string(tpl.Extra) != "{}" {
		t.Fatalf("step %+v extra %s", st, tpl.Extra)
	}
}

func TestConflictsAndLookup(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	tpl := mustCreate(t, s, mirrorDoc)
	_, err := s.Create(ctx, []byte(mirrorDoc))
	if !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "name") {
		t.Errorf("duplicate name: %v", err)
	}
	_, err = s.Create(ctx, []byte(`{"uuid":"`+strings.ToUpper(tpl.UUID)+`",`+doc("CUSTOM_OTHER", step("deploy", "x", "1"))[1:]))
	if !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "uuid") {
		t.Errorf("duplicate uuid: %v", err)
	}
	for _, ref := range []string{tpl.UUID, strings.ToUpper(tpl.UUID), tpl.Name} {
		if got, err := s.Get(ctx, ref); err != nil || got.UUID != tpl.UUID {
			t.Errorf("Get(%q) = %v, %v", ref, got.UUID, err)
		}
	}
	for _, ref := range []string{"CUSTOM_NOPE", "8221f906-208b-44a5-b575-f8e8a59c4a84"} {
		if _, err := s.Get(ctx, ref); !errs.Is(err, errs.NotFound) {
			t.Errorf("Get(%q): %v, want NotFound", ref, err)
		}
	}
	if err := s.Delete(ctx, tpl.Name); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, tpl.UUID); !errs.Is(err, errs.NotFound) {
		t.Errorf("second delete: %v", err)
	}
	// The name and uuid are free again.
	mustCreate(t, s, `{"uuid":"`+tpl.UUID+`",`+mirrorDoc[1:])
}

func TestList(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	uuids := []string{
		"cccccccc-0000-4000-8000-000000000000",
		"aaaaaaaa-0000-4000-8000-000000000000",
		"bbbbbbbb-0000-4000-8000-000000000000",
	}
	names := []string{"CUSTOM_B", "CUSTOM_C", "CUSTOM_A"}
	for i := range names {
		mustCreate(t, s, fmt.Sprintf(`{"uuid":%q,"name":%q,"steps":[%s]}`, uuids[i], names[i], step("deploy", "x", "1")))
	}
	if _, err := s.Patch(ctx, "CUSTOM_B", []byte(`[{"op":"add","path":"/extra/touched","value":true}]`)); err != nil {
		t.Fatal(err)
	}
	namesOf := func(ts []templates.Template) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		opts templates.ListOptions
		want string
		err  string
	}{
		{templates.ListOptions{}, "CUSTOM_B,CUSTOM_C,CUSTOM_A", ""},
		{templates.ListOptions{SortDir: "desc"}, "CUSTOM_A,CUSTOM_C,CUSTOM_B", ""},
		{templates.ListOptions{SortKey: "name"}, "CUSTOM_A,CUSTOM_B,CUSTOM_C", ""},
		{templates.ListOptions{SortKey: "name", SortDir: "desc"}, "CUSTOM_C,CUSTOM_B,CUSTOM_A", ""},
		{templates.ListOptions{SortKey: "uuid"}, "CUSTOM_C,CUSTOM_A,CUSTOM_B", ""},
		{templates.ListOptions{SortKey: "created_at"}, "CUSTOM_B,CUSTOM_C,CUSTOM_A", ""},
		{templates.ListOptions{SortKey: "updated_at"}, "CUSTOM_C,CUSTOM_A,CUSTOM_B", ""},
		{templates.ListOptions{Limit: 2}, "CUSTOM_B,CUSTOM_C", ""},
		{templates.ListOptions{Limit: 2, Marker: uuids[1]}, "CUSTOM_A", ""},
		{templates.ListOptions{SortKey: "name", Limit: 1, Marker: uuids[2]}, "CUSTOM_B", ""},
		{templates.ListOptions{Marker: uuids[2]}, "", ""},
		{templates.ListOptions{Marker: "dddddddd-0000-4000-8000-000000000000"}, "", "marker"},
		{templates.ListOptions{SortKey: "steps"}, "", "invalid field for sorting"},
		{templates.ListOptions{SortKey: "extra"}, "", "invalid field for sorting"},
		{templates.ListOptions{SortKey: "color"}, "", "unknown sort_key"},
		{templates.ListOptions{SortDir: "up"}, "", "sort direction"},
		{templates.ListOptions{Limit: -1}, "", "limit"},
	} {
		got, err := s.List(ctx, tc.opts)
		if tc.err != "" {
			if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("List(%+v) err = %v, want Invalid %q", tc.opts, err, tc.err)
			}
			continue
		}
		if err != nil || namesOf(got) != tc.want {
			t.Errorf("List(%+v) = %s, %v; want %s", tc.opts, namesOf(got), err, tc.want)
		}
	}
}

func TestPatch(t *testing.T) {
	two := doc("CUSTOM_A", step("raid", "delete_configuration", "5"), step("raid", "create_configuration", "10"))
	for _, tc := range []struct {
		name  string
		patch string
		check func(templates.Template) string // returns a complaint, "" when fine
		kind  errs.Kind
		err   string
	}{
		{name: "rename", patch: `[{"op":"replace","path":"/name","value":"CUSTOM_RENAMED"}]`,
			check: func(t templates.Template) string { return want(t.Name, "CUSTOM_RENAMED") }},
		{name: "replace steps", patch: `[{"op":"replace","path":"/steps","value":[` + step("bios", "apply", `"3"`) + `]}]`,
			check: func(t templates.Template) string {
				return want(fmt.Sprintf("%d %s %d", len(t.Steps), t.Steps[0].Name(), t.Steps[0].Priority), "1 bios.apply 3")
			}},
		{name: "append step", patch: `[{"op":"add","path":"/steps/-","value":` + step("bios", "apply", "1") + `}]`,
			check: func(t templates.Template) string { return want(fmt.Sprint(len(t.Steps)), "3") }},
		{name: "insert at end index", patch: `[{"op":"add","path":"/steps/2","value":` + step("bios", "apply", "1") + `}]`,
			check: func(t templates.Template) string { return want(t.Steps[2].Name(), "bios.apply") }},
		{name: "remove step", patch: `[{"op":"remove","path":"/steps/0"}]`,
			check: func(t templates.Template) string { return want(t.Steps[0].Name(), "raid.create_configuration") }},
		{name: "nested step field", patch: `[{"op":"replace","path":"/steps/1/priority","value":"42"}]`,
			check: func(t templates.Template) string { return want(fmt.Sprint(t.Steps[1].Priority), "42") }},
		{name: "extra key", patch: `[{"op":"add","path":"/extra/owner","value":"ops"}]`,
			check: func(t templates.Template) string { return want(string(t.Extra), `{"owner":"ops"}`) }},
		{name: "ops in order", patch: `[{"op":"add","path":"/extra/a","value":1},{"op":"remove","path":"/extra/a"},{"op":"add","path":"/extra/b","value":2}]`,
			check: func(t templates.Template) string { return want(string(t.Extra), `{"b":2}`) }},
		{name: "uuid", patch: `[{"op":"replace","path":"/uuid","value":"8221f906-208b-44a5-b575-f8e8a59c4a84"}]`, kind: errs.Invalid, err: "/uuid cannot be changed"},
		{name: "new root attribute", patch: `[{"op":"add","path":"/color","value":"red"}]`, kind: errs.Invalid, err: "cannot patch /color"},
		{name: "read-only attribute", patch: `[{"op":"replace","path":"/created_at","value":"x"}]`, kind: errs.Invalid, err: "cannot patch /created_at"},
		{name: "move op", patch: `[{"op":"move","from":"/steps/0","path":"/steps/1"}]`, kind: errs.Invalid, err: `op "move" is not supported`},
		{name: "test op", patch: `[{"op":"test","path":"/name","value":"CUSTOM_A"}]`, kind: errs.Invalid, err: `op "test" is not supported`},
		{name: "add beyond end", patch: `[{"op":"add","path":"/steps/3","value":` + step("bios", "apply", "1") + `}]`, kind: errs.Invalid, err: "out of range"},
		{name: "remove beyond end", patch: `[{"op":"remove","path":"/steps/2"}]`, kind: errs.Invalid, err: "cannot apply patch"},
		{name: "negative index", patch: `[{"op":"remove","path":"/steps/-1"}]`, kind: errs.Invalid, err: "cannot apply patch"},
		{name: "remove missing extra key", patch: `[{"op":"remove","path":"/extra/nope"}]`, kind: errs.Invalid, err: "cannot apply patch"},
		{name: "result invalid: bad name", patch: `[{"op":"replace","path":"/name","value":"lower"}]`, kind: errs.Invalid, err: "name:"},
		{name: "result invalid: no name", patch: `[{"op":"remove","path":"/name"}]`, kind: errs.Invalid, err: "name is required"},
		{name: "result invalid: no steps", patch: `[{"op":"remove","path":"/steps/0"},{"op":"remove","path":"/steps/0"}]`, kind: errs.Invalid, err: "at least one step"},
		{name: "result invalid: the core step raised", patch: `[{"op":"add","path":"/steps/-","value":` + step("deploy", "deploy", "1") + `}]`, kind: errs.Invalid, err: "the core step deploy.deploy may only be disabled"},
		{name: "result invalid: extra", patch: `[{"op":"replace","path":"/extra","value":"x"}]`, kind: errs.Invalid, err: "extra must be an object"},
		{name: "name clash", patch: `[{"op":"replace","path":"/name","value":"CUSTOM_TAKEN"}]`, kind: errs.Conflict, err: "CUSTOM_TAKEN already exists"},
		{name: "not a patch", patch: `{"op":"replace"}`, kind: errs.Invalid, err: "JSON Patch"},
		{name: "empty patch", patch: `[]`, kind: errs.Invalid, err: "no operations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newService(t)
			ctx := context.Background()
			orig := mustCreate(t, s, two)
			mustCreate(t, s, doc("CUSTOM_TAKEN", step("deploy", "x", "1")))
			got, err := s.Patch(ctx, orig.UUID, []byte(tc.patch))
			if tc.check == nil {
				if !errs.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want kind %v containing %q", err, tc.kind, tc.err)
				}
				if after, _ := s.Get(ctx, orig.UUID); after.Name != orig.Name || len(after.Steps) != 2 || after.UpdatedAt != nil {
					t.Fatalf("failed patch changed the template: %+v", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(got); msg != "" {
				t.Fatal(msg)
			}
			stored, err := s.Get(ctx, got.Name)
			if err != nil || stored.UUID != orig.UUID || stored.UpdatedAt == nil {
				t.Fatalf("stored %+v, %v", stored, err)
			}
			if msg := tc.check(stored); msg != "" {
				t.Fatal("stored: " + msg)
			}
		})
	}
}

func want(got, expected string) string {
	if got != expected {
		return fmt.Sprintf("got %s, want %s", got, expected)
	}
	return ""
}

func TestPatchRenameFreesOldName(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	mustCreate(t, s, mirrorDoc)
	if _, err := s.Patch(ctx, "CUSTOM_BM_CONFIG_RAID_DISK_MIRROR", []byte(`[{"op":"replace","path":"/name","value":"CUSTOM_NEW"}]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "CUSTOM_BM_CONFIG_RAID_DISK_MIRROR"); !errs.Is(err, errs.NotFound) {
		t.Errorf("old name still resolves: %v", err)
	}
	mustCreate(t, s, mirrorDoc)
}

func TestPatchWithoutChangeKeepsUpdatedAt(t *testing.T) {
	s := newService(t)
	tpl := mustCreate(t, s, mirrorDoc)
	got, err := s.Patch(context.Background(), tpl.UUID, []byte(`[{"op":"replace","path":"/name","value":"`+tpl.Name+`"}]`))
	if err != nil || got.UpdatedAt != nil {
		t.Fatalf("no-op patch: %+v, %v", got, err)
	}
}

func TestMasked(t *testing.T) {
	s := newService(t)
	tpl := mustCreate(t, s, doc("CUSTOM_A", `{"interface":"management","step":"set_creds","priority":1,
		"args":{"user":"admin","password":"hunter2","nested":{"Admin_Password":"x","list":[{"auth_token":"t","keep":1}]},"ssh_private_key":"k","count":3}}`))
	masked := tpl.Masked()
	var args map[string]any
	if err := json.Unmarshal(masked.Steps[0].Args, &args); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(args)
	const expected = `{"count":3,"nested":{"Admin_Password":"******","list":[{"auth_token":"******","keep":1}]},"password":"******","ssh_private_key":"******","user":"admin"}`
	if string(got) != expected {
		t.Errorf("masked args %s\nwant %s", got, expected)
	}
	if !strings.Contains(string(tpl.Steps[0].Args), "hunter2") {
		t.Error("Masked changed the original template")
	}
	if stored, _ := s.Get(context.Background(), "CUSTOM_A"); !strings.Contains(string(stored.Steps[0].Args), "hunter2") {
		t.Error("masking reached the store")
	}
}
