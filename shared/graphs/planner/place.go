package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/wire"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// Why a task placed on a node is not run there (NodeStep.Skip).
const (
	// SkipCondition: the task's condition is false on the node.
	SkipCondition = "condition"
	// SkipFiltered: the execution did not select the task (tasks, subgraphs).
	SkipFiltered = "filtered"
)

// PlanNode is a node as the planner sees it: its roles, and what its
// conditions read ($, and $%old for changed()); Data is nil when no task of
// the graph has an expression.
type PlanNode struct {
	ClusterNode
	Data any
	Old  any
	// History says whose data Old is, for explanations.
	History string
}

// placement is the per-node part of a plan: which tasks each node takes,
// which of those it skips and why, and each task's values evaluated there.
type placement struct {
	nodes []PlanNode
	tags  [][]string
	// master[n]: node n is the Fuel master (MasterRole), which only names
	// "master" take: Nailgun's master was no cluster node, so "*", patterns
	// and tasks without a placement leave it out.
	master []bool
	// applies[n][i]: task i is in node n's plan (group and stage tasks are in every node's).
	applies [][]bool
	// skip[n][i]: why node n does not run task i ("" when it does, or the task only structures the graph).
	skip [][]string
	// crossDepends / crossDependedBy[n][i]: task i's cross dependencies as seen from node n
	// (nil inner slices when every node sees the task's own list).
	crossDepends, crossDependedBy [][][]CrossDependency
	// limits: task id -> how many nodes may run it at once.
	limits map[string]int
	// groupNodes: group task -> the nodes its own names select.
	groupNodes map[int][]bool
	// unplaced lists the tasks (that do work) placed on no node.
	unplaced []string
	warnings []string
	matchers map[string]nameMatcher
	// patterns, when set, keeps compiled names for other plans.
	patterns *Patterns
	// patternBytes is what the plan's compiled names hold (matcher).
	patternBytes int64
	// selections: the nodes a cross dependency's names take, by the names joined.
	selections map[string][]bool
	rules      Rules
	// why[n][i], when the plan is explained, says why task i is on node n and runs or is skipped.
	why [][]*wire.Why
	// quotes writes the values explanations quote.
	quotes *quoter
}

// matcher returns the matcher of a name (compiled once per plan). Past
// maxPlanPatternBytes of compiled names it compiles no more (and matches
// nothing): the plan fails at its next check of its size (checkPatterns).
func (p *placement) matcher(name string) nameMatcher {
	m, ok := p.matchers[name]
	if !ok {
		if p.patternBytes > maxPlanPatternBytes {
			return nameMatcher{re: matchesNothing}
		}
		m, _ = compileNameIn(p.patterns, name) // validated when the task was read
		if m.re != nil {
			p.patternBytes += m.re.Bytes()
		}
		p.matchers[name] = m
	}
	return m
}

// Whether a plan reads the nodes' deployment data: none, for placeholders
// only (a string with braces, which stays as it is without data), or for
// yaql expressions, which cannot be evaluated without it.
const (
	NoData = iota
	DataForPlaceholders
	DataForExpressions
)

// DataNeeds says how the tasks read node data.
func DataNeeds(tasks []Task) int {
	need := NoData
	for _, t := range tasks {
		switch {
		case t.Condition != nil && t.Condition.Expr != nil || t.CrossDepends.Expr != nil || t.CrossDependedBy.Expr != nil ||
			t.Strategy != nil && t.Strategy.AmountExpr != nil || !t.NoOp() && len(t.fieldExprs) > 0:
			return DataForExpressions
		case !t.NoOp() && t.PerNode():
			need = DataForPlaceholders
		}
	}
	return need
}

// place decides, as Nailgun's LCM serializer does, which tasks each node takes:
//   - a task is placed by its tags, else roles/role, else groups: each name
//     ("*" for every node, "/re/" a regular expression searched in the tag,
//     else the exact tag) is matched against the node's tags (the tags of
//     its roles, see Rules.nodeTags) and roles; a name matching nothing
//     places nothing (a warning, not an error);
//   - a group task places the tasks listed in its tasks on its own nodes;
//   - a task with none of tags, roles, role and groups is placed on every
//     node (tuningbox: Nailgun placed it nowhere); group and stage tasks are
//     in every node's plan, only to carry the order;
//   - on each node, a task whose condition is false (its yaql expression
//     evaluated with the node's data as $) is kept as skipped, as is one the
//     execution did not select (filtered).
func place(ctx context.Context, tasks []Task, filtered []bool, nodes []PlanNode, rules Rules, explain bool) (*placement, error) {
	p, err := arrange(tasks, nodes, rules, nil, explain)
	if err != nil {
		return nil, err
	}
	return p, p.evaluate(ctx, tasks, filtered, nil)
}

// arrange is the first half of place: which tasks each node takes, before any expression
// is evaluated; compiled names come from (and go to) patterns when it is set; explain
// records why each task is on each node (placement.why).
func arrange(tasks []Task, nodes []PlanNode, rules Rules, patterns *Patterns, explain bool) (*placement, error) {
	p, err := newPlacement(len(tasks), nodes, rules, patterns, explain)
	if err != nil {
		return nil, err
	}
	unmatched := map[string][]string{} // "field name" -> task ids
	for i, t := range tasks {
		if t.Type == TypeGroup {
			p.groupNodes[i], _ = p.selectNodes(tasks, t, unmatched)
		}
	}
	p.placeTasks(tasks, unmatched)
	p.placeGroupMembers(tasks)
	for _, key := range sortedKeys(unmatched) {
		p.warnings = append(p.warnings, fmt.Sprintf("%s matches no node (tasks %s)", key, strings.Join(unmatched[key], ", ")))
	}
	for i, t := range tasks {
		if !t.NoOp() && !slices.ContainsFunc(p.applies, func(a []bool) bool { return a[i] }) {
			p.unplaced = append(p.unplaced, t.ID)
		}
	}
	return p, nil
}

// newPlacement returns the placement of nt tasks on nodes with none placed
// yet: each node's tags (by rules) and whether it is the master.
func newPlacement(nt int, nodes []PlanNode, rules Rules, patterns *Patterns, explain bool) (*placement, error) {
	p := &placement{nodes: nodes, limits: map[string]int{}, matchers: map[string]nameMatcher{}, selections: map[string][]bool{},
		groupNodes: map[int][]bool{}, patterns: patterns, rules: rules}
	if explain {
		p.quotes = newQuoter()
		p.why = make([][]*wire.Why, len(nodes))
		for n := range p.why {
			p.why[n] = make([]*wire.Why, nt)
		}
	}
	cluster := make([]ClusterNode, len(nodes))
	for n := range nodes {
		cluster[n] = nodes[n].ClusterNode
	}
	if err := rules.checkPrimaries(cluster); err != nil {
		return nil, err
	}
	p.tags = rules.nodeTags(cluster)
	p.master = make([]bool, len(nodes))
	p.applies = make([][]bool, len(nodes))
	p.skip = make([][]string, len(nodes))
	for n := range nodes {
		p.master[n] = slices.Contains(nodes[n].Roles, MasterRole)
		p.applies[n] = make([]bool, nt)
		p.skip[n] = make([]string, nt)
	}
	p.crossDepends = make([][][]CrossDependency, len(nodes))
	p.crossDependedBy = make([][][]CrossDependency, len(nodes))
	return p, nil
}

// placeTasks places each task on the nodes its names select (selectNodes);
// group and stage tasks are in every node's plan, only to carry the order.
func (p *placement) placeTasks(tasks []Task, unmatched map[string][]string) {
	for i, t := range tasks {
		if t.Type == TypeGroup || t.Type == TypeStage {
			for n := range p.nodes {
				p.applies[n][i] = true
			}
			continue
		}
		on, why := p.selectNodes(tasks, t, unmatched)
		for n := range on {
			p.applies[n][i] = p.applies[n][i] || on[n]
			if on[n] && why != nil {
				p.notePlaced(n, i, why[n])
			}
		}
	}
}

// placeGroupMembers places the tasks a group task lists in its tasks on the group's nodes.
func (p *placement) placeGroupMembers(tasks []Task) {
	index := make(map[string]int, len(tasks))
	for i, t := range tasks {
		index[t.ID] = i
	}
	for g, on := range p.groupNodes {
		for _, id := range tasks[g].Tasks {
			if j, ok := index[id]; ok {
				for n := range p.nodes {
					p.applies[n][j] = p.applies[n][j] || on[n]
					if on[n] {
						p.notePlaced(n, j, fmt.Sprintf("listed in the tasks of group %q, which is on the node", tasks[g].ID))
					}
				}
			}
		}
	}
}

// selectNodes gives the nodes a task's names take (a group task without
// names: its id as a role) and, when explained, the reason on each. A name
// that takes no node and that the release does not define goes to unmatched.
func (p *placement) selectNodes(tasks []Task, t Task, unmatched map[string][]string) (on []bool, why []string) {
	field, names := placementNames(t)
	if t.Type == TypeGroup && names == nil {
		field, names = "role", []string{t.ID}
	}
	on = make([]bool, len(p.nodes))
	if p.why != nil {
		why = make([]string, len(p.nodes))
	}
	for _, name := range names {
		found := p.selectNamed(field, name, on, why)
		if field == "groups" {
			// tuningbox: a groups name also takes the nodes of the group tasks it names.
			found = p.selectGroups(tasks, name, on, why) || found
		}
		if !found && !p.rules.known(name) {
			key := fmt.Sprintf("%s %q", field, name)
			unmatched[key] = append(unmatched[key], t.ID)
		}
	}
	if names == nil {
		for n := range on {
			on[n] = !p.master[n]
			if why != nil {
				why[n] = "no tags, role or groups: every node"
			}
		}
	}
	return on, why
}

// selectNamed adds to on the nodes that name (of field) takes: "master" only
// the master, "*" every other node with a tag or a role, else the nodes
// carrying a matching tag or role; it reports whether it took any.
func (p *placement) selectNamed(field, name string, on []bool, why []string) bool {
	found := false
	for n := range p.nodes {
		if p.master[n] && name == MasterRole || !p.master[n] &&
			(name == AnyRole && (len(p.tags[n]) > 0 || len(p.nodes[n].Roles) > 0) || p.carries(n, p.matcher(name))) {
			if why != nil && !on[n] {
				why[n] = p.placedBy(n, field, name)
			}
			on[n], found = true, true
		}
	}
	return found
}

// selectGroups adds to on the nodes of the group tasks placed so far whose
// id name matches; it reports whether any of them is on a node.
func (p *placement) selectGroups(tasks []Task, name string, on []bool, why []string) bool {
	found := false
	for g, gon := range p.groupNodes {
		if p.matcher(name).match(tasks[g].ID) {
			for n := range on {
				if why != nil && !on[n] && gon[n] {
					why[n] = fmt.Sprintf("groups %q names group %q, which is on the node", name, tasks[g].ID)
				}
				on[n] = on[n] || gon[n]
			}
			found = found || slices.Contains(gon, true)
		}
	}
	return found
}

// placementNames returns the field that places a task and its names (nil: every node).
func placementNames(t Task) (string, []string) {
	switch {
	case t.Tags != nil:
		return "tags", t.Tags
	case t.Roles != nil || t.Role != nil:
		return "role", append(slices.Clone(t.Roles), t.Role...)
	case t.Groups != nil:
		return "groups", t.Groups
	}
	return "", nil
}

// tasksNamed returns the tasks a cross dependency's name takes: the task with that
// id (index: task ids to indexes), or every task a "/re/" matches.
func (p *placement) tasksNamed(tasks []Task, index map[string]int, name string) []int {
	m := p.matcher(name)
	if m.re == nil {
		if i, ok := index[name]; ok {
			return []int{i}
		}
		return nil
	}
	var out []int
	for i, t := range tasks {
		if m.match(t.ID) {
			out = append(out, i)
		}
	}
	return out
}

// carries reports whether node n has a tag or a role that m matches.
func (p *placement) carries(n int, m nameMatcher) bool {
	return slices.ContainsFunc(p.tags[n], m.match) || slices.ContainsFunc(p.nodes[n].Roles, m.match)
}

// evaluate computes, on each node, the values of the tasks placed there that
// depend on the node: conditions, strategy amounts and cross dependency lists,
// within the request's budget (nil: none but each evaluation's own).
func (p *placement) evaluate(ctx context.Context, tasks []Task, filtered []bool, budget *yaql.Budget) error {
	// One cache for the plan: what nodes' data share (one cluster's network_metadata) is evaluated once.
	cache := yaql.NewCache()
	for n, node := range p.nodes {
		var calls []yaql.DiffCall
		env := yaql.Env{New: node.Data, Old: node.Old, Cache: cache, Budget: budget}
		if p.why != nil {
			env.Trace = func(c yaql.DiffCall) { calls = append(calls, c) }
		}
		eval := func(t Task, field string, e *Expression) (any, error) {
			v, err := e.Eval(ctx, env)
			if err != nil {
				return nil, expressionFailed(err, "task %q on node %s: %s: %v", t.ID, node.ID, field, err)
			}
			return v, nil
		}
		for i, t := range tasks {
			if !p.applies[n][i] || t.Type == TypeGroup || t.Type == TypeStage {
				continue
			}
			switch c := t.Condition; {
			case filtered[i]:
				p.skip[n][i] = SkipFiltered
				p.decide(n, i, "skipped: the run did not select it (tasks or subgraphs)", nil)
			case t.Type == TypeSkipped:
				p.decide(n, i, "skipped: its type is skipped", nil)
			case c == nil:
				p.decide(n, i, "runs: it has no condition", nil)
			case c.Expr == nil:
				if !c.Const {
					p.skip[n][i] = SkipCondition
				}
				p.decide(n, i, fmt.Sprintf("%s: its condition is %v", runsOrSkipped(c.Const), c.Const), nil)
			default:
				calls = calls[:0]
				v, err := eval(t, "condition", c.Expr)
				if err != nil {
					return err
				}
				run := yaql.Truthy(v)
				if !run {
					p.skip[n][i] = SkipCondition
				}
				if p.why != nil {
					p.decide(n, i, fmt.Sprintf("%s: its condition is %v", runsOrSkipped(run), run), p.quotes.conditionWhy(c.Expr, v, calls))
				}
			}
			for _, cd := range []struct {
				field string
				deps  CrossDependencies
				dst   [][][]CrossDependency
			}{{"cross-depends", t.CrossDepends, p.crossDepends}, {"cross-depended-by", t.CrossDependedBy, p.crossDependedBy}} {
				if cd.deps.Expr == nil {
					continue
				}
				v, err := eval(t, cd.field, cd.deps.Expr)
				if err != nil {
					return err
				}
				list, err := crossDependenciesValue(v)
				if err != nil {
					return errs.Invalidf("task %q on node %s: %s: %s", t.ID, node.ID, cd.field, err)
				}
				if cd.dst[n] == nil {
					cd.dst[n] = make([][]CrossDependency, len(tasks))
				}
				cd.dst[n][i] = list
			}
			if p.skip[n][i] == "" && t.Type != TypeSkipped {
				if err := p.limit(t, func(e *Expression) (any, error) { return eval(t, "parameters.strategy.amount", e) }); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// limit records how many nodes may run t at once: the smallest amount its
// strategy gives on any node that runs it.
func (p *placement) limit(t Task, eval func(*Expression) (any, error)) error {
	st := t.Strategy
	if st == nil {
		return nil
	}
	amount := st.Amount
	switch {
	case st.Type == StrategyOneByOne:
		amount = 1
	case st.AmountExpr != nil:
		v, err := eval(st.AmountExpr)
		if err != nil {
			return err
		}
		f, ok := number(v)
		if !ok || f < 1 || f != math.Trunc(f) {
			return errs.Invalidf("task %q: parameters.strategy.amount: %v is not a positive integer", t.ID, v)
		}
		amount = int(f)
	}
	if amount <= 0 {
		return nil
	}
	if cur, ok := p.limits[t.ID]; !ok || amount < cur {
		p.limits[t.ID] = amount
	}
	return nil
}

// number reads a yaql number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// crossDependenciesValue reads the value of a cross dependency expression:
// a list of {name, role|tags, policy} (null = none), of at most
// MaxCrossDependencies entries.
func crossDependenciesValue(v any) ([]CrossDependency, error) {
	if v == nil {
		return nil, nil
	}
	if list, ok := v.([]any); ok && len(list) > MaxCrossDependencies {
		return nil, fmt.Errorf("the expression gave %d cross dependencies, over the limit of %d", len(list), MaxCrossDependencies)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	list, err := decodeCrossDependencies(raw)
	if err != nil {
		return nil, fmt.Errorf("the expression gave %s: %v", raw, err)
	}
	return list, nil
}

// crossDeps returns task i's cross dependencies as node n sees them.
func (p *placement) crossDeps(t Task, n, i int, dependedBy bool) []CrossDependency {
	deps, per := t.CrossDepends, p.crossDepends
	if dependedBy {
		deps, per = t.CrossDependedBy, p.crossDependedBy
	}
	if deps.Expr != nil && per[n] != nil {
		return per[n][i]
	}
	return deps.List
}

// crossSelection returns which nodes a cross dependency's selection takes
// for a task on node n: none or "*" takes every node, "self" (or Nailgun's
// null role) node n itself, names the nodes carrying a matching tag or role.
// The answer is shared: callers must not change it.
func (p *placement) crossSelection(cd CrossDependency, n int) (takes []bool, self bool) {
	names := cd.Role
	if cd.Tags != nil {
		names = cd.Tags
	}
	if cd.Sync {
		return nil, true
	}
	key := strings.Join(names, "\x00")
	takes, ok := p.selections[key]
	if !ok {
		takes = make([]bool, len(p.nodes))
		for k := range p.nodes {
			if p.master[k] {
				takes[k] = slices.Contains(names, MasterRole)
				continue
			}
			takes[k] = len(names) == 0
			for _, name := range names {
				if name == AnyRole || name != SelfRole && p.carries(k, p.matcher(name)) {
					takes[k] = true
					break
				}
			}
		}
		p.selections[key] = takes
	}
	return takes, slices.Contains(names, SelfRole)
}

// selectsEveryNode says whether a cross dependency selects every node
// but the master (no role, or "*"), whichever node it is seen from.
func (p *placement) selectsEveryNode(cd CrossDependency) bool {
	names := cd.Role
	if cd.Tags != nil {
		names = cd.Tags
	}
	return !cd.Sync && !slices.Contains(names, MasterRole) && (len(names) == 0 || slices.Contains(names, AnyRole))
}

// MasterRole is the role of the node that stands for the Fuel master: the
// master's own tasks (role: master, such as generate_keys) run there, by a
// `tuningbox agent` on the master.
const MasterRole = "master"

// masterWarnings says, when no node of the plan is the master, which tasks
// name the master (and so run nowhere) and which tasks wait for them there:
// the operator learns it before the run, not from a failed copy mid-run.
func masterWarnings(tasks []Task, p *placement) []string {
	if slices.Contains(p.master, true) {
		return nil
	}
	var onMaster, waiting []string
	for _, t := range tasks {
		if _, names := placementNames(t); !t.NoOp() && slices.Contains(names, MasterRole) {
			onMaster = append(onMaster, t.ID)
		}
	}
	if len(onMaster) == 0 {
		return nil
	}
	for _, t := range tasks {
		for _, cd := range t.CrossDepends.List {
			if slices.Contains(cd.Role, MasterRole) && slices.Contains(onMaster, cd.Name) && !slices.Contains(waiting, t.ID) {
				waiting = append(waiting, t.ID)
			}
		}
	}
	msg := fmt.Sprintf("no node has the role %s: %s will not run", MasterRole, strings.Join(onMaster, ", "))
	if len(waiting) > 0 {
		msg += fmt.Sprintf(", and %s, which wait for them on the master, will run without them", strings.Join(waiting, ", "))
	}
	return []string{msg + "; register the Fuel master as a node with the role master and run `tuningbox agent` on it"}
}

func runsOrSkipped(run bool) string {
	if run {
		return "runs"
	}
	return "skipped"
}
