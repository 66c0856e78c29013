package templates

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Export is what an environment's export (shared/envexport) holds of deploy
// templates: the environment's default deploy steps and the templates its
// deployments can match (those named by a trait of one of its nodes: a
// deployment's instance traits are traits of its node).
type Export struct {
	// DefaultSteps are the environment's default steps; null when it has none.
	DefaultSteps []Step     `json:"default_steps"`
	Templates    []Template `json:"templates"`
}

// ExportEnvironment reads environment env's default steps and the templates
// named by traits.
func (s *Service) ExportEnvironment(ctx context.Context, env int64, traits []string) (Export, error) {
	var out Export
	steps, err := s.Defaults(ctx, env)
	switch {
	case err == nil:
		out.DefaultSteps = steps
	case !errs.Is(err, errs.NotFound):
		return Export{}, err
	}
	byName, err := s.ByNames(ctx, traits)
	if err != nil {
		return Export{}, err
	}
	out.Templates = []Template{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out.Templates = append(out.Templates, byName[name])
	}
	return out, nil
}

// ImportOps returns the writes that give environment env, being imported,
// what in holds, in groups each written in one batch. A template stored
// here under the same name is reused when its steps and extra are the
// export's and is a conflict when they differ; a missing one is created,
// keeping its UUID where no template here has it, and its times. Nothing is
// written here: a refusal leaves the store as it was.
func (s *Service) ImportOps(ctx context.Context, in Export, env int64) ([][]store.Op, error) {
	if err := checkEnvironment(env); err != nil {
		return nil, err
	}
	var writes [][]store.Op
	if in.DefaultSteps != nil {
		steps, err := parseDefaults(mustJSON(defaultsDoc{Steps: in.DefaultSteps}))
		if err != nil {
			return nil, fmt.Errorf("default deploy steps: %w", err)
		}
		writes = append(writes, []store.Op{store.Create(defaultsKey(env), mustJSON(defaultsDoc{Steps: steps}))})
	}
	seen := make(map[string]bool)
	for _, t := range in.Templates {
		d, err := parseDocument(mustJSON(document{UUID: t.UUID, Name: t.Name, Steps: t.Steps, Extra: t.Extra}))
		if err != nil {
			return nil, fmt.Errorf("deploy template %s: %w", t.Name, err)
		}
		if seen[d.Name] {
			return nil, errs.Invalidf("the export holds deploy template %s twice", d.Name)
		}
		seen[d.Name] = true
		have, _, err := s.get(ctx, d.Name)
		if err == nil {
			if !bytes.Equal(mustJSON(have.Steps), mustJSON(d.Steps)) || !bytes.Equal(have.Extra, d.Extra) {
				return nil, errs.Conflictf("deploy template %s is stored here with other steps or extra than the export's: make them the same, or import into a tuningbox without it", d.Name)
			}
			continue
		}
		if !errs.Is(err, errs.NotFound) {
			return nil, err
		}
		if d.UUID == "" || s.exists(ctx, uuidKey(d.UUID)) {
			d.UUID = uuid.NewString()
		}
		seq, err := store.NextID(ctx, s.idx, counterKey)
		if err != nil {
			return nil, fmt.Errorf("allocate template sequence: %w", err)
		}
		rec := record{Seq: seq, Template: Template{UUID: d.UUID, Name: d.Name, Steps: d.Steps, Extra: d.Extra, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}}
		ptr := mustJSON(pointer{Seq: seq})
		writes = append(writes, []store.Op{
			store.Create(recordKey(seq), mustJSON(rec)),
			store.Create(uuidKey(d.UUID), ptr),
			store.Create(nameKey(d.Name), ptr),
		})
	}
	return writes, nil
}
