package templates_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/templates"
)

func st(iface, name string, priority int) templates.Step {
	return templates.Step{Interface: iface, Step: name, Args: json.RawMessage(`{}`), Priority: priority}
}

func tpl(name string, steps ...templates.Step) templates.Template {
	return templates.Template{Name: name, Steps: steps}
}

func render(steps []templates.Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, fmt.Sprintf("%s %d", s.Step, s.Priority))
	}
	return strings.Join(out, ", ")
}

// The worked example of the reference: defaults [deploy_start 50, power_one 40,
// deploy_middle 40, deploy_end 20] + a template {deploy_start 200, power_one 100}.
var (
	exampleDefaults = []templates.Step{
		st("deploy", "deploy_start", 50), st("power", "power_one", 40),
		st("deploy", "deploy_middle", 40), st("deploy", "deploy_end", 20),
	}
	exampleTemplate = tpl("CUSTOM_EXAMPLE", st("deploy", "deploy_start", 200), st("power", "power_one", 100))
)

func TestMerge(t *testing.T) {
	byName := func(ts ...templates.Template) map[string]templates.Template {
		m := map[string]templates.Template{}
		for _, t := range ts {
			m[t.Name] = t
		}
		return m
	}
	for _, tc := range []struct {
		name           string
		defaults       []templates.Step
		templates      map[string]templates.Template
		nodeTraits     []string
		instanceTraits []string
		want           string
		err            string
	}{
		{
			name: "reference example", defaults: exampleDefaults, templates: byName(exampleTemplate),
			nodeTraits: []string{"CUSTOM_EXAMPLE"}, instanceTraits: []string{"CUSTOM_EXAMPLE"},
			want: "deploy_start 200, power_one 100, deploy_middle 40, deploy_end 20",
		},
		{
			name: "defaults only: equal priority orders power before deploy", defaults: exampleDefaults,
			want: "deploy_start 50, power_one 40, deploy_middle 40, deploy_end 20",
		},
		{
			name:     "interface rank breaks ties, then given order",
			defaults: []templates.Step{st("raid", "r", 10), st("bios", "b", 10), st("deploy", "d2", 10), st("deploy", "d1", 10), st("management", "m", 10), st("power", "p", 10)},
			want:     "p 10, m 10, d2 10, d1 10, b 10, r 10",
		},
		{
			name: "priority 0 defaults do not run; a template enables one", defaults: []templates.Step{st("deploy", "deploy", 100), st("raid", "create_configuration", 0), st("bios", "apply_configuration", 0)},
			templates:  byName(tpl("CUSTOM_RAID", st("raid", "create_configuration", 80))),
			nodeTraits: []string{"CUSTOM_RAID"}, instanceTraits: []string{"CUSTOM_RAID"},
			want: "deploy 100, create_configuration 80",
		},
		{
			name: "a template disables a default and the core step", defaults: []templates.Step{st("deploy", "deploy", 100), st("deploy", "write_image", 80)},
			templates:  byName(tpl("CUSTOM_OFF", st("deploy", "write_image", 0), st("deploy", "deploy", 0))),
			nodeTraits: []string{"CUSTOM_OFF"}, instanceTraits: []string{"CUSTOM_OFF"},
			want: "",
		},
		{
			name: "two templates add different steps", defaults: exampleDefaults,
			templates:  byName(tpl("CUSTOM_BIOS", st("bios", "apply_configuration", 60)), tpl("CUSTOM_RAID", st("raid", "create_configuration", 60))),
			nodeTraits: []string{"CUSTOM_RAID", "CUSTOM_BIOS", "CUSTOM_IGNORED"}, instanceTraits: []string{"CUSTOM_RAID", "CUSTOM_BIOS"},
			want: "apply_configuration 60, create_configuration 60, deploy_start 50, power_one 40, deploy_middle 40, deploy_end 20",
		},
		{
			name: "instance traits without a template only schedule", defaults: exampleDefaults,
			nodeTraits: []string{"CUSTOM_CLASS_A"}, instanceTraits: []string{"CUSTOM_CLASS_A", "CUSTOM_CLASS_A"},
			want: "deploy_start 50, power_one 40, deploy_middle 40, deploy_end 20",
		},
		{
			name: "templates of traits not requested are ignored", defaults: exampleDefaults, templates: byName(exampleTemplate),
			nodeTraits: []string{"CUSTOM_EXAMPLE"},
			want:       "deploy_start 50, power_one 40, deploy_middle 40, deploy_end 20",
		},
		{
			name: "every problem joined", defaults: exampleDefaults,
			templates: byName(
				tpl("CUSTOM_A", st("raid", "create_configuration", 10), st("deploy", "deploy", 50)),
				tpl("CUSTOM_B", st("raid", "create_configuration", 20)),
			),
			nodeTraits: []string{"CUSTOM_A", "CUSTOM_B"}, instanceTraits: []string{"CUSTOM_A", "CUSTOM_MISSING", "CUSTOM_B", "bad"},
			err: "instance trait CUSTOM_MISSING is not a trait of the node; " +
				`instance trait: trait name "bad" must match ^CUSTOM_[A-Z0-9_]+$ or be a standard trait (A-Z, 0-9, _); ` +
				"template CUSTOM_A: the core step deploy.deploy may only be disabled (priority 0), not given priority 50",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := templates.Merge(tc.defaults, tc.templates, tc.nodeTraits, tc.instanceTraits)
			if tc.err != "" {
				if !errs.Is(err, errs.Invalid) || errs.Message(err) != tc.err {
					t.Fatalf("err = %v\nwant Invalid %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if render(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", render(got), tc.want)
			}
		})
	}
}

// TestMergeRepeatedSteps: spec 003 "It is acceptable to request the same
// deploy step more than once ... for example to partition multiple disks".
// Each occurrence runs with its own args; equal priorities keep the order of
// the instance traits, then of each template's steps.
func TestMergeRepeatedSteps(t *testing.T) {
	disk := func(priority int, dev string) templates.Step {
		s := st("raid", "create_configuration", priority)
		s.Args = json.RawMessage(`{"logical_disks":[{"size_gb":"MAX","raid_level":"1","physical_disks":["` + dev + `"]}]}`)
		return s
	}
	defaults := []templates.Step{st("deploy", "deploy", 100), st("raid", "create_configuration", 50), st("deploy", "write_image", 40)}
	byName := map[string]templates.Template{
		"CUSTOM_RAID_TWO_DISKS": tpl("CUSTOM_RAID_TWO_DISKS", disk(60, "sda"), disk(60, "sdb")),
		"CUSTOM_RAID_FIRST":     tpl("CUSTOM_RAID_FIRST", disk(70, "nvme0")),
		"CUSTOM_RAID_MORE":      tpl("CUSTOM_RAID_MORE", disk(60, "sdc"), st("bios", "apply_configuration", 60)),
	}
	traits := []string{"CUSTOM_RAID_TWO_DISKS", "CUSTOM_RAID_FIRST", "CUSTOM_RAID_MORE"}
	got, err := templates.Merge(defaults, byName, traits, traits)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for _, s := range got {
		var args struct {
			LogicalDisks []struct {
				PhysicalDisks []string `json:"physical_disks"`
			} `json:"logical_disks"`
		}
		_ = json.Unmarshal(s.Args, &args)
		step := fmt.Sprintf("%s.%s %d", s.Interface, s.Step, s.Priority)
		if len(args.LogicalDisks) == 1 {
			step += " " + strings.Join(args.LogicalDisks[0].PhysicalDisks, ",")
		}
		plan = append(plan, step)
	}
	// The default raid step (50, no args) is replaced by the templates' four;
	// bios ranks before raid at 60; sda, sdb, sdc follow the instance traits' order.
	want := []string{
		"deploy.deploy 100",
		"raid.create_configuration 70 nvme0",
		"bios.apply_configuration 60",
		"raid.create_configuration 60 sda",
		"raid.create_configuration 60 sdb",
		"raid.create_configuration 60 sdc",
		"deploy.write_image 40",
	}
	if strings.Join(plan, "; ") != strings.Join(want, "; ") {
		t.Fatalf("plan\n  %s\nwant\n  %s", strings.Join(plan, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestDefaults(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	if _, err := s.Defaults(ctx, 1); !errs.Is(err, errs.NotFound) {
		t.Errorf("unset defaults: %v", err)
	}
	for _, tc := range []struct {
		doc string
		err string
	}{
		{`{"steps":[]}`, ""},
		{`{"steps":[` + step("deploy", "deploy", "100") + `,` + step("raid", "create_configuration", "0") + `]}`, ""},
		{`{"steps":[` + step("deploy", "deploy", "100") + `,` + step("deploy", "deploy", "1") + `]}`, "duplicate deploy step deploy.deploy"},
		{`{"steps":[` + step("deploy", "deploy", "100") + `]}`, ""}, // the core step's own priority is the defaults' to set
		{`{"steps":[` + step("disk", "x", "1") + `]}`, "interface"},
		{`{}`, "steps is required"},
		{`{"steps":[],"env":1}`, `unknown property "env"`},
		{`[]`, "JSON object"},
	} {
		got, err := s.SetDefaults(ctx, 1, []byte(tc.doc))
		if tc.err != "" {
			if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SetDefaults(%s) err = %v, want %q", tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("SetDefaults(%s): %v", tc.doc, err)
		}
		stored, err := s.Defaults(ctx, 1)
		if err != nil || len(stored) != len(got) {
			t.Errorf("Defaults after %s = %v, %v", tc.doc, stored, err)
		}
	}
	if _, err := s.SetDefaults(ctx, 0, []byte(`{"steps":[]}`)); !errs.Is(err, errs.Invalid) {
		t.Errorf("environment 0: %v", err)
	}
	if err := s.DeleteDefaults(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDefaults(ctx, 1); !errs.Is(err, errs.NotFound) {
		t.Errorf("second delete: %v", err)
	}
}

func TestDeploySteps(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	defaults, _ := json.Marshal(map[string]any{"steps": exampleDefaults})
	if _, err := s.SetDefaults(ctx, 7, defaults); err != nil {
		t.Fatal(err)
	}
	tplDoc, _ := json.Marshal(map[string]any{"name": exampleTemplate.Name, "steps": exampleTemplate.Steps})
	mustCreate(t, s, string(tplDoc))
	node := nodes.Node{EnvironmentID: 7, Traits: []string{"CUSTOM_EXAMPLE", "CUSTOM_OTHER"}}

	got, err := s.DeploySteps(ctx, node, []string{"CUSTOM_EXAMPLE"})
	if err != nil || render(got) != "deploy_start 200, power_one 100, deploy_middle 40, deploy_end 20" {
		t.Fatalf("DeploySteps = %s, %v", render(got), err)
	}
	// An environment without defaults runs only the template's steps.
	node.EnvironmentID = 8
	got, err = s.DeploySteps(ctx, node, []string{"CUSTOM_EXAMPLE", "CUSTOM_OTHER"})
	if err != nil || render(got) != "deploy_start 200, power_one 100" {
		t.Fatalf("without defaults = %s, %v", render(got), err)
	}
	if _, err := s.DeploySteps(ctx, node, []string{"", "CUSTOM_NOT_ON_NODE"}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("bad traits: %v", err)
	}
}
