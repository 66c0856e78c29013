package yaql

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// new(expr): expr on the node's data now.
func fnNew(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	if v, ok := c.fixedValue(); ok {
		return v, nil
	}
	v, err := c.apply(c.lambda(0), c.ev.newData)
	c.fix(v, err)
	c.traced(c.lambda(0), Undefined, v, v)
	return v, err
}

// old(expr): expr on the node's data at its last successful run; Undefined when it fails
// there (Nailgun reads that as "changed").
func fnOld(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	if v, ok := c.fixedValue(); ok {
		return v, nil
	}
	v, err := c.old(c.lambda(0))
	c.fix(v, err)
	c.traced(c.lambda(0), v, Undefined, v)
	return v, err
}

// traced tells Env.Trace of a data-diff call's comparison of arg.
func (c call) traced(arg node, oldValue, newValue, result any) {
	if c.ev.trace == nil {
		return
	}
	text := ""
	if i := slices.Index(c.node.args, arg); i >= 0 && i < len(c.node.argText) {
		text = c.node.argText[i]
	}
	c.ev.trace(DiffCall{Func: c.node.name, Call: c.node.text, Arg: text, Old: c.ev.traceValue(oldValue), New: c.ev.traceValue(newValue), Result: c.ev.traceValue(result)})
}

// traceValue is a value as Env.Trace gets it: a collection the evaluation
// made (an iterator, a set) as a list; the data itself as it is, uncopied,
// so tracing costs nothing in proportion to the data compared. Past the step
// budget the collection stays as it is: the evaluation fails, and its trace
// goes unused.
func (ev *evaluator) traceValue(v any) any {
	switch v.(type) {
	case *iterator, *set:
		if f, err := ev.finalize(v); err == nil {
			return f
		}
	}
	return v
}

// fixedValue is the value of this call in this evaluation, when its arguments are closed
// and it was evaluated before: where($.uid = new($.uid)) calls new() for every item.
func (c call) fixedValue() (any, bool) {
	if c.node.closedArgs {
		for _, f := range c.ev.fixed {
			if f.node == c.node {
				return f.value, true
			}
		}
	}
	return nil, false
}

// fix remembers the value of a call of closed arguments for the rest of the evaluation.
func (c call) fix(v any, err error) {
	if c.node.closedArgs && err == nil {
		c.ev.fixed = append(c.ev.fixed, fixedValue{c.node, v})
	}
}

func (c call) old(expr node) (any, error) {
	v, err := c.apply(expr, c.ev.oldData)
	if err != nil {
		if fatal(err) {
			return nil, err
		}
		return Undefined, nil
	}
	return v, nil
}

// changed(expr): whether expr gives another value on the old data than on the new.
func fnChanged(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	return c.changed(c.lambda(0))
}

func (c call) changed(expr node) (bool, error) {
	newValue, err := c.apply(expr, c.ev.newData)
	if err != nil {
		return false, err
	}
	oldValue, err := c.old(expr)
	if err != nil {
		return false, err
	}
	same := equalRoot(newValue, oldValue, true, &c.ev.meter)
	if err := c.ev.checkSteps(); err != nil { // same is no answer then
		return false, err
	}
	c.traced(expr, oldValue, newValue, !same)
	return !same, nil
}

// changedAny(exprs...): whether any of them changed (evaluated in order, stopping at the first).
func fnChangedAny(c call) (any, error) {
	for _, expr := range c.node.args {
		changed, err := c.changed(expr)
		if err != nil || changed {
			return changed, err
		}
	}
	return false, nil
}

// changedAll(exprs...): whether every one of them changed.
func fnChangedAll(c call) (any, error) {
	for _, expr := range c.node.args {
		changed, err := c.changed(expr)
		if err != nil || !changed {
			return changed, err
		}
	}
	return true, nil
}

// added(expr): what the new value of expr has that the old has not (everything, when
// there is no old value).
func fnAdded(c call) (any, error) {
	return c.diff(true)
}

// deleted(expr): what the old value of expr had that the new has not (null when there is
// no old value).
func fnDeleted(c call) (any, error) {
	return c.diff(false)
}

func (c call) diff(added bool) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	newValue, err := c.apply(c.lambda(0), c.ev.newData)
	if err != nil {
		return nil, err
	}
	oldValue, err := c.old(c.lambda(0))
	if err != nil {
		return nil, err
	}
	if isUndefined(oldValue) {
		if added {
			c.traced(c.lambda(0), oldValue, newValue, newValue)
			return newValue, nil
		}
		c.traced(c.lambda(0), oldValue, newValue, nil)
		return nil, nil
	}
	a, d, err := dataDiff(c.ev, oldValue, newValue)
	if added {
		c.traced(c.lambda(0), oldValue, newValue, a)
		return a, err
	}
	c.traced(c.lambda(0), oldValue, newValue, d)
	return d, err
}

// diffClass groups values as nailgun.utils.datadiff tells them apart.
func diffClass(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case map[string]any:
		return "dict"
	case *set:
		return "set"
	case []any, *iterator:
		return "list"
	}
	if _, _, kind := number(v); kind == floatNumber {
		return "float"
	}
	return typeName(v)
}

// dataDiff is nailgun.utils.datadiff.diff(a, b): a flat (not recursive) diff.
func dataDiff(ev *evaluator, a, b any) (added, deleted any, err error) {
	if err := ev.checkSteps(); err != nil {
		return nil, nil, err
	}
	defer func() {
		if err == nil {
			err = ev.checkSteps()
		}
	}()
	m := &ev.meter
	if diffClass(a) != diffClass(b) {
		return diffAny(a, b, m)
	}
	switch x := a.(type) {
	case string:
		// Splitting and interning the lines reads them.
		if err := ev.scan(len(x) + len(b.(string))); err != nil {
			return nil, nil, err
		}
		al, err := ev.splitLines(x)
		if err != nil {
			return nil, nil, err
		}
		bl, err := ev.splitLines(b.(string))
		if err != nil {
			return nil, nil, err
		}
		added, deleted := diffSequences(al, bl, m)
		return added, deleted, ev.alloc(len(added) + len(deleted))
	case map[string]any:
		y := b.(map[string]any)
		addedMap, deletedMap := map[string]any{}, map[string]any{}
		for k, av := range x {
			bv, found := y[k]
			if found && equal(av, bv, false, m) {
				continue
			}
			deletedMap[k] = av
			if found {
				addedMap[k] = bv
			}
		}
		for k, bv := range y {
			if _, found := x[k]; !found {
				addedMap[k] = bv
			}
		}
		return addedMap, deletedMap, ev.alloc(len(addedMap) + len(deletedMap))
	case *set:
		y := b.(*set)
		return setMinus(y, x, m), setMinus(x, y, m), ev.alloc(len(x.items) + len(y.items))
	}
	if aItems, ok := listItems(a); ok {
		bItems, _ := listItems(b)
		added, deleted := diffSequences(aItems, bItems, m)
		return added, deleted, ev.alloc(len(added) + len(deleted))
	}
	return diffAny(a, b, m)
}

func diffAny(a, b any, m *meter) (added, deleted any, err error) {
	if equal(a, b, false, m) {
		return nil, nil, nil
	}
	return b, a, nil
}

func setMinus(a, b *set, m *meter) *set {
	out := &set{}
	for _, item := range a.items {
		if !contains(b.items, item, m) {
			out.items = append(out.items, item)
		}
	}
	return out
}

// splitLines is Python's str.splitlines() (the lines share s's bytes), each line a value
// counted before it is added: a string of newlines is as many lines as bytes.
func (ev *evaluator) splitLines(s string) ([]any, error) {
	var lines []any
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029':
		case '\r':
			if strings.HasPrefix(s[i+size:], "\n") {
				size++
			}
		default:
			i += size
			continue
		}
		if err := ev.alloc(1); err != nil {
			return nil, err
		}
		lines = append(lines, s[start:i])
		i += size
		start = i
	}
	if start < len(s) {
		lines = append(lines, s[start:])
		return lines, ev.alloc(1)
	}
	return lines, nil
}

// diffSequences returns the items of b outside the blocks Python's difflib.SequenceMatcher
// matches between a and b (added), and those of a (deleted), in order, as Nailgun's
// datadiff takes them from the opcodes.
func diffSequences(a, b []any, m *meter) (added, deleted []any) {
	added, deleted = []any{}, []any{}
	if equalLists(a, b, false, m) {
		return added, deleted
	}
	ids := interner{meter: m}
	intern := func(items []any) []int {
		out := make([]int, len(items))
		for i, item := range items {
			if m.spent() {
				break
			}
			out[i], _ = ids.id(item)
		}
		return out
	}
	ai, bi := intern(a), intern(b)
	blocks := matchingBlocks(ai, bi, m)
	if m.spent() { // the evaluation fails: no use reading half-matched blocks
		return added, deleted
	}
	i, j := 0, 0
	for _, block := range blocks {
		deleted = append(deleted, a[i:block.a]...)
		added = append(added, b[j:block.b]...)
		i, j = block.a+block.size, block.b+block.size
	}
	return added, deleted
}

type match struct{ a, b, size int }

// matchingBlocks is difflib.SequenceMatcher(None, a, b).get_matching_blocks(), with its
// autojunk heuristic, ending with the (len(a), len(b), 0) sentinel. Its work is a step
// per pair of positions it looks at: it is quadratic at worst, and stops (with blocks
// nobody uses) when the meter's budget is spent.
func matchingBlocks(a, b []int, m *meter) []match {
	b2j := map[int][]int{}
	for j, elt := range b {
		b2j[elt] = append(b2j[elt], j)
	}
	if n := len(b); n >= 200 {
		popular := n/100 + 1
		for elt, idxs := range b2j {
			if len(idxs) > popular {
				delete(b2j, elt)
			}
		}
	}
	longest := func(alo, ahi, blo, bhi int) match {
		besti, bestj, bestsize := alo, blo, 0
		j2len := map[int]int{}
		for i := alo; i < ahi && !m.spent(); i++ {
			m.steps++
			newj2len := map[int]int{}
			for _, j := range b2j[a[i]] {
				if j < blo {
					continue
				}
				if j >= bhi {
					break
				}
				m.steps++
				k := j2len[j-1] + 1
				newj2len[j] = k
				if k > bestsize {
					besti, bestj, bestsize = i-k+1, j-k+1, k
				}
			}
			j2len = newj2len
		}
		for besti > alo && bestj > blo && a[besti-1] == b[bestj-1] {
			besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
			m.steps++
		}
		for besti+bestsize < ahi && bestj+bestsize < bhi && a[besti+bestsize] == b[bestj+bestsize] {
			bestsize++
			m.steps++
		}
		return match{besti, bestj, bestsize}
	}
	var blocks []match
	queue := [][4]int{{0, len(a), 0, len(b)}}
	for len(queue) > 0 && !m.spent() {
		q := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		alo, ahi, blo, bhi := q[0], q[1], q[2], q[3]
		m := longest(alo, ahi, blo, bhi)
		if m.size == 0 {
			continue
		}
		blocks = append(blocks, m)
		if alo < m.a && blo < m.b {
			queue = append(queue, [4]int{alo, m.a, blo, m.b})
		}
		if m.a+m.size < ahi && m.b+m.size < bhi {
			queue = append(queue, [4]int{m.a + m.size, ahi, m.b + m.size, bhi})
		}
	}
	sort.Slice(blocks, func(x, y int) bool {
		if blocks[x].a != blocks[y].a {
			return blocks[x].a < blocks[y].a
		}
		return blocks[x].b < blocks[y].b
	})
	var merged []match
	cur := match{}
	for _, m := range blocks {
		if cur.a+cur.size == m.a && cur.b+cur.size == m.b {
			cur.size += m.size
			continue
		}
		if cur.size > 0 {
			merged = append(merged, cur)
		}
		cur = m
	}
	if cur.size > 0 {
		merged = append(merged, cur)
	}
	return append(merged, match{len(a), len(b), 0})
}

// isUndef(): whether the value is old()'s Undefined.
func fnIsUndef(c call) (any, error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, err
	}
	v, err := c.arg(0)
	return isUndefined(v), err
}

func isUndefined(v any) bool {
	_, ok := v.(undefinedValue)
	return ok
}

// toYaml(): the value as a YAML document in PyYAML's layout (Nailgun's serializer; see
// appendYAML), written no further than the byte budget allows.
func fnToYaml(c call) (any, error) {
	v, reserved, err := c.serializable()
	if err != nil {
		return nil, err
	}
	out := appendYAML(nil, v, c.ev.bytes.max-(c.ev.bytes.n-reserved))
	if err := c.ev.bytes.add(len(out) - reserved); err != nil {
		return nil, err
	}
	return string(out), nil
}

// toJson(): the value as JSON.
func fnToJSON(c call) (any, error) {
	v, reserved, err := c.serializable()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, c.fail("%v", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), c.ev.bytes.add(buf.Len() - 1 - reserved)
}

// serializable is the argument to serialize, finalized, with the bytes its text is
// reserved in the budget before it is made (the difference is counted when it is).
func (c call) serializable() (v any, reserved int, err error) {
	if err := c.wantArgs(1, 1); err != nil {
		return nil, 0, err
	}
	if v, err = c.arg(0); err != nil {
		return nil, 0, err
	}
	if isUndefined(v) {
		return nil, 0, c.fail("cannot serialize an undefined value")
	}
	if v, err = c.ev.finalize(v); err != nil {
		return nil, 0, err
	}
	if err := c.ev.alloc(1); err != nil {
		return nil, 0, err
	}
	before := c.ev.bytes.n
	err = c.ev.reserveText(v)
	return v, c.ev.bytes.n - before, err
}

// reserveText counts in the byte budget at most the bytes of v as JSON text (a step per
// value, and per 64 bytes of a string), failing as soon as it is exhausted: encoding/json
// writes all of it before it can be counted.
func (ev *evaluator) reserveText(v any) error {
	if err := ev.step(); err != nil {
		return err
	}
	switch x := v.(type) {
	case string:
		ev.steps += len(x) / 64
		return ev.bytes.add(quotedLen(x))
	case map[string]any:
		if err := ev.bytes.add(2); err != nil {
			return err
		}
		for k, item := range x {
			if err := ev.bytes.add(quotedLen(k) + 2); err != nil {
				return err
			}
			if err := ev.reserveText(item); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if err := ev.bytes.add(2); err != nil {
			return err
		}
		for _, item := range x {
			if err := ev.reserveText(item); err != nil {
				return err
			}
		}
		return ev.bytes.add(len(x))
	case float64, float32:
		return ev.bytes.add(len("-1.2345678901234567e-308"))
	case json.Number:
		return ev.bytes.add(len(x))
	case bool:
		return ev.bytes.add(len("false"))
	case nil:
		return ev.bytes.add(len("null"))
	}
	return ev.bytes.add(len("-9223372036854775808")) // an integer
}

// quotedLen is at most the length of s quoted, as encoding/json and strconv.Quote (YAML)
// write it: an escape takes up to six bytes for a control character or a byte that is
// not UTF-8, and ten for a rune that is not printable.
func quotedLen(s string) int {
	n := len(`""`)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				n += 2
			case c < ' ' || c == 0x7f:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029' || !strconv.IsPrint(r):
			n += 10
		default:
			n += size
		}
		i += size
	}
	return n
}
