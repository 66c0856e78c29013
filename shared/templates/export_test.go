package templates_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/templates"
)

// TestExportImport: an environment's default steps and the templates its
// traits name move to another store as they were (UUID and times kept);
// into a store holding a template of that name with the same steps, it is
// reused; with other steps, the import is a conflict that writes nothing.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	source := newService(t)
	mirror := mustCreate(t, source, mirrorDoc)
	mustCreate(t, source, `{"name":"CUSTOM_UNNAMED","steps":[`+step("bios", "apply_configuration", "5")+`]}`)
	if _, err := source.SetDefaults(ctx, 3, []byte(`{"steps":[`+step("deploy", "deploy_start", "50")+`]}`)); err != nil {
		t.Fatal(err)
	}
	exported, err := source.ExportEnvironment(ctx, 3, []string{mirror.Name, "CUSTOM_NO_TEMPLATE"})
	if err != nil {
		t.Fatal(err)
	}
	if len(exported.Templates) != 1 || len(exported.DefaultSteps) != 1 {
		t.Fatalf("exported %+v: want the mirror template and one default step", exported)
	}

	// importInto writes the import's groups for environment 5 into b as the environment's import would.
	importInto := func(b store.Backend) error {
		writes, err := templates.NewService(b.Index).ImportOps(ctx, exported, 5)
		if err != nil {
			return err
		}
		for _, ops := range writes {
			if err := b.Index.Write(ctx, ops...); err != nil {
				return err
			}
		}
		return nil
	}
	fresh := mem.New()
	if err := importInto(fresh); err != nil {
		t.Fatal(err)
	}
	target := templates.NewService(fresh.Index)
	got, err := target.Get(ctx, mirror.Name)
	if err != nil || !reflect.DeepEqual(got, mirror) {
		t.Fatalf("the imported template: %+v, %v; want %+v", got, err, mirror)
	}
	if steps, err := target.Defaults(ctx, 5); err != nil || !reflect.DeepEqual(steps, exported.DefaultSteps) {
		t.Fatalf("the imported default steps: %+v, %v", steps, err)
	}

	same := mem.New()
	sameSvc := templates.NewService(same.Index)
	mustCreate(t, sameSvc, mirrorDoc)
	if err := importInto(same); err != nil {
		t.Fatalf("import over the same template: %v", err)
	}
	if list, err := sameSvc.List(ctx, templates.ListOptions{}); err != nil || len(list) != 1 {
		t.Fatalf("templates after importing one stored already: %+v, %v", list, err)
	}

	differs := mem.New()
	mustCreate(t, templates.NewService(differs.Index), `{"name":"CUSTOM_BM_CONFIG_RAID_DISK_MIRROR","steps":[`+step("raid", "create_configuration", "20")+`]}`)
	if err := importInto(differs); !errs.Is(err, errs.Conflict) {
		t.Fatalf("import over a template with other steps = %v, want a conflict", err)
	}
	if _, err := templates.NewService(differs.Index).Defaults(ctx, 5); !errs.Is(err, errs.NotFound) {
		t.Fatalf("default steps after the refused import: %v", err)
	}
}
