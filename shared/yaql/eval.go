package yaql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Default budgets of an evaluation (Limits' zero fields). Steps include the values a
// comparison visits: a node's network_metadata holds 43 values per node of the cluster
// (the shared data), so changed($.network_metadata) of a 1,000-node cluster visits some
// 45,000; the default leaves room for the largest real conditions. Bytes are those of the
// strings an evaluation makes (+, concat(), toYaml(), toJson()): fuel-library's
// conditions make a few hundred.
const (
	DefaultSteps  = 10_000_000
	DefaultValues = 1_000_000
	DefaultBytes  = 16 << 20
)

// Expr is a compiled expression; it is immutable, so one *Expr may be evaluated by any
// number of goroutines at once.
type Expr struct {
	src   string
	root  node
	bytes int64
}

// Env is what an expression sees.
type Env struct {
	New    any            // `$` and new(): a node's deployment data now
	Old    any            // $%old: the node's data at its last successful run; nil = none (treated as Nailgun's {})
	Vars   map[string]any // further context variables: Vars["node"] is $node
	Limits Limits         // zero value = defaults
	Cache  *Cache         // shared by the evaluations of one plan; nil = one per evaluation
	Budget *Budget        // shared by the evaluations of one request; nil = none
	// Trace, when set, is told of every data-diff call the evaluation makes
	// (changed, changedAny, changedAll, added, deleted, old, new): what
	// explains a decision comes from the evaluation that made it.
	Trace func(DiffCall)
}

// DiffCall is one data-diff call of an evaluation: the function, the text of
// the call and of the argument compared, the argument's value on the old and
// on the new data (Undefined when not read there), and the call's answer
// for that argument. The values are the data's own: read them, never change them.
type DiffCall struct {
	Func, Call, Arg string
	Old, New        any
	Result          any
}

// dataDiffFunctions are the calls Env.Trace reports.
var dataDiffFunctions = map[string]bool{
	"changed": true, "changedAny": true, "changedAll": true, "added": true, "deleted": true, "old": true, "new": true,
}

// Limits bound one evaluation: Steps counts the expression nodes evaluated (a lambda's body
// once per item), the values comparisons visit and the characters regular expressions and
// string searches read; Values the values the evaluation creates (list and dict items,
// strings); Bytes the bytes of the strings it makes.
type Limits struct {
	Steps  int
	Values int
	Bytes  int
}

// LimitError is an evaluation that ran out of a budget: its own (Limits), or with Plan
// set, the Budget of all the evaluations of its request.
type LimitError struct {
	Budget string // "step", "value", "byte" or "time"
	Limit  int64  // the budget: a count, or for "time" nanoseconds
	Plan   bool
}

func (e *LimitError) Error() string {
	limit := fmt.Sprint(e.Limit)
	if e.Budget == "time" {
		limit = time.Duration(e.Limit).String()
	}
	if e.Plan {
		return fmt.Sprintf("yaql: the request's expressions exceeded their %s budget (%s together)", e.Budget, limit)
	}
	return fmt.Sprintf("yaql: expression exceeded its %s budget (%s)", e.Budget, limit)
}

// EvalError is an expression that failed on its data (a function given the wrong kind of
// value, a missing index, ...), as Python yaql raises; Pos is the byte offset of the
// failing operation in the source.
type EvalError struct {
	Pos int
	Msg string
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("yaql: %s (at position %d)", e.Msg, e.Pos)
}

// Compile parses an expression once; the *Expr is safe for concurrent Eval.
func Compile(src string) (*Expr, error) {
	root, err := parse(src)
	if err != nil {
		return nil, err
	}
	return &Expr{src: src, root: root, bytes: int64(len(src)) + treeBytes(root)}, nil
}

// Source is the expression's text.
func (e *Expr) Source() string { return e.src }

// Bytes is about what the compiled expression holds in memory (its tree and regular
// expressions), for caches that count it.
func (e *Expr) Bytes() int64 { return e.bytes }

// nodeBytes is about what a node of the tree takes: the node, its interface value and
// its share of argument slices.
const nodeBytes = 96

func treeBytes(n node) int64 {
	size := int64(nodeBytes)
	var children []node
	switch x := n.(type) {
	case *listNode:
		children = x.items
	case *mapNode:
		children = x.pairs
	case *pairNode:
		children = []node{x.key, x.value}
	case *indexNode:
		children = append([]node{x.recv}, x.args...)
	case *dotNode:
		children = []node{x.recv, x.right}
	case *unaryNode:
		children = []node{x.operand}
	case *binaryNode:
		children = []node{x.left, x.right}
		if x.re != nil {
			size += x.re.Bytes()
		}
	case *callNode:
		children = x.args
		if x.re != nil {
			size += x.re.Bytes()
		}
	case *constNode:
		if s, ok := x.value.(string); ok {
			size += int64(len(s))
		}
	}
	for _, c := range children {
		size += treeBytes(c)
	}
	return size
}

// Eval evaluates the expression against env. The result is JSON-shaped (map[string]any,
// []any, string, bool, nil, int64, float64) or Undefined. Errors: *LimitError when a budget
// is exceeded, the context's error when ctx ends, *EvalError when the expression fails on
// the data.
func (e *Expr) Eval(ctx context.Context, env Env) (any, error) {
	ev := &evaluator{
		ctx:     ctx,
		values:  counter{max: positiveOr(env.Limits.Values, DefaultValues), budget: "value"},
		bytes:   counter{max: positiveOr(env.Limits.Bytes, DefaultBytes), budget: "byte"},
		newData: env.New,
		oldData: env.Old,
		vars:    env.Vars,
		trace:   env.Trace,
		meter:   meter{maxSteps: positiveOr(env.Limits.Steps, DefaultSteps), cache: env.Cache},
	}
	if ev.oldData == nil {
		ev.oldData = noOldData
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if b := env.Budget; b != nil {
		steps, bytes := b.remaining()
		if steps < int64(ev.maxSteps) {
			ev.maxSteps, ev.planSteps = int(max(steps, 0)), true
		}
		if bytes < int64(ev.bytes.max) {
			ev.bytes.max, ev.bytes.plan = int(max(bytes, 0)), b.limits.Bytes
		}
		ev.budget = b
		defer func() { b.charge(ev.steps, ev.bytes.n) }()
	}
	v, err := e.root.eval(ev, env.New)
	if err != nil {
		return nil, err
	}
	return ev.finalize(v)
}

func positiveOr(n, otherwise int) int {
	if n > 0 {
		return n
	}
	return otherwise
}

// noOldData is Env.Old when there is none, Nailgun's {} (never modified).
var noOldData = map[string]any{}

type evaluator struct {
	meter // steps and the Cache
	ctx   context.Context
	// planSteps: maxSteps is what is left of the Budget, not the evaluation's own limit.
	planSteps        bool
	budget           *Budget
	values, bytes    counter
	newData, oldData any
	vars             map[string]any
	fixed            []fixedValue // values of new()/old() of closed arguments
	trace            func(DiffCall)
}

type fixedValue struct {
	node  *callNode
	value any
}

// memo is the evaluation's Cache, made on first use when Env has none.
func (ev *evaluator) memo() *Cache {
	if ev.cache == nil {
		ev.cache = NewCache()
	}
	return ev.cache
}

// sortedKeys lists a dict's keys in order, through the Cache when there is one.
func (ev *evaluator) sortedKeys(m map[string]any) []string {
	if ev.cache == nil {
		return sortedKeys(m)
	}
	return ev.cache.sortedKeys(m)
}

// step counts one node evaluated, and looks at the context now and then.
func (ev *evaluator) step() error {
	ev.steps++
	if ev.spent() {
		return ev.outOfSteps()
	}
	if ev.steps&1023 == 0 && ev.ctx.Err() != nil {
		return context.Cause(ev.ctx)
	}
	return nil
}

// checkSteps looks at the budget and the context after work counted in bulk (the values
// a comparison visited).
func (ev *evaluator) checkSteps() error {
	if ev.spent() {
		return ev.outOfSteps()
	}
	if ev.ctx.Err() != nil {
		return context.Cause(ev.ctx)
	}
	return nil
}

// scan counts the work of a linear pass over n bytes (a substring search, a copy): a
// step is some 10 ns, the time of such a pass over 64 bytes.
func (ev *evaluator) scan(n int) error {
	ev.steps += n / 64
	return ev.checkSteps()
}

func (ev *evaluator) outOfSteps() error {
	if ev.planSteps {
		return &LimitError{Budget: "step", Limit: ev.budget.limits.Steps, Plan: true}
	}
	return &LimitError{Budget: "step", Limit: int64(ev.maxSteps)}
}

// alloc counts n values about to be created, and a step for each: making a value is
// work as visiting one is (([1] * 999999).len() > 0 allocated 16 MB for four steps).
func (ev *evaluator) alloc(n int) error {
	if err := ev.values.add(n); err != nil {
		return err
	}
	ev.steps += n
	if ev.spent() {
		return ev.outOfSteps()
	}
	return nil
}

// allocBytes counts a string of n bytes about to be made.
func (ev *evaluator) allocBytes(n int) error {
	if err := ev.values.add(1); err != nil {
		return err
	}
	return ev.bytes.add(n)
}

// counter is a budget of the evaluation: values or bytes made.
type counter struct {
	n, max int
	budget string
	// plan, when set, is the Budget's total: max is what was left of it.
	plan int64
}

func (c *counter) add(n int) error {
	c.n += n
	if c.n <= c.max {
		return nil
	}
	if c.plan > 0 {
		return &LimitError{Budget: c.budget, Limit: c.plan, Plan: true}
	}
	return &LimitError{Budget: c.budget, Limit: int64(c.max)}
}

// fatal errors end the whole evaluation: old() does not turn them into Undefined.
func fatal(err error) bool {
	var limit *LimitError
	return errors.As(err, &limit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func failf(pos int, format string, args ...any) error {
	return &EvalError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// node is a parsed expression; eval evaluates it with dollar as `$`.
type node interface {
	eval(ev *evaluator, dollar any) (any, error)
}

type constNode struct{ value any }

func (n *constNode) eval(ev *evaluator, _ any) (any, error) { return n.value, ev.step() }

// keywordNode is a bare identifier: the string itself as a value, a name after '.'.
type keywordNode struct{ name string }

func (n *keywordNode) eval(ev *evaluator, _ any) (any, error) { return n.name, ev.step() }

type varNode struct{ name string }

func (n *varNode) eval(ev *evaluator, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	switch n.name {
	case "", "1":
		return dollar, nil
	}
	return ev.vars[n.name], nil // an unknown variable is null, as in yaql
}

type listNode struct {
	items []node
	pos   int
}

func (n *listNode) eval(ev *evaluator, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	if err := ev.alloc(len(n.items) + 1); err != nil {
		return nil, err
	}
	out := make([]any, len(n.items))
	for i, item := range n.items {
		if _, ok := item.(*pairNode); ok {
			return nil, failf(n.pos, "a list item cannot be a key => value pair")
		}
		v, err := item.eval(ev, dollar)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// pairNode is `key => value` in an argument list.
type pairNode struct {
	key, value node
	pos        int
}

func (n *pairNode) eval(*evaluator, any) (any, error) {
	return nil, failf(n.pos, "a key => value pair is only an argument of dict(), switch(), set() or {...}")
}

type mapNode struct {
	pairs []node
	pos   int
}

func (n *mapNode) eval(ev *evaluator, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	return buildDict(ev, n.pairs, dollar, n.pos)
}

// buildDict evaluates key => value pairs into a new dict.
func buildDict(ev *evaluator, pairs []node, dollar any, pos int) (map[string]any, error) {
	if err := ev.alloc(len(pairs) + 1); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(pairs))
	for _, p := range pairs {
		pair, ok := p.(*pairNode)
		if !ok {
			return nil, failf(pos, "dict items are key => value pairs")
		}
		k, err := pair.key.eval(ev, dollar)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, failf(pair.pos, "dict keys must be strings here, not %s", typeName(k))
		}
		v, err := pair.value.eval(ev, dollar)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

type indexNode struct {
	recv node
	args []node
	pos  int
}

func (n *indexNode) eval(ev *evaluator, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	recv, err := n.recv.eval(ev, dollar)
	if err != nil {
		return nil, err
	}
	if len(n.args) < 1 || len(n.args) > 2 {
		return nil, failf(n.pos, "an index takes one or two arguments")
	}
	key, err := n.args[0].eval(ev, dollar)
	if err != nil {
		return nil, err
	}
	switch c := recv.(type) {
	case map[string]any:
		k, ok := key.(string)
		v, found := c[k]
		if ok && found {
			return v, nil
		}
		if len(n.args) == 2 {
			return n.args[1].eval(ev, dollar)
		}
		return nil, failf(n.pos, "key %s not found", describe(key))
	case []any:
		i, _, kind := number(key)
		if kind != intNumber || len(n.args) != 1 {
			return nil, failf(n.pos, "a list index is one integer")
		}
		if i < 0 {
			i += int64(len(c))
		}
		if i < 0 || i >= int64(len(c)) {
			return nil, failf(n.pos, "list index out of range")
		}
		return c[i], nil
	}
	return nil, failf(n.pos, "cannot index %s", typeName(recv))
}

type dotNode struct {
	recv, right node
	elvis       bool // ?.: null stays null
	memo        bool // the right side is a closed method call: its result is cached per receiver
	memoData    bool // ... whose lambdas read the node's data: cached per receiver and data
	pos         int
}

func newDot(recv, right node, elvis bool, pos int) *dotNode {
	n := &dotNode{recv: recv, right: right, elvis: elvis, pos: pos}
	if c, ok := right.(*callNode); ok && memoizable[c.name] {
		n.memo = allClosed(c.args, true)
		n.memoData = n.memo && !allClosed(c.args, false)
	}
	return n
}

func (n *dotNode) eval(ev *evaluator, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	// A kept result keeps its receiver too: the values made for either, and the
	// receiver's own items (made before), are what it costs.
	made := ev.values.n
	recv, err := n.recv.eval(ev, dollar)
	if err != nil {
		return nil, err
	}
	if n.elvis && recv == nil {
		return nil, nil
	}
	_, isDict := recv.(map[string]any)
	if !n.memo && (isDict || !isKeyword(n.right)) {
		return n.apply(ev, recv, dollar)
	}
	key := memoKey{n: n}
	if n.memoData {
		var hasNew, hasOld bool
		key.new, _, hasNew = identity(ev.newData)
		key.old, _, hasOld = identity(ev.oldData)
		if !hasNew || !hasOld {
			return n.apply(ev, recv, dollar)
		}
	}
	cache := ev.memo()
	v, key, ok := cache.lookup(key, recv)
	if ok {
		return v, nil
	}
	v, err = n.apply(ev, recv, dollar)
	if err == nil {
		cache.store(key, recv, v, ev.values.n-made+size(recv))
	}
	return v, err
}

func isKeyword(n node) bool {
	_, ok := n.(*keywordNode)
	return ok
}

func (n *dotNode) apply(ev *evaluator, recv, dollar any) (any, error) {
	switch right := n.right.(type) {
	case *keywordNode:
		return attribute(ev, recv, right.name, n.pos)
	case *callNode:
		return right.call(ev, recv, true, dollar)
	}
	return nil, failf(n.pos, "the right of '.' is a name or a method call")
}

// attribute is recv.name: a dict's key (null when missing, as in the yaql Nailgun ran),
// or the attribute of every item of a list.
func attribute(ev *evaluator, recv any, name string, pos int) (any, error) {
	switch c := recv.(type) {
	case map[string]any:
		return c[name], nil
	}
	items, ok := listItems(recv)
	if !ok {
		return nil, failf(pos, "%s has no attribute %q", typeName(recv), name)
	}
	if err := ev.alloc(len(items) + 1); err != nil {
		return nil, err
	}
	out := make([]any, len(items))
	for i, item := range items {
		if err := ev.step(); err != nil {
			return nil, err
		}
		v, err := attribute(ev, item, name, pos)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return &iterator{items: out}, nil
}

type unaryNode struct {
	op      string
	operand node
	pos     int
}

func (n *unaryNode) eval(ev *evaluator, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	v, err := n.operand.eval(ev, dollar)
	if err != nil {
		return nil, err
	}
	if n.op == "not" {
		return !Truthy(v), nil
	}
	i, f, kind := number(v)
	switch {
	case kind == notNumber:
		return nil, failf(n.pos, "unary %s of %s", n.op, typeName(v))
	case n.op == "+" && kind == intNumber:
		return i, nil
	case n.op == "+":
		return f, nil
	case kind == intNumber && i == -i && i != 0:
		return nil, failf(n.pos, "integer overflow")
	case kind == intNumber:
		return -i, nil
	}
	return -f, nil
}

type binaryNode struct {
	op          string
	left, right node
	re          *Pattern // =~ and !~ with a constant pattern, compiled once
	pos         int
}

func newBinary(op string, left, right node, pos int) (*binaryNode, error) {
	n := &binaryNode{op: op, left: left, right: right, pos: pos}
	if op == "=~" || op == "!~" {
		var err error
		if n.re, err = constantPattern(right, pos); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (n *binaryNode) eval(ev *evaluator, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	left, err := n.left.eval(ev, dollar)
	if err != nil {
		return nil, err
	}
	switch n.op { // the lazy ones give Python's operand, not a bool
	case "and":
		if !Truthy(left) {
			return left, nil
		}
		return n.right.eval(ev, dollar)
	case "or":
		if Truthy(left) {
			return left, nil
		}
		return n.right.eval(ev, dollar)
	case "->":
		return nil, failf(n.pos, "'->' (let, contexts) is not supported")
	}
	right, err := n.right.eval(ev, dollar)
	if err != nil {
		return nil, err
	}
	switch n.op {
	case "=", "!=":
		same := equalRoot(left, right, false, &ev.meter)
		return same == (n.op == "="), ev.checkSteps()
	case "in":
		found, err := in(ev, left, right, n.pos)
		if err != nil {
			return nil, err
		}
		return found, ev.checkSteps()
	case "<", ">", "<=", ">=":
		if s, ok := left.(string); ok {
			if err := ev.scan(len(s)); err != nil {
				return nil, err
			}
		}
		return compare(n.op, left, right, n.pos)
	case "=~", "!~":
		s, ok1 := left.(string)
		pattern, ok2 := right.(string)
		if !ok1 || !ok2 {
			return nil, failf(n.pos, "%s needs a string and a pattern", n.op)
		}
		re := n.re
		if re == nil {
			if re, err = ev.compileRegexp(pattern, n.pos); err != nil {
				return nil, err
			}
		}
		matched, err := ev.match(re, s)
		return matched == (n.op == "=~"), err
	}
	return arithmetic(ev, n.op, left, right, n.pos)
}

func in(ev *evaluator, value, collection any, pos int) (bool, error) {
	if s, ok := collection.(string); ok {
		if sub, ok := value.(string); ok {
			if err := ev.scan(len(s)); err != nil {
				return false, err
			}
			return strings.Contains(s, sub), nil
		}
	}
	items, ok := listItems(collection)
	if !ok {
		return false, failf(pos, "'in' needs a collection, not %s", typeName(collection))
	}
	return contains(items, value, &ev.meter), nil
}
