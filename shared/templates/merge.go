package templates

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/store"
)

// coreStep is the step every deployment has; a template may only disable it.
const coreStep = "deploy.deploy"

// checkCoreStep enforces spec 003's "0 is the only priority override that can
// be set for any of the core deploy steps" for one template step.
func checkCoreStep(st Step) error {
	if st.Name() == coreStep && st.Priority > 0 {
		return fmt.Errorf("the core step %s may only be disabled (priority 0), not given priority %d", coreStep, st.Priority)
	}
	return nil
}

// defaultsDoc is the stored and accepted form of an environment's default steps.
type defaultsDoc struct {
	Steps []Step `json:"steps"`
}

func defaultsKey(env int64) store.Key {
	return store.Key{Partition: "tpl#defaults", Sort: store.SortID(env)}
}

func checkEnvironment(env int64) error {
	if env <= 0 {
		return errs.Invalidf("environment id must be positive, got %d", env)
	}
	return nil
}

// SetDefaults replaces the default deploy steps of environment env with the
// steps of doc, `{"steps":[...]}`. Steps with priority 0 are kept but do not
// run unless a template raises them; an empty list is allowed.
func (s *Service) SetDefaults(ctx context.Context, env int64, doc []byte) ([]Step, error) {
	if err := checkEnvironment(env); err != nil {
		return nil, err
	}
	steps, err := parseDefaults(doc)
	if err != nil {
		return nil, err
	}
	if err := s.idx.Write(ctx, store.Put(defaultsKey(env), mustJSON(defaultsDoc{Steps: steps}))); err != nil {
		return nil, fmt.Errorf("store default deploy steps of environment %d: %w", env, err)
	}
	return steps, nil
}

// parseDefaults validates default deploy steps, `{"steps":[...]}`.
func parseDefaults(doc []byte) ([]Step, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil || fields == nil {
		return nil, errs.Invalidf(`default deploy steps must be a JSON object {"steps":[...]}`)
	}
	var p problems
	for k := range fields {
		if k != "steps" {
			p.add("unknown property %q", k)
		}
	}
	var steps []Step
	if raw, ok := fields["steps"]; !ok {
		p.add("steps is required")
	} else {
		steps = parseSteps(raw, "steps", defaultSteps, &p)
	}
	if len(p) > 0 {
		return nil, errs.Invalidf("%s", strings.Join(p, "; "))
	}
	return steps, nil
}

// Defaults returns the default deploy steps of environment env; NotFound when none were set.
func (s *Service) Defaults(ctx context.Context, env int64) ([]Step, error) {
	if err := checkEnvironment(env); err != nil {
		return nil, err
	}
	var d defaultsDoc
	if _, err := store.GetJSON(ctx, s.idx, defaultsKey(env), &d); errors.Is(err, store.ErrNotFound) {
		return nil, errs.NotFoundf("environment %d has no default deploy steps", env)
	} else if err != nil {
		return nil, fmt.Errorf("read default deploy steps of environment %d: %w", env, err)
	}
	return d.Steps, nil
}

// DeleteDefaults removes the default deploy steps of environment env.
func (s *Service) DeleteDefaults(ctx context.Context, env int64) error {
	if err := checkEnvironment(env); err != nil {
		return err
	}
	err := s.idx.Write(ctx, store.Op{Kind: store.OpDelete, Key: defaultsKey(env), Cond: store.Cond{Kind: store.MustExist}})
	if errors.Is(err, store.ErrConflict) {
		return errs.NotFoundf("environment %d has no default deploy steps", env)
	}
	if err != nil {
		return fmt.Errorf("delete default deploy steps of environment %d: %w", env, err)
	}
	return nil
}

// DeploySteps returns the ordered steps a deployment of node n with the
// requested instance traits runs: its environment's defaults (none when unset)
// merged with the matching deploy templates, as Merge describes.
func (s *Service) DeploySteps(ctx context.Context, n nodes.Node, instanceTraits []string) ([]Step, error) {
	defaults, err := s.Defaults(ctx, n.EnvironmentID)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return nil, err
	}
	// Only well-formed names can be template names; Merge reports the others.
	named := slices.DeleteFunc(slices.Clone(instanceTraits), func(t string) bool { return nodes.CheckTrait(t) != nil })
	byName, err := s.ByNames(ctx, named)
	if err != nil {
		return nil, err
	}
	return Merge(defaults, byName, n.Traits, instanceTraits)
}

// Merge computes the deploy steps of one deployment (spec 003):
//  1. every requested instance trait must be a valid trait of the node;
//  2. the matching templates are those named by an instance trait (templates
//     holds them by name), taken in the order of the instance traits;
//  3. the same (interface, step) may come more than once, from one template
//     or several, and runs once per occurrence with that occurrence's args;
//     the core step deploy.deploy with a priority above 0 is an error (a
//     template may only disable it; templates written before that rule was
//     checked on write are caught here);
//  4. the result is the defaults with priority > 0 except those a template
//     names, plus the template steps with priority > 0, sorted by priority
//     (highest first), then interface (power, management, deploy, bios, raid);
//     ties keep the given order: defaults first, then the templates in the
//     order of the instance traits, each in the order of its steps.
//
// Every problem found is reported in one Invalid error.
func Merge(defaults []Step, templates map[string]Template, nodeTraits, instanceTraits []string) ([]Step, error) {
	var p problems
	var matching []Template
	seenTrait := map[string]bool{}
	for _, trait := range instanceTraits {
		if seenTrait[trait] {
			continue
		}
		seenTrait[trait] = true
		if err := nodes.CheckTrait(trait); err != nil {
			p.add("instance trait: %s", errs.Message(err))
			continue
		}
		if !slices.Contains(nodeTraits, trait) {
			p.add("instance trait %s is not a trait of the node", trait)
			continue
		}
		if t, ok := templates[trait]; ok {
			matching = append(matching, t)
		}
	}

	overridden := map[string]bool{} // step names a matching template sets
	var added []Step
	for _, t := range matching {
		for _, st := range t.Steps {
			overridden[st.Name()] = true
			if err := checkCoreStep(st); err != nil {
				p.add("template %s: %v", t.Name, err)
				continue
			}
			if st.Priority > 0 {
				added = append(added, st)
			}
		}
	}
	if len(p) > 0 {
		return nil, errs.Invalidf("%s", strings.Join(p, "; "))
	}

	final := make([]Step, 0, len(defaults)+len(added))
	for _, st := range defaults {
		if st.Priority > 0 && !overridden[st.Name()] {
			final = append(final, st)
		}
	}
	final = append(final, added...)
	slices.SortStableFunc(final, func(a, b Step) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(interfaceRank[b.Interface], interfaceRank[a.Interface]))
	})
	return final, nil
}
