package yaql

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
)

// undefinedValue is the type of Undefined.
type undefinedValue struct{}

// Undefined is what old(expr) gives when expr cannot be evaluated on the old data (Nailgun's
// _UNDEFINED marker): it is truthy, equal only to itself, and isUndef() tells it apart.
var Undefined any = undefinedValue{}

// iterator is a collection Python yaql holds as a lazy iterator (the results of where,
// select, concat, flatten, attribute access on a list): it is always truthy, equal only to
// itself until the result is finalized, and cannot be indexed.
type iterator struct{ items []any }

// set is the result of toSet(): unique items in the order first seen.
type set struct{ items []any }

type numKind int

const (
	notNumber numKind = iota
	intNumber
	floatNumber
)

// number reads v as a Python number; bools are not numbers here (yaql's Number type
// refuses them).
func number(v any) (int64, float64, numKind) {
	switch n := v.(type) {
	case int64:
		return n, 0, intNumber
	case float64:
		return 0, n, floatNumber
	case int:
		return int64(n), 0, intNumber
	case int32:
		return int64(n), 0, intNumber
	case int16:
		return int64(n), 0, intNumber
	case int8:
		return int64(n), 0, intNumber
	case uint8:
		return int64(n), 0, intNumber
	case uint16:
		return int64(n), 0, intNumber
	case uint32:
		return int64(n), 0, intNumber
	case uint:
		if uint64(n) <= math.MaxInt64 {
			return int64(n), 0, intNumber
		}
		return 0, float64(n), floatNumber
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), 0, intNumber
		}
		return 0, float64(n), floatNumber
	case float32:
		return 0, float64(n), floatNumber
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, 0, intNumber
		}
		if f, err := strconv.ParseFloat(string(n), 64); err == nil {
			return 0, f, floatNumber
		}
	}
	return 0, 0, notNumber
}

// numeric reads v as a number or a bool (Python's bool is an int), as a float for comparing.
func numeric(v any) (float64, int64, numKind) {
	if b, ok := v.(bool); ok {
		if b {
			return 1, 1, intNumber
		}
		return 0, 0, intNumber
	}
	i, f, kind := number(v)
	if kind == intNumber {
		return float64(i), i, kind
	}
	return f, 0, kind
}

// normalize gives the engine's own form of a scalar: numbers as int64 or float64.
func normalize(v any) any {
	switch v.(type) {
	case nil, bool, string, int64, float64, map[string]any, []any:
		return v
	}
	switch i, f, kind := number(v); kind {
	case intNumber:
		return i
	case floatNumber:
		return f
	}
	return v
}

// listItems returns the items of anything yaql iterates: lists, iterators, sets. Strings
// and dicts are not iterable here, as in yaql.
func listItems(v any) ([]any, bool) {
	switch c := v.(type) {
	case []any:
		return c, true
	case *iterator:
		return c.items, true
	case *set:
		return c.items, true
	}
	return nil, false
}

// Truthy is Python's truth value of a result, as Nailgun's `if not result` tests a condition.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case *set:
		return len(x.items) > 0
	case *iterator, undefinedValue:
		return true
	}
	if f, _, kind := numeric(v); kind != notNumber {
		return f != 0
	}
	return true
}

// samePointer reports whether a and b are the same map, iterator or set, or slices over
// the same array of the same length: then they are equal without looking inside (the
// planner passes the identical document as old and new when a node's data did not change,
// and a Cache gives both the same result).
func samePointer(a, b any) bool {
	switch x := a.(type) {
	case *iterator:
		y, ok := b.(*iterator)
		return ok && x == y
	case *set:
		y, ok := b.(*set)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && x != nil && y != nil && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && len(x) > 0 && &x[0] == &y[0]
	}
	return false
}

// meter is what comparisons take from an evaluation: its step count, to which they add
// the values they visit, its budget of steps, and its Cache, which remembers whether two
// large dicts are equal.
type meter struct {
	steps, maxSteps int
	cache           *Cache
}

// spent reports whether the steps are past the budget. Comparisons then stop, answering
// at once (not equal, not found): the evaluation fails at its next checkSteps, so the
// answer is never used, and a comparison of every item with every other cannot run on
// for minutes before the budget is looked at.
func (m *meter) spent() bool { return m.steps > m.maxSteps }

// equal is Python's ==. Before finalization an iterator equals only itself; finalized
// (finalized true) it compares as the list it becomes.
func equal(a, b any, finalized bool, m *meter) bool {
	m.steps++
	if m.spent() {
		return false
	}
	if samePointer(a, b) {
		return true
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		if ok && len(x) == len(y) {
			m.steps += len(x) / 64 // comparing long strings costs as a scan does (evaluator.scan)
		}
		return ok && x == y
	case undefinedValue:
		_, ok := b.(undefinedValue)
		return ok
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if len(x) >= rememberedEqualLen && m.cache != nil {
			return m.cache.equalMaps(x, y, finalized, m)
		}
		return equalMaps(x, y, finalized, m)
	case *set:
		y, ok := b.(*set)
		if !ok || len(x.items) != len(y.items) {
			return false
		}
		for _, item := range x.items {
			if !contains(y.items, item, m) {
				return false
			}
		}
		return true
	case []any, *iterator:
		return equalLists(a, b, finalized, m)
	}
	if _, ok := b.(*iterator); ok {
		return false
	}
	xf, xi, xk := numeric(a)
	yf, yi, yk := numeric(b)
	if xk == notNumber || yk == notNumber {
		return false
	}
	if xk == intNumber && yk == intNumber {
		return xi == yi
	}
	return xf == yf
}

// equalRoot is equal for the two sides of a comparison (=, changed()): two dicts there are
// remembered by a Cache whatever their size, as the same pair comes back for every node.
func equalRoot(a, b any, finalized bool, m *meter) bool {
	x, ok1 := a.(map[string]any)
	y, ok2 := b.(map[string]any)
	if ok1 && ok2 && m.cache != nil && len(x) == len(y) && len(x) > 0 && !samePointer(x, y) {
		m.steps++
		return m.cache.equalMaps(x, y, finalized, m)
	}
	return equal(a, b, finalized, m)
}

func equalMaps(x, y map[string]any, finalized bool, m *meter) bool {
	for k, xv := range x {
		yv, ok := y[k]
		if !ok || !equal(xv, yv, finalized, m) {
			return false
		}
	}
	return true
}

func equalLists(a, b any, finalized bool, m *meter) bool {
	if samePointer(a, b) {
		return true
	}
	xi, xIter := a.(*iterator)
	yi, yIter := b.(*iterator)
	if (xIter || yIter) && !finalized {
		return xIter && yIter && xi == yi
	}
	x, ok := listItems(a)
	if _, isSet := a.(*set); isSet || !ok {
		return false
	}
	y, ok := listItems(b)
	if _, isSet := b.(*set); isSet || !ok || len(x) != len(y) {
		return false
	}
	for i := range x {
		if !equal(x[i], y[i], finalized, m) {
			return false
		}
	}
	return true
}

func contains(items []any, v any, m *meter) bool {
	for _, item := range items {
		if equal(v, item, false, m) {
			return true
		}
		if m.spent() {
			return false
		}
	}
	return false
}

// sortedKeys lists a dict's keys in order: Go maps have none, and sorted is what the same
// document gives in Python when it was loaded from sorted JSON.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// hashOf hashes v consistently with equal (before finalization): equal values, such as 1,
// 1.0 and true, hash alike. It groups values for sets and for the sequence matcher of
// added()/deleted(), which then compare within a group; so it looks only one level deep.
func hashOf(v any) uint64 { return hashDepth(v, 1) }

// hashSteps is the work of hashOf(v) in steps: one, and one per item of a collection.
func hashSteps(v any) int { return 1 + size(v) }

const hashPrime = 1099511628211

func hashMix(h, x uint64) uint64 { return (h ^ x) * hashPrime }

// hashString hashes the length and at most the first and last 32 bytes of s: hashing
// the whole of long strings would cost time no step counts.
func hashString(s string) uint64 {
	h := hashMix(14695981039346656037, uint64(len(s)))
	head, tail := s, ""
	if len(s) > 64 {
		head, tail = s[:32], s[len(s)-32:]
	}
	for _, part := range [2]string{head, tail} {
		for i := 0; i < len(part); i++ {
			h = hashMix(h, uint64(part[i]))
		}
	}
	return h
}

func hashDepth(v any, depth int) uint64 {
	switch x := v.(type) {
	case nil:
		return 1
	case string:
		return hashString(x)
	case undefinedValue:
		return 2
	case map[string]any:
		h := hashMix(3, uint64(len(x)))
		if depth > 0 {
			for k, item := range x {
				h += hashMix(hashString(k), hashDepth(item, depth-1)) // order-independent
			}
		}
		return h
	case *set:
		h := hashMix(4, uint64(len(x.items)))
		if depth > 0 {
			for _, item := range x.items {
				h += hashDepth(item, depth-1)
			}
		}
		return h
	case *iterator:
		return 5 // an iterator equals only itself
	}
	if items, ok := listItems(v); ok {
		h := hashMix(6, uint64(len(items)))
		if depth > 0 {
			for _, item := range items {
				h = hashMix(h, hashDepth(item, depth-1))
			}
		}
		return h
	}
	f, i, kind := numeric(v)
	switch {
	case kind == intNumber:
		return hashMix(7, uint64(i))
	case kind == floatNumber && f == math.Trunc(f) && math.Abs(f) < 1<<63:
		return hashMix(7, uint64(int64(f)))
	case kind == floatNumber:
		return hashMix(8, math.Float64bits(f))
	}
	return 9
}

// interner numbers values by equality: equal values get the same id.
type interner struct {
	buckets map[uint64][]int
	reps    []any
	meter   *meter
}

// id numbers v, seen when an equal value was numbered before. Once the meter's budget
// is spent it gives no answer (id 0, seen): the evaluation fails at its next checkSteps.
func (in *interner) id(v any) (id int, seen bool) {
	if in.buckets == nil {
		in.buckets = map[uint64][]int{}
	}
	in.meter.steps += hashSteps(v)
	if in.meter.spent() {
		return 0, true
	}
	h := hashOf(v)
	for _, candidate := range in.buckets[h] {
		if equal(in.reps[candidate], v, false, in.meter) {
			return candidate, true
		}
		if in.meter.spent() {
			return 0, true
		}
	}
	id = len(in.reps)
	in.reps = append(in.reps, v)
	in.buckets[h] = append(in.buckets[h], id)
	return id, false
}

// finalize turns a result into plain JSON-shaped data, as yaql's #finalize does: iterators
// and sets become lists and numbers int64 or float64. Containers are copied only where
// something inside changes. It costs a step a value it visits: a result can hold one
// collection many times over, 2^n values to visit from n made.
func (ev *evaluator) finalize(v any) (any, error) {
	if err := ev.step(); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case *iterator:
		return ev.finalizeList(x.items, true)
	case *set:
		return ev.finalizeList(x.items, true)
	case []any:
		return ev.finalizeList(x, false)
	case map[string]any:
		var out map[string]any
		for k, item := range x {
			f, err := ev.finalize(item)
			if err != nil {
				return nil, err
			}
			if out == nil && !sameValue(f, item) {
				out = make(map[string]any, len(x))
				for k2, v2 := range x {
					out[k2] = v2
				}
			}
			if out != nil {
				out[k] = f
			}
		}
		if out == nil {
			return x, nil
		}
		return out, nil
	}
	return normalize(v), nil
}

func (ev *evaluator) finalizeList(items []any, copyAlways bool) ([]any, error) {
	var out []any
	if copyAlways {
		out = make([]any, len(items))
		copy(out, items)
	}
	for i, item := range items {
		f, err := ev.finalize(item)
		if err != nil {
			return nil, err
		}
		if out == nil && !sameValue(f, item) {
			out = make([]any, len(items))
			copy(out, items)
		}
		if out != nil {
			out[i] = f
		}
	}
	if out == nil {
		return items, nil
	}
	return out, nil
}

// sameValue reports whether finalize left v as it was.
func sameValue(a, b any) bool {
	switch a.(type) {
	case map[string]any, []any:
		return samePointer(a, b) || (isEmpty(a) && isEmpty(b))
	}
	t := reflect.TypeOf(a)
	if t != reflect.TypeOf(b) {
		return false
	}
	return t == nil || !t.Comparable() || a == b
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
