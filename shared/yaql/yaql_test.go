package yaql

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// doc is the data of the unit tests, in the shapes the planner passes: numbers as int,
// float64 and json.Number.
func doc() map[string]any {
	return map[string]any{
		"a":     1,
		"f":     1.5,
		"n":     json.Number("7"),
		"s":     "str",
		"t":     true,
		"none":  nil,
		"l":     []any{1, 2},
		"d":     map[string]any{"x": 1, "y": nil},
		"roles": []any{"primary-controller", "cinder"},
		"nodes": map[string]any{
			"node-1": map[string]any{"uid": "1", "fqdn": "node-1.local", "node_roles": []any{"primary-controller"}},
			"node-2": map[string]any{"uid": "2", "fqdn": "node-2.local", "node_roles": []any{"compute"}},
		},
	}
}

func eval(t *testing.T, src string, env Env) (any, error) {
	t.Helper()
	e, err := Compile(src)
	if err != nil {
		return nil, err
	}
	if e.Source() != src {
		t.Fatalf("Source() = %q", e.Source())
	}
	return e.Eval(context.Background(), env)
}

// finalized is finalize outside an evaluation, for data a test made.
func finalized(v any) any {
	ev := &evaluator{ctx: context.Background(), meter: meter{maxSteps: DefaultSteps}}
	f, err := ev.finalize(v)
	if err != nil {
		panic(err)
	}
	return f
}

func asJSON(v any) string {
	if isUndefined(v) {
		return "<undefined>"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "!" + err.Error()
	}
	return string(raw)
}

type evalCase struct {
	src, want string // want: the JSON of the result, or "error"
}

func runCases(t *testing.T, env Env, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		got, err := eval(t, c.src, env)
		switch {
		case c.want == "error" && err == nil:
			t.Errorf("%s = %s, want an error", c.src, asJSON(got))
		case c.want != "error" && err != nil:
			t.Errorf("%s: %v, want %s", c.src, err, c.want)
		case c.want != "error" && asJSON(got) != c.want:
			t.Errorf("%s = %s, want %s", c.src, asJSON(got), c.want)
		}
	}
}

func TestOperators(t *testing.T) {
	runCases(t, Env{New: doc()}, []evalCase{
		{"1 + 2 * 3", "7"},
		{"(1 + 2) * 3", "9"},
		{"7 / 2", "3"},
		{"-7 / 2", "-4"},
		{"7.0 / 2", "3.5"},
		{"7 mod -2", "-1"},
		{"-7 mod 2", "1"},
		{"7 / 0", "error"},
		{"1 + 1.5", "2.5"},
		{"$.n + 1", "8"},
		{"-$.a", "-1"},
		{"- 3", "-3"},
		{"9223372036854775807 + 1", "error"},
		{"true + 1", "error"},
		{"'a' + 'b'", `"ab"`},
		{"'a' + 1", "error"},
		{"[1] + [2]", "[1,2]"},
		{"$.l + [3]", "[1,2,3]"},
		{"$.d + {z => 1}", `{"x":1,"y":null,"z":1}`},
		{"2 * [1]", "[1,1]"},
		{"6 = 6.0", "true"},
		{"$.t = 1", "true"},
		{"$.n = 7", "true"},
		{"[1, 2] = [1, 2]", "true"},
		{"{a => 1} = dict(a => 1)", "true"},
		{"1 != 2", "true"},
		{"5 > null", "true"},
		{"null > 5", "false"},
		{"null >= null", "true"},
		{"'b' > 'a'", "true"},
		{"'b' > 1", "error"},
		{"true > 0", "error"},
		{"2 >= 1.5", "true"},
		{"not 1", "false"},
		{"not null", "true"},
		{"not $.a = 2", "true"}, // not binds looser than =
		{"not true and false", "false"},
		{"1 and 2", "2"}, // and/or give Python's operand
		{"0 or 'x'", `"x"`},
		{"null or []", "[]"},
		{"$.none and $.missing.missing", "null"}, // the right side is not evaluated
		{"'x' in $.l", "false"},
		{"1 in $.l", "true"},
		{"1.0 in $.l", "true"},
		{"true in $.l", "true"},
		{"1 in $.d", "error"},
		{"'tr' in $.s", "true"},
		{"'str' =~ '^s'", "true"},
		{"'str' !~ '^s'", "false"},
		{"$.l.where($ > 1) = [2]", "false"}, // a lazy result equals only itself, as in Python
	})
}

func TestAttributesAndIndexes(t *testing.T) {
	runCases(t, Env{New: doc()}, []evalCase{
		{"$", asJSON(finalized(doc()))},
		{"$.d.x", "1"},
		{"$.missing", "null"},
		{"$.missing.deeper", "error"},
		{"$.s.x", "error"},
		{"$.none?.x", "null"},
		{"[$.d, $.d].x", "[1,1]"},
		{"[$.d, 1].x", "error"},
		{"$.nodes.values().uid", `["1","2"]`},
		{"$.l[0]", "1"},
		{"$.l[-1]", "2"},
		{"$.l[5]", "error"},
		{"$.d['x']", "1"},
		{"$.d['z']", "error"},
		{"$.d['z', 3]", "3"},
		{"$.l.where(true)[0]", "error"},
		{"$foo", "null"},
		{"$1", asJSON(finalized(doc()))},
		{"$.l.select($1 + 1)", "[2,3]"},
		{"compute", `"compute"`},
		{"None", `"None"`},
		{"{'a' => 1}.a", "1"},
		{"[1, 2][1]", "2"},
		{`"a\tb\u00e9"`, `"a\tbé"`},
		{"`a\\b`", `"a\\b"`},
	})
}

func TestFunctions(t *testing.T) {
	runCases(t, Env{New: doc(), Vars: map[string]any{"node": map[string]any{"k": "v"}}}, []evalCase{
		{"$.d.get(x)", "1"},
		{"$.d.get('z')", "null"},
		{"$.d.get('z', 'default')", `"default"`},
		{"$.get('none', 'default')", "null"}, // a key that holds null is found
		{"$.a.get('x')", "error"},
		{"get($.d, 'x')", "error"}, // get is a method
		{"$.nodes.keys()", `["node-1","node-2"]`},
		{"$.d.items()", `[["x",1],["y",null]]`},
		{"dict($.d.items())", `{"x":1,"y":null}`},
		{"dict(a => 1, b => 2)", `{"a":1,"b":2}`},
		{"dict(1 => 2)", "error"},
		{"$.d.set('z', 2)", `{"x":1,"y":null,"z":2}`},
		{"$.d.set({x => 5})", `{"x":5,"y":null}`},
		{"$.d.set(x => 5, w => 6)", `{"w":6,"x":5,"y":null}`},
		{"$.l.where($ > 1)", "[2]"},
		{"$.l.select($ * 2)", "[2,4]"},
		{"$.nodes.values().where($.node_roles.any($.matches('controller'))).fqdn", `["node-1.local"]`},
		{"$.l.any()", "true"},
		{"[].any()", "false"},
		{"$.l.any($ > 1)", "true"},
		{"any($.l, $ > 5)", "false"},
		{"[1, 0].all()", "false"},
		{"$.l.all($ > 0)", "true"},
		{"$.l.first()", "1"},
		{"[].first()", "error"},
		{"[].first(9)", "9"},
		{"len($.l)", "2"},
		{"$.l.len()", "2"},
		{"len($.d)", "2"},
		{"len('héllo')", "5"},
		{"len(null)", "error"},
		{"len($.roles.toSet().intersect(['cinder', 'x'].toSet()))", "1"},
		{"[1, 2, 2, 1.0].toSet()", "[1,2]"},
		{"[1].intersect([1])", "error"},
		{"concat('node-', $.nodes.get('node-1').uid)", `"node-1"`},
		{"concat('a', null)", "error"},
		{"concat([1], [2])", "[1,2]"},
		{"$.l.concat([3])", "[1,2,3]"},
		{"'a'.concat('b')", "error"},
		{"[1, [2, [3]]].flatten()", "[1,2,3]"},
		{"'ab'.matches('b')", "true"},
		{"'ab'.matches('^b')", "false"},
		{"'ab'.matches('(')", "error"},
		{"$.a.matches('1')", "error"},
		{"switch(false => 1, null => 2)", "null"},
		{"switch(false => 1, true => 2)", "2"},
		{"switch($.roles.any($.matches('^(primary-)?(mongo)$')) => [], true => [{name => 'virtual_ips', role => $.roles}])",
			`[{"name":"virtual_ips","role":["primary-controller","cinder"]}]`},
		{"[{name=>'primary-cluster', role=>$.roles.select('primary-' + $)}]",
			`[{"name":"primary-cluster","role":["primary-primary-controller","primary-cinder"]}]`},
		{"coalesce(null, $.none, 3)", "3"},
		{"bool([])", "false"},
		{"$.d.toJson()", `"{\"x\":1,\"y\":null}"`},
		{"$node.toYaml()", `"k: v\n"`},
		{"{'old' => $.l}.toYaml()", `"old:\n- 1\n- 2\n"`},
		{"unknown(1)", "error"},
		{"$.l.len(1)", "error"},
		{"let(x => 1) -> $x", "error"}, // not supported: no task of Fuel's uses it
	})
}

// The cases of Nailgun's nailgun/test/unit/test_yaql_ext.py.
func TestNailgunYaqlExt(t *testing.T) {
	data := func() (newData, oldData map[string]any) {
		newData = map[string]any{
			"nodes":   []any{map[string]any{"uid": "1", "role": "compute"}, map[string]any{"uid": "2", "role": "controller"}},
			"configs": map[string]any{"nova": map[string]any{"value": 1, "value2": nil}},
			"cluster": map[string]any{"status": "operational"},
		}
		oldData = map[string]any{
			"nodes":   []any{map[string]any{"uid": "1", "role": "controller"}, map[string]any{"uid": "2", "role": "compute"}},
			"configs": map[string]any{"nova": map[string]any{"value": 2, "value2": nil}},
			"cluster": map[string]any{"status": "new"},
		}
		return newData, oldData
	}
	newData, oldData := data()
	runCases(t, Env{New: newData, Old: oldData}, []evalCase{
		{"new($.nodes.where($.role=compute))", `[{"role":"compute","uid":"1"}]`},
		{"old($.nodes.where($.role=compute))", `[{"role":"compute","uid":"2"}]`},
		{"added($.nodes.where($.role=compute))", `[{"role":"compute","uid":"1"}]`},
		{"deleted($.nodes.where($.role=compute))", `[{"role":"compute","uid":"2"}]`},
		{"changed($.configs.nova.value)", "true"},
		{"changed($.configs.nova.value2)", "false"},
		{"changedAny($.configs.nova.value2, $.cluster)", "true"},
		{"changedAll($.configs.nova.value2, $.cluster)", "false"},
		{"changedAll($.configs.nova.value, $.cluster)", "true"},
		{"old($.configs.nova.value).isUndef()", "false"},
		{"$.configs.toJson()", `"{\"nova\":{\"value\":1,\"value2\":null}}"`},
	})
	for _, old := range []any{nil, map[string]any{}} { // no old data: Nailgun's {}
		runCases(t, Env{New: newData, Old: old}, []evalCase{
			{"added($.nodes.where($.role=compute))", `[{"role":"compute","uid":"1"}]`},
			{"deleted($.nodes.where($.role=compute))", "null"},
			{"changed($.configs.nova.value)", "true"},
			{"changed($.configs.nova.value2)", "true"},
			{"old($.configs.nova.value).isUndef()", "true"},
			{"old($.configs.nova.value)", "<undefined>"},
			{"old($).isUndef()", "false"},
			{"len(old($))", "0"},
			{"changed($.get('missing'))", "false"}, // null on both sides
			{"old($.configs) or 1", "1"},
			{"old($.configs.nova) or 1", "<undefined>"}, // Undefined is truthy
		})
	}
}

// The cases of Nailgun's nailgun/test/unit/test_datadiff.py, through added() and deleted():
// each pair diffs both ways and against itself.
func TestNailgunDataDiff(t *testing.T) {
	cases := []struct{ a, b, added, deleted string }{
		{`{"a": 1, "b": 2, "c": {"d": {"e": 3}}}`, `{"a": 1, "b": 2, "d": {"e": 3}}`, `{"d":{"e":3}}`, `{"c":{"d":{"e":3}}}`},
		{`[1, 2, 3]`, `[2, 3, 4]`, `[4]`, `[1]`},
		{`[{"a": 1, "b": "1"}, {"a": 3, "b": "3"}]`, `[{"a": 1, "b": "2"}, {"a": 2, "b": "3"}, {"a": 3, "b": "4"}]`,
			`[{"a":1,"b":"2"},{"a":2,"b":"3"},{"a":3,"b":"4"}]`, `[{"a":1,"b":"1"},{"a":3,"b":"3"}]`},
		{`"abc\nbcd"`, `"bcd\ncda"`, `["cda"]`, `["abc"]`},
		{`[[1], [2], [3]]`, `[[2], [3], [4]]`, `[[4]]`, `[[1]]`},
		{`1`, `2`, `2`, `1`},
		{`{"a": 1}`, `[1]`, `[1]`, `{"a":1}`}, // different types: the whole values
	}
	for _, c := range cases {
		var a, b any
		if err := json.Unmarshal([]byte(c.a), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c.b), &b); err != nil {
			t.Fatal(err)
		}
		old, cur := map[string]any{"v": a}, map[string]any{"v": b}
		runCases(t, Env{New: cur, Old: old}, []evalCase{{"added($.v)", c.added}, {"deleted($.v)", c.deleted}})
		runCases(t, Env{New: old, Old: cur}, []evalCase{{"added($.v)", c.deleted}, {"deleted($.v)", c.added}})
		runCases(t, Env{New: cur, Old: cur}, []evalCase{{"bool(added($.v))", "false"}, {"bool(deleted($.v))", "false"}})
	}
	runCases(t, Env{New: map[string]any{"v": []any{1, 2}}, Old: map[string]any{"v": []any{1, 2}}},
		[]evalCase{{"[1, 2, 3].toSet().intersect([2, 3, 4].toSet())", "[2,3]"}})
	// sets: {1, 2, 3} -> {2, 3, 4}
	setEnv := Env{New: map[string]any{"v": []any{2, 3, 4}}, Old: map[string]any{"v": []any{1, 2, 3}}}
	runCases(t, setEnv, []evalCase{{"added($.v.toSet())", "[4]"}, {"deleted($.v.toSet())", "[1]"}})
}

// Long sequences with repeated items go through difflib's "popular item" heuristic; the
// counts are Python's (difflib.SequenceMatcher(None, a, b) opcodes, as datadiff reads them).
func TestSequenceMatcherAutojunk(t *testing.T) {
	cycle := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = i % 3
		}
		return out
	}
	run := func(from, to int) []any {
		var out []any
		for i := from; i < to; i++ {
			out = append(out, i)
		}
		return out
	}
	changedMiddle := cycle(300)
	changedMiddle[150] = "x"
	for _, c := range []struct {
		name           string
		a, b           []any
		added, deleted int
	}{
		{"one item changed", cycle(300), changedMiddle, 150, 150},
		{"moved block", append(cycle(300), run(100, 110)...), append(run(100, 105), cycle(300)...), 300, 305},
	} {
		m := meter{maxSteps: DefaultSteps}
		added, deleted := diffSequences(c.a, c.b, &m)
		if len(added) != c.added || len(deleted) != c.deleted {
			t.Errorf("%s: added %d, deleted %d items; Python: %d and %d", c.name, len(added), len(deleted), c.added, c.deleted)
		}
	}
}

func TestNumbersOut(t *testing.T) {
	env := Env{New: map[string]any{"i": 6, "j": json.Number("6"), "f": 6.0, "g": json.Number("6.5"), "l": []any{int32(1)}}}
	for src, want := range map[string]any{"$.i": int64(6), "$.j": int64(6), "$.f": 6.0, "$.g": 6.5, "$.i + $.f": 12.0, "$.i * 2": int64(12)} {
		got, err := eval(t, src, env)
		if err != nil || got != want {
			t.Errorf("%s = %#v (%v), want %#v", src, got, err, want)
		}
	}
	got, err := eval(t, "$.l", env)
	if err != nil || got.([]any)[0] != int64(1) {
		t.Errorf("$.l = %#v (%v), want [int64(1)]", got, err)
	}
}

func TestTruthy(t *testing.T) {
	for v, want := range map[any]bool{nil: false, false: false, true: true, 0: false, int64(2): true, 0.0: false, "": false, "x": true, json.Number("0"): false} {
		if Truthy(v) != want {
			t.Errorf("Truthy(%#v) = %v", v, !want)
		}
	}
	for _, v := range []any{[]any{}, map[string]any{}} {
		if Truthy(v) {
			t.Errorf("Truthy(%#v) = true", v)
		}
	}
	if !Truthy(Undefined) || !Truthy([]any{nil}) || !Truthy(map[string]any{"a": nil}) {
		t.Error("Undefined and non-empty collections are truthy")
	}
}

// changed() on the very same document is false without looking inside: a NaN (unequal to
// itself) under the same map does not count as a change, as Python's identity check has it.
func TestChangedSameDocument(t *testing.T) {
	data := map[string]any{"m": map[string]any{"x": math.NaN()}}
	if got, err := eval(t, "changed($.m)", Env{New: data, Old: data}); err != nil || got != false {
		t.Errorf("changed($.m) on the same document = %v (%v), want false", got, err)
	}
	other := map[string]any{"m": map[string]any{"x": math.NaN()}}
	if got, err := eval(t, "changed($.m)", Env{New: data, Old: other}); err != nil || got != true {
		t.Errorf("changed($.m) on an equal-looking copy = %v (%v), want true", got, err)
	}
}

func TestLimits(t *testing.T) {
	big := make([]any, 1000)
	for i := range big {
		big[i] = i
	}
	env := Env{New: map[string]any{"big": big}, Limits: Limits{Steps: 500}}
	_, err := eval(t, "$.big.where($ > 1).len()", env)
	var limit *LimitError
	if !errors.As(err, &limit) || limit.Budget != "step" || err.Error() != "yaql: expression exceeded its step budget (500)" {
		t.Errorf("step budget: %v", err)
	}
	env = Env{New: map[string]any{"big": big}, Limits: Limits{Values: 5000}}
	if _, err := eval(t, "$.big * 10", env); !errors.As(err, &limit) || limit.Budget != "value" {
		t.Errorf("value budget: %v", err)
	}
	if _, err := eval(t, "$.big * 1000000000000", env); !errors.As(err, &limit) {
		t.Errorf("value budget of a huge repeat: %v", err)
	}
	if _, err := eval(t, "$.big.select($).select($).len()", Env{New: map[string]any{"big": big}}); err != nil {
		t.Errorf("default budgets: %v", err)
	}
	// Comparing counts the values it visits.
	copied := append([]any(nil), big...)
	env = Env{New: map[string]any{"big": big, "copy": copied}, Old: map[string]any{"big": copied}, Limits: Limits{Steps: 500}}
	for _, src := range []string{"$.big = $.copy", "changed($.big)", "added($.big)", "5000 in $.big"} {
		if _, err := eval(t, src, env); !errors.As(err, &limit) {
			t.Errorf("%s past the step budget: %v", src, err)
		}
	}
	// old() does not hide an exhausted budget as Undefined.
	env = Env{New: map[string]any{"big": big}, Old: map[string]any{"big": big}, Limits: Limits{Steps: 500}}
	if _, err := eval(t, "old($.big.where(true))", env); !errors.As(err, &limit) {
		t.Errorf("old() past the budget: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, _ := Compile("$.big.where(true)")
	if _, err := e.Eval(ctx, Env{New: map[string]any{"big": big}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestSyntaxErrors(t *testing.T) {
	for src, pos := range map[string]int{
		"$.a +":         5,
		"$.a )":         4,
		"'unterminated": 0,
		"f(1, 2":        6,
		"$.a # b":       4,
		"1 2":           2,
		"__x":           0,
		"[1, 2":         5,
		"$.get ('x')":   6,
		"{a => 1":       7,
		strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300): 200,
	} {
		_, err := Compile(src)
		var syntax *SyntaxError
		if !errors.As(err, &syntax) || syntax.Pos != pos {
			t.Errorf("Compile(%.40q) = %v, want a syntax error at %d", src, err, pos)
		}
	}
	if _, err := Compile(strings.Repeat(" ", MaxSourceBytes) + "1"); err == nil {
		t.Error("an expression over MaxSourceBytes compiles")
	}
}

// One *Expr and one Cache serve many goroutines at once.
func TestConcurrentEval(t *testing.T) {
	e, err := Compile("changedAny($.nodes.values().where($.node_roles.any($.matches('controller'))).fqdn, $.l)")
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := doc()
			old := data
			if i%2 == 1 {
				old = doc()
				old["l"] = []any{3}
			}
			for range 100 {
				got, err := e.Eval(context.Background(), Env{New: data, Old: old, Cache: cache})
				if err != nil || got != (i%2 == 1) {
					t.Errorf("goroutine %d: %v, %v", i, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Compile and Eval never panic, whatever the expression.
func FuzzCompileEval(f *testing.F) {
	for _, seed := range []string{
		"changedAny($.a, $.l.where($ > 1))", "$.d.get('x', 1) + 2", "switch(true => [1], false => {a => 2})",
		"not (1 in [1]) or 'a' =~ 'b'", "$.l[0].x", "concat('a', $.s)", "added($.l).x", "-$.f mod 3",
		"`x` + \"\\u0041\"", "$.nodes.values().fqdn.toSet().intersect([].toSet())", "dict($.d.items()).toYaml()",
	} {
		f.Add(seed)
	}
	data := doc()
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src)
		if err != nil {
			return
		}
		_, _ = e.Eval(context.Background(), Env{New: data, Old: map[string]any{"a": 2}, Limits: Limits{Steps: 10000, Values: 10000}})
	})
}

// A failure on the data is an *EvalError at the failing operation.
func TestEvalErrorPosition(t *testing.T) {
	for src, pos := range map[string]int{
		"$.l + len(1)":         6,
		"$.a.get('x')":         4,
		"1 + 'a'":              2,
		"$.missing.deeper":     9,
		"$.d['z']":             3,
		"[1, $.a => 2]":        0,
		"$.roles.where($ > 1)": 16,
	} {
		_, err := eval(t, src, Env{New: doc()})
		var evalErr *EvalError
		if !errors.As(err, &evalErr) || evalErr.Pos != pos || !strings.HasPrefix(err.Error(), "yaql: ") {
			t.Errorf("%s: %v, want an EvalError at %d", src, err, pos)
		}
	}
}

// where($.key = value) with a value fixed per evaluation goes through an index of the
// receiver: the same answers as item by item, for every node sharing one Cache.
func TestWhereLookup(t *testing.T) {
	nodes := []any{
		map[string]any{"uid": "1", "n": 1}, map[string]any{"uid": "2", "n": 1.0},
		map[string]any{"uid": "3", "n": true}, map[string]any{"n": nil}, map[string]any{"uid": "1", "n": 2},
	}
	cache := NewCache()
	for _, c := range []struct {
		uid  any
		src  string
		want string
	}{
		{"1", "$.nodes.where($.uid = new($.uid)).n", "[1,2]"},
		{"2", "$.nodes.where($.uid = new($.uid)).n", "[1]"},
		{nil, "$.nodes.where($.uid = new($.uid)).n", "[null]"},
		{"9", "$.nodes.where($.uid = new($.uid)).n", "[]"},
		{"1", "$.nodes.where($.n = 1).uid", `["1","2","3"]`},
		{"1", "$.nodes.where($.uid = old($.uid)).n", "[1,2]"},
		{"1", "$.mixed.where($.uid = new($.uid))", "error"}, // an item without attributes
		{"1", "$.empty.where($.uid = new($.missing.x))", "[]"},
	} {
		data := map[string]any{"uid": c.uid, "nodes": nodes, "mixed": []any{map[string]any{"uid": "1"}, 5}, "empty": []any{}}
		got, err := eval(t, c.src, Env{New: data, Old: data, Cache: cache})
		switch {
		case c.want == "error" && err == nil:
			t.Errorf("uid %v: %s = %s, want an error", c.uid, c.src, asJSON(got))
		case c.want != "error" && (err != nil || asJSON(got) != c.want):
			t.Errorf("uid %v: %s = %s (%v), want %s", c.uid, c.src, asJSON(got), err, c.want)
		}
	}
}

// Env.Trace hears every data-diff comparison, with the call's and the
// argument's text and both values: what explains a condition's value.
func TestTraceDataDiffCalls(t *testing.T) {
	e, err := Compile(`changedAny($.a, $.b.c) and not changed($.d) and old($.d) = 4`)
	if err != nil {
		t.Fatal(err)
	}
	var calls []DiffCall
	env := Env{
		New:   map[string]any{"a": int64(1), "b": map[string]any{"c": "new"}, "d": int64(4)},
		Old:   map[string]any{"a": int64(1), "b": map[string]any{"c": "old"}, "d": int64(4)},
		Trace: func(c DiffCall) { calls = append(calls, c) },
	}
	v, err := e.Eval(context.Background(), env)
	if err != nil || v != true {
		t.Fatalf("Eval = %v, %v", v, err)
	}
	want := []DiffCall{
		{Func: "changedAny", Call: "changedAny($.a, $.b.c)", Arg: "$.a", Old: int64(1), New: int64(1), Result: false},
		{Func: "changedAny", Call: "changedAny($.a, $.b.c)", Arg: "$.b.c", Old: "old", New: "new", Result: true},
		{Func: "changed", Call: "changed($.d)", Arg: "$.d", Old: int64(4), New: int64(4), Result: false},
		{Func: "old", Call: "old($.d)", Arg: "$.d", Old: int64(4), New: Undefined, Result: int64(4)},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("traced:\n%#v\nwant\n%#v", calls, want)
	}
}
