package planner

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tuningbox/tuningbox/shared/wire"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// An explained plan (serialized_tasks?explain) says, for each task on each
// node, what placed it there and why it runs or is skipped. Every reason is
// recorded by the step of planning that makes the decision (placement, the
// condition's evaluation with yaql's Env.Trace), never worked out again.

// notePlaced records, when the plan is explained, what placed task i on node n
// (the first reason found stands).
func (p *placement) notePlaced(n, i int, reason string) {
	if p.why != nil && p.why[n][i] == nil {
		p.why[n][i] = &wire.Why{Placed: reason}
	}
}

// placedBy says what a placement name took on node n: "*", a tag (and the
// role it comes from, and why the node is the primary one), or a role.
func (p *placement) placedBy(n int, field, name string) string {
	switch {
	case p.master[n]:
		return fmt.Sprintf("%s %q: the Fuel master", field, name)
	case name == AnyRole:
		return fmt.Sprintf("%s %q: every node", field, name)
	}
	m := p.matcher(name)
	for _, tag := range p.tags[n] {
		if m.match(tag) {
			return fmt.Sprintf("%s %q matches tag %q%s", field, name, tag, p.tagOrigin(n, tag))
		}
	}
	for _, role := range p.nodes[n].Roles {
		if m.match(role) {
			return fmt.Sprintf("%s %q matches the node's role %q", field, name, role)
		}
	}
	return fmt.Sprintf("%s %q", field, name)
}

// tagOrigin says where node n's tag comes from: the role whose metadata
// gives it, and for a primary tag why this node is the primary one.
func (p *placement) tagOrigin(n int, tag string) string {
	base, primary := strings.CutPrefix(tag, primaryPrefix)
	var from string
	for _, role := range p.nodes[n].Roles {
		r, _ := p.rules.baseRole(role)
		if slices.Contains(p.rules.tagsOf(r), base) {
			from = fmt.Sprintf(" of role %q (roles_metadata %q tags)", role, r)
			break
		}
	}
	if !primary {
		return from
	}
	if slices.Contains(p.nodes[n].Roles, tag) {
		return from + fmt.Sprintf("; primary: the node has the role %q", tag)
	}
	return from + fmt.Sprintf("; primary: %q has has_primary and no node has the role %q, so the node of lowest id carrying it is", base, tag)
}

// decide records, when the plan is explained, why task i runs or is skipped
// on node n.
func (p *placement) decide(n, i int, decision string, condition *wire.ConditionWhy) {
	if p.why == nil {
		return
	}
	w := p.why[n][i]
	if w == nil {
		w = &wire.Why{}
		p.why[n][i] = w
	}
	w.Decision, w.Condition, w.Data = decision, condition, p.nodes[n].History
}

// conditionWhy is a condition's value on a node and the data-diff calls
// that gave it, as Env.Trace heard them.
func (q *quoter) conditionWhy(e *Expression, value any, calls []yaql.DiffCall) *wire.ConditionWhy {
	c := &wire.ConditionWhy{Expression: strings.TrimSpace(e.expr.Source()), Value: yaql.Truthy(value)}
	for _, call := range calls {
		c.Calls = append(c.Calls, wire.DataDiffCall{
			Function: call.Func, Call: call.Call, Arg: call.Arg,
			Old: q.quote(call.Old), New: q.quote(call.New), Result: jsonable(call.Result),
		})
	}
	return c
}

// quoter writes the values explanations quote: JSON cut to
// wire.MaxExplainedValue bytes, written no further than that, and once per
// collection a plan's nodes share (their data is decoded sharing what they
// share), so that explaining costs little beside planning.
type quoter struct {
	seen map[collection]*string
}

// collection identifies a map or a list by its storage and its length.
type collection struct {
	at  uintptr
	len int
}

func newQuoter() *quoter { return &quoter{seen: map[collection]*string{}} }

// quote is v as an explanation quotes it; nil when it was not read.
func (q *quoter) quote(v any) *string {
	if v == yaql.Undefined {
		return nil
	}
	var id collection
	switch v.(type) {
	case map[string]any, []any:
		if rv := reflect.ValueOf(v); rv.Len() > 0 {
			id = collection{rv.Pointer(), rv.Len()}
		}
	}
	if s, ok := q.seen[id]; ok && id.len > 0 {
		return s
	}
	w := boundedJSON{max: wire.MaxExplainedValue}
	w.value(v)
	s := w.String()
	if id.len > 0 {
		q.seen[id] = &s
	}
	return &s
}

// boundedJSON writes JSON (keys sorted, as encoding/json does) until it
// holds max bytes, then stops and ends with "…".
type boundedJSON struct {
	strings.Builder
	max  int
	full bool
}

func (w *boundedJSON) write(s string) {
	if w.full {
		return
	}
	if room := w.max - w.Len(); len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		w.WriteString(s[:room])
		w.WriteString("…")
		w.full = true
		return
	}
	w.WriteString(s)
}

func (w *boundedJSON) value(v any) {
	if w.full {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		w.write("{")
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				w.write(",")
			}
			w.value(k)
			w.write(":")
			w.value(x[k])
			if w.full {
				return
			}
		}
		w.write("}")
	case []any:
		w.write("[")
		for i, item := range x {
			if i > 0 {
				w.write(",")
			}
			w.value(item)
			if w.full {
				return
			}
		}
		w.write("]")
	case string:
		// Only what can show is encoded: a long string costs no more than a short one.
		b, _ := json.Marshal(x[:min(len(x), w.max)])
		w.write(string(b))
	default:
		b, err := json.Marshal(jsonable(x))
		if err != nil {
			b, _ = json.Marshal(fmt.Sprint(x))
		}
		w.write(string(b))
	}
}

// jsonable is v with yaql's Undefined as null.
func jsonable(v any) any {
	if v == yaql.Undefined {
		return nil
	}
	return v
}
