package yaql

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// callNode is name(args) or, after '.', recv.name(args).
type callNode struct {
	name string
	fn   *function
	args []node
	re   *Pattern // matches() with a constant pattern, compiled once
	// closedArgs: the arguments depend on nothing but their `$`, so new(...) and old(...)
	// give one value per evaluation however often a lambda calls them.
	closedArgs bool
	lookup     *lookup // where($.key = value): a lookup in an index of the receiver
	pos        int
	// text and argText are the source of a data-diff call and of each of its
	// arguments, which Env.Trace reports.
	text    string
	argText []string
}

// function is one yaql function: method means it may be called as recv.name(...), free
// as name(...); as a method the receiver is its first argument.
type function struct {
	method, free bool
	env          bool // reads the node's data besides its arguments (new, old, changed...)
	impl         func(c call) (any, error)
}

// call is one invocation: the receiver (when called as a method) and the unevaluated
// arguments, which each function evaluates as its yaql signature says: values now, lambdas
// per item, lazily.
type call struct {
	ev     *evaluator
	node   *callNode
	dollar any
	recv   any
	method bool
}

// newCall makes a call node; an unknown function or a bad constant pattern is a syntax
// error, so that a task naming one is refused on upload (yaql fails when evaluating).
func newCall(name string, args []node, pos int) (*callNode, error) {
	n := &callNode{name: name, fn: functions[name], args: args, pos: pos, closedArgs: allClosed(args, false)}
	if n.fn == nil {
		return nil, &SyntaxError{Pos: pos, Msg: fmt.Sprintf("unknown function %q", name)}
	}
	if name == "where" && len(args) == 1 {
		n.lookup = lookupOf(args[0])
	}
	if name == "matches" && len(args) == 1 {
		var err error
		if n.re, err = constantPattern(args[0], pos); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// constantPattern compiles a pattern given as a string constant (nil for any other node).
func constantPattern(arg node, pos int) (*Pattern, error) {
	c, ok := arg.(*constNode)
	if !ok {
		return nil, nil
	}
	src, ok := c.value.(string)
	if !ok {
		return nil, nil
	}
	p, err := CompilePattern(src)
	if err != nil {
		return nil, &SyntaxError{Pos: pos, Msg: fmt.Sprintf("bad regular expression %q: %s", head(src), head(err.Error()))}
	}
	return p, nil
}

func (n *callNode) eval(ev *evaluator, dollar any) (any, error) {
	return n.call(ev, nil, false, dollar)
}

func (n *callNode) call(ev *evaluator, recv any, method bool, dollar any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	switch {
	case method && !n.fn.method:
		return nil, failf(n.pos, "%s() is not a method", n.name)
	case !method && !n.fn.free:
		return nil, failf(n.pos, "%s() is a method: call it as value.%s(...)", n.name, n.name)
	}
	return n.fn.impl(call{ev: ev, node: n, dollar: dollar, recv: recv, method: method})
}

// argc counts the arguments, the receiver included.
func (c call) argc() int {
	if c.method {
		return len(c.node.args) + 1
	}
	return len(c.node.args)
}

// arg evaluates argument i (0 is the receiver of a method call).
func (c call) arg(i int) (any, error) {
	if c.method {
		if i == 0 {
			return c.recv, nil
		}
		i--
	}
	return c.node.args[i].eval(c.ev, c.dollar)
}

// lambda is argument i unevaluated (never the receiver).
func (c call) lambda(i int) node {
	if c.method {
		i--
	}
	return c.node.args[i]
}

// apply evaluates a lambda argument with item as `$`.
func (c call) apply(fn node, item any) (any, error) {
	return fn.eval(c.ev, item)
}

func (c call) fail(format string, args ...any) error {
	return failf(c.node.pos, c.node.name+"(): "+format, args...)
}

func (c call) wantArgs(min, max int) error {
	if n := c.argc(); n < min || n > max {
		if min == max {
			return c.fail("takes %d arguments, got %d", min, n)
		}
		return c.fail("takes %d to %d arguments, got %d", min, max, n)
	}
	return nil
}

// collection evaluates argument i as something iterable.
func (c call) collection(i int) ([]any, error) {
	v, err := c.arg(i)
	if err != nil {
		return nil, err
	}
	items, ok := listItems(v)
	if !ok {
		return nil, c.fail("needs a collection, not %s", typeName(v))
	}
	return items, nil
}

func (c call) dict(i int) (map[string]any, error) {
	v, err := c.arg(i)
	if err != nil {
		return nil, err
	}
	d, ok := v.(map[string]any)
	if !ok {
		return nil, c.fail("needs a dict, not %s", typeName(v))
	}
	return d, nil
}

func (c call) str(i int) (string, error) {
	v, err := c.arg(i)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", c.fail("needs a string, not %s", typeName(v))
	}
	return s, nil
}

// functions is the subset of yaql's standard library that Fuel's tasks use, and Nailgun's.
var functions map[string]*function

func init() {
	functions = map[string]*function{
		"get":       {method: true, impl: fnGet},
		"keys":      {method: true, impl: fnKeys},
		"values":    {method: true, impl: fnValues},
		"items":     {method: true, impl: fnItems},
		"set":       {method: true, impl: fnSet},
		"dict":      {free: true, impl: fnDict},
		"where":     {method: true, impl: fnWhere},
		"select":    {method: true, impl: fnSelect},
		"any":       {method: true, free: true, impl: fnAny},
		"all":       {method: true, free: true, impl: fnAll},
		"first":     {method: true, impl: fnFirst},
		"len":       {method: true, free: true, impl: fnLen},
		"concat":    {method: true, free: true, impl: fnConcat},
		"flatten":   {method: true, impl: fnFlatten},
		"toSet":     {method: true, impl: fnToSet},
		"intersect": {method: true, impl: fnIntersect},
		"matches":   {method: true, impl: fnMatches},
		"switch":    {free: true, impl: fnSwitch},
		"coalesce":  {free: true, impl: fnCoalesce},
		"bool":      {free: true, impl: fnBool},
		"toYaml":    {method: true, impl: fnToYaml},
		"toJson":    {method: true, impl: fnToJSON},
		// Nailgun's LCM functions (nailgun/yaql_ext/datadiff.py).
		"new":        {free: true, env: true, impl: fnNew},
		"old":        {free: true, env: true, impl: fnOld},
		"changed":    {free: true, env: true, impl: fnChanged},
		"changedAny": {free: true, env: true, impl: fnChangedAny},
		"changedAll": {free: true, env: true, impl: fnChangedAll},
		"added":      {free: true, env: true, impl: fnAdded},
		"deleted":    {free: true, env: true, impl: fnDeleted},
		"isUndef":    {method: true, impl: fnIsUndef},
	}
}

// get(key, default => null) on a dict.
func fnGet(c call) (any, error) {
	if err := c.wantArgs(2, 3); err != nil {
		return nil, err
	}
	d, err := c.dict(0)
	if err != nil {
		return nil, err
	}
	key, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	if k, ok := key.(string); ok {
		if v, found := d[k]; found {
			return v, nil
		}
	}
	if c.argc() == 3 {
		return c.arg(2)
	}
	return nil, nil
}

// keys(), values() and items() list a dict's entries in key order.
func fnKeys(c call) (any, error) { return listDict(c, 1, func(k string, _ any) any { return k }) }

func fnValues(c call) (any, error) { return listDict(c, 1, func(_ string, v any) any { return v }) }

// items() is [key, value] pairs.
func fnItems(c call) (any, error) {
	return listDict(c, 3, func(k string, v any) any { return []any{k, v} })
}

// listDict lists the dict argument's entries in key order, each as
// entry(key, value), which costs the budget cost values.
func listDict(c call, cost int, entry func(k string, v any) any) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	d, err := c.dict(0)
	if err != nil {
		return nil, err
	}
	if err := c.ev.alloc(cost * len(d)); err != nil {
		return nil, err
	}
	keys := c.ev.sortedKeys(d)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = entry(k, d[k])
	}
	return out, nil
}

// set(key, value), set(dict) or set(k => v, ...): a new dict with those keys replaced.
func fnSet(c call) (any, error) {
	if err := c.wantArgs(2, 1<<30); err != nil {
		return nil, err
	}
	d, err := c.dict(0)
	if err != nil {
		return nil, err
	}
	var changes map[string]any
	_, pairs := c.lambda(1).(*pairNode)
	switch {
	case pairs:
		changes, err = buildDict(c.ev, c.node.args, c.dollar, c.node.pos)
	case c.argc() == 2:
		changes, err = c.dict(1)
	case c.argc() == 3:
		var key string
		if key, err = c.str(1); err == nil {
			var value any
			value, err = c.arg(2)
			changes = map[string]any{key: value}
		}
	default:
		err = c.fail("takes a key and a value, a dict, or key => value pairs")
	}
	if err != nil {
		return nil, err
	}
	if err := c.ev.alloc(len(d) + len(changes)); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(d)+len(changes))
	for k, v := range d {
		out[k] = v
	}
	for k, v := range changes {
		out[k] = v
	}
	return out, nil
}

// dict(k => v, ...) or dict(pairs): a new dict.
func fnDict(c call) (any, error) {
	if c.argc() == 1 {
		if _, isPair := c.lambda(0).(*pairNode); !isPair {
			items, err := c.collection(0)
			if err != nil {
				return nil, err
			}
			if err := c.ev.alloc(len(items) + 1); err != nil {
				return nil, err
			}
			out := make(map[string]any, len(items))
			for _, item := range items {
				pair, ok := listItems(item)
				if !ok || len(pair) < 2 {
					return nil, c.fail("needs [key, value] pairs")
				}
				key, ok := pair[0].(string)
				if !ok {
					return nil, c.fail("dict keys must be strings here, not %s", typeName(pair[0]))
				}
				out[key] = pair[1]
			}
			return out, nil
		}
	}
	return buildDict(c.ev, c.node.args, c.dollar, c.node.pos)
}

func fnWhere(c call) (any, error) {
	if err := c.wantArgs(2, 2); err != nil {
		return nil, err
	}
	items, err := c.collection(0)
	if err != nil {
		return nil, err
	}
	if c.node.lookup != nil && c.method {
		if out, ok, err := c.node.lookup.find(c, items); ok || err != nil {
			return out, err
		}
	}
	predicate := c.lambda(1)
	var out []any
	for _, item := range items {
		keep, err := c.apply(predicate, item)
		if err != nil {
			return nil, err
		}
		if Truthy(keep) {
			out = append(out, item)
		}
	}
	if err := c.ev.alloc(len(out) + 1); err != nil {
		return nil, err
	}
	return &iterator{items: out}, nil
}

func fnSelect(c call) (any, error) {
	if err := c.wantArgs(2, 2); err != nil {
		return nil, err
	}
	items, err := c.collection(0)
	if err != nil {
		return nil, err
	}
	if err := c.ev.alloc(len(items) + 1); err != nil {
		return nil, err
	}
	selector := c.lambda(1)
	out := make([]any, len(items))
	for i, item := range items {
		if out[i], err = c.apply(selector, item); err != nil {
			return nil, err
		}
	}
	return &iterator{items: out}, nil
}

// any(predicate => null): whether some item satisfies predicate (or the collection is not empty).
func fnAny(c call) (any, error) {
	return quantify(c, true)
}

// all(predicate => null): whether every item satisfies predicate (or is truthy).
func fnAll(c call) (any, error) {
	return quantify(c, false)
}

func quantify(c call, anyOf bool) (any, error) {
	if err := c.wantArgs(1, 2); err != nil {
		return nil, err
	}
	items, err := c.collection(0)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		ok := Truthy(item)
		if c.argc() == 2 {
			v, err := c.apply(c.lambda(1), item)
			if err != nil {
				return nil, err
			}
			ok = Truthy(v)
		} else if anyOf {
			ok = true
		}
		if ok == anyOf {
			return anyOf, nil
		}
	}
	return !anyOf, nil
}

// first(default): the first item; an empty collection without default is an error.
func fnFirst(c call) (any, error) {
	if err := c.wantArgs(1, 2); err != nil {
		return nil, err
	}
	items, err := c.collection(0)
	if err != nil {
		return nil, err
	}
	if len(items) > 0 {
		return items[0], nil
	}
	if c.argc() == 2 {
		return c.arg(1)
	}
	return nil, c.fail("the collection is empty")
}

func fnLen(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	v, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		return int64(utf8.RuneCountInString(x)), c.ev.scan(len(x))
	case map[string]any:
		return int64(len(x)), nil
	}
	if items, ok := listItems(v); ok {
		return int64(len(items)), nil
	}
	return nil, c.fail("needs a collection or a string, not %s", typeName(v))
}

// concat joins strings (called as a function with strings) or chains collections.
func fnConcat(c call) (any, error) {
	values := make([]any, c.argc())
	allStrings, allCollections := !c.method, true
	for i := range values {
		v, err := c.arg(i)
		if err != nil {
			return nil, err
		}
		values[i] = v
		_, isString := v.(string)
		_, isCollection := listItems(v)
		allStrings = allStrings && isString
		allCollections = allCollections && isCollection
	}
	switch {
	case allStrings:
		size := 0
		for _, v := range values {
			size += len(v.(string))
		}
		if err := c.ev.allocBytes(size); err != nil {
			return nil, err
		}
		var b strings.Builder
		b.Grow(size)
		for _, v := range values {
			b.WriteString(v.(string))
		}
		return b.String(), nil
	case allCollections:
		total := 0
		for _, v := range values {
			items, _ := listItems(v)
			total += len(items)
		}
		if err := c.ev.alloc(total + 1); err != nil {
			return nil, err
		}
		out := make([]any, 0, total)
		for _, v := range values {
			items, _ := listItems(v)
			out = append(out, items...)
		}
		return &iterator{items: out}, nil
	}
	return nil, c.fail("needs strings or collections")
}

// flatten: the items of nested collections, depth first.
func fnFlatten(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	items, err := c.collection(0)
	if err != nil {
		return nil, err
	}
	var out []any
	var walk func(items []any) error
	walk = func(items []any) error {
		for _, item := range items {
			if err := c.ev.step(); err != nil {
				return err
			}
			if inner, ok := listItems(item); ok {
				if err := walk(inner); err != nil {
					return err
				}
				continue
			}
			// Counted as it is added: a list given many times flattens to far more
			// items than were made.
			if err := c.ev.alloc(1); err != nil {
				return err
			}
			out = append(out, item)
		}
		return nil
	}
	if err := walk(items); err != nil {
		return nil, err
	}
	return &iterator{items: out}, c.ev.alloc(1)
}

func newSet(ev *evaluator, items []any) (*set, error) {
	if err := ev.alloc(len(items) + 1); err != nil {
		return nil, err
	}
	unique := interner{meter: &ev.meter}
	out := &set{}
	for _, item := range items {
		if ev.spent() {
			break
		}
		if _, seen := unique.id(item); !seen {
			out.items = append(out.items, item)
		}
	}
	return out, ev.checkSteps()
}

func fnToSet(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	items, err := c.collection(0)
	if err != nil {
		return nil, err
	}
	return newSet(c.ev, items)
}

func fnIntersect(c call) (any, error) {
	if err := c.wantArgs(2, 2); err != nil {
		return nil, err
	}
	left, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	right, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	l, lok := left.(*set)
	r, rok := right.(*set)
	if !lok || !rok {
		return nil, c.fail("needs two sets (toSet())")
	}
	var common []any
	for _, item := range l.items {
		if contains(r.items, item, &c.ev.meter) {
			common = append(common, item)
		}
	}
	if err := c.ev.checkSteps(); err != nil {
		return nil, err
	}
	return newSet(c.ev, common)
}

// string.matches(pattern): whether the pattern is found in the string (Python's re.search).
func fnMatches(c call) (any, error) {
	if err := c.wantArgs(2, 2); err != nil {
		return nil, err
	}
	s, err := c.str(0)
	if err != nil {
		return nil, err
	}
	re := c.node.re
	if re == nil {
		pattern, err := c.str(1)
		if err != nil {
			return nil, err
		}
		if re, err = c.ev.compileRegexp(pattern, c.node.pos); err != nil {
			return nil, err
		}
	}
	return c.ev.match(re, s)
}

// switch(condition => value, ...): the value of the first true condition, else null.
func fnSwitch(c call) (any, error) {
	for _, arg := range c.node.args {
		pair, ok := arg.(*pairNode)
		if !ok {
			return nil, c.fail("takes condition => value pairs")
		}
		cond, err := pair.key.eval(c.ev, c.dollar)
		if err != nil {
			return nil, err
		}
		if Truthy(cond) {
			return pair.value.eval(c.ev, c.dollar)
		}
	}
	return nil, nil
}

// coalesce(args): the first argument that is not null.
func fnCoalesce(c call) (any, error) {
	for i := range c.argc() {
		v, err := c.arg(i)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

func fnBool(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	v, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	return Truthy(v), nil
}
