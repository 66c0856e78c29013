package yaql

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func wantLimit(t *testing.T, what string, err error, budget string, plan bool) {
	t.Helper()
	var limit *LimitError
	if !errors.As(err, &limit) || limit.Budget != budget || limit.Plan != plan {
		t.Errorf("%s: %v, want a %s LimitError (plan %v)", what, err, budget, plan)
	}
}

// The attack of issue 35: a string + counted as one value whatever its length, so 33
// doublings of 'a' ran the server out of memory. Its bytes are counted now.
func TestStringDoublingStopsAtTheByteBudget(t *testing.T) {
	src := "['a']" + strings.Repeat(".select($+$)", 33) + ".len() > 0"
	_, err := eval(t, src, Env{New: map[string]any{}})
	wantLimit(t, "33 doublings", err, "byte", false)
	for _, src := range []string{"concat($.s, $.s, $.s)", "$.s.toJson()", "[$.s, $.s].toYaml()", "[$.s] * 3 + [1]"} {
		_, err := eval(t, "("+src+").toJson()", Env{New: map[string]any{"s": strings.Repeat("x", 1000)}, Limits: Limits{Bytes: 1500}})
		wantLimit(t, src, err, "byte", false)
	}
	if got, err := eval(t, "concat($.s, $.s) + $.s", Env{New: map[string]any{"s": "ab"}, Limits: Limits{Bytes: 10}}); err != nil || got != "ababab" {
		t.Errorf("within the byte budget: %v, %v", got, err)
	}
}

// Matching and searching long strings costs steps by their length, counted before the
// work is done: 8M characters matched took 9.3 s of CPU outside every budget.
func TestLongStringsCostSteps(t *testing.T) {
	long := strings.Repeat("a", 8<<20)
	env := Env{New: map[string]any{"s": long, "p": "(a|b|c)*x", "l": []any{long, long}}, Vars: map[string]any{"t": strings.Clone(long)}}
	for _, src := range []string{"$.s.matches('(a|b|c)*x')", "$.s =~ '(.*)(.*)z'", "$.s.matches($.p)", "$.s !~ $.p"} {
		_, err := eval(t, src, env)
		wantLimit(t, src, err, "step", false)
	}
	env.Limits.Steps = 100_000 // under the 131,072 of a pass over 8M characters
	for _, src := range []string{"$.l.where($ = $t).len()", "'b' in $.s", "[$.s].where($ < $t)", "$.l.toSet()"} {
		_, err := eval(t, src, env)
		wantLimit(t, src, err, "step", false)
	}
	if got, err := eval(t, "'node-12'.matches('^node-[0-9]+$')", Env{Limits: Limits{Steps: 1000}}); err != nil || got != true {
		t.Errorf("a short match: %v, %v", got, err)
	}
}

// A Budget bounds the evaluations of a request together.
func TestBudgetAcrossEvaluations(t *testing.T) {
	e, err := Compile("$.l.select($ + 1).len()")
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{"l": []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	budget := NewBudget(BudgetLimits{Steps: 100})
	var failed error
	for range 10 {
		if _, failed = e.Eval(context.Background(), Env{New: data, Budget: budget}); failed != nil {
			break
		}
	}
	wantLimit(t, "the tenth evaluation", failed, "step", true)
	if steps, _ := budget.Used(); steps < 100 {
		t.Errorf("used %d steps of 100", steps)
	}
	if want := "yaql: the request's expressions exceeded their step budget (100 together)"; failed == nil || failed.Error() != want {
		t.Errorf("message %v, want %q", failed, want)
	}

	bytes := NewBudget(BudgetLimits{Bytes: 100})
	concat, _ := Compile("$.s + $.s")
	for i := range 3 {
		_, err := concat.Eval(context.Background(), Env{New: map[string]any{"s": strings.Repeat("y", 20)}, Budget: bytes})
		if i < 2 && err != nil {
			t.Fatalf("evaluation %d: %v", i, err)
		}
		if i == 2 {
			wantLimit(t, "the third 40 bytes of 100", err, "byte", true)
		}
	}
}

// The budget's time ends the request's context with the budget as its cause.
func TestBudgetTime(t *testing.T) {
	budget := NewBudget(BudgetLimits{Time: time.Millisecond})
	ctx, cancel := budget.Context(context.Background())
	defer cancel()
	<-ctx.Done()
	e, _ := Compile("$.l.where(true)")
	_, err := e.Eval(ctx, Env{New: map[string]any{"l": []any{1}}, Budget: budget})
	wantLimit(t, "past the deadline", err, "time", true)
	if want := "yaql: the request's expressions exceeded their time budget (1ms together)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// What would fail on every evaluation fails on upload.
func TestCompileRefuses(t *testing.T) {
	for src, want := range map[string]string{
		"$.l + unknown(1)":                `at position 6: unknown function "unknown"`,
		"$.a.matches('(')":                `bad regular expression "("`,
		"$.a =~ '[a-z]{1000}[0-9]{1000}'": "over the limit of 2000",
		strings.Repeat("$.a.matches('[a-z]{1000}') or ", 30) + "true": "compile to over 1048576 bytes",
	} {
		_, err := Compile(src)
		var syntax *SyntaxError
		if !errors.As(err, &syntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a SyntaxError with %q", src, err, want)
		}
	}
}

// Bytes counts the compiled tree and its regular expressions, which can be a thousand
// times their source.
func TestExprBytes(t *testing.T) {
	small, _ := Compile("$.a = 1")
	pattern, _ := Compile("$.a.matches('[a-z]{1000}')")
	if small.Bytes() > 1000 || pattern.Bytes() < 48_000 {
		t.Errorf("Bytes() = %d and %d", small.Bytes(), pattern.Bytes())
	}
}

// A Cache shared by a plan's evaluations keeps at most DefaultCacheValues values:
// issue 35's 200 conditions of 490,000 values each kept 1.1 GB until the plan ended.
func TestCacheKeepsItsShare(t *testing.T) {
	cache := NewCache()
	e, _ := Compile("$.l.select([$] * 100).len()")
	for i := range 30 {
		l := make([]any, 1000)
		for k := range l {
			l[k] = i
		}
		if _, err := e.Eval(context.Background(), Env{New: map[string]any{"l": l}, Cache: cache}); err != nil {
			t.Fatal(err)
		}
	}
	// Each evaluation would keep two results: select()'s 101,000 values and len()'s.
	if cache.kept > DefaultCacheValues || len(cache.results) >= 60 || len(cache.results) == 0 {
		t.Errorf("the cache keeps %d values in %d results", cache.kept, len(cache.results))
	}
	// A result keeps its receiver: all() on each of 500 lists of 1,000 items made
	// before costs the list, so a thousand such results fill the cache, not 2,000.
	cache = NewCache()
	e, _ = Compile("$.l.select([$] * 1000).all($.all($ >= 0))")
	for i := range 4 {
		l := make([]any, 500)
		for k := range l {
			l[k] = i
		}
		if _, err := e.Eval(context.Background(), Env{New: map[string]any{"l": l}, Cache: cache}); err != nil {
			t.Fatal(err)
		}
	}
	if cache.kept > DefaultCacheValues || len(cache.results) > 1000 {
		t.Errorf("the cache keeps %d values in %d results", cache.kept, len(cache.results))
	}
}

// Comparisons stop at the step budget instead of counting their steps once done:
// intersect() and set equality compare every item with every other, toSet() every item
// with those of its hash (strings of one length, head and tail share one), and added()
// matches lists as difflib does, which counted nothing. Sets of 131,072 strings took
// minutes of CPU, two lists of 20,000 numbers in node data over eight.
func TestComparisonsStopAtTheStepBudget(t *testing.T) {
	strs := func(format string, n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, i)
		}
		return out
	}
	a := strs("a%06d", 2000)
	reversed := slices.Clone(a)
	slices.Reverse(reversed)
	pad := strings.Repeat("p", 32)
	cycle := func(step int) []any {
		out := make([]any, 2000)
		for i := range out {
			out[i] = i * step % 150
		}
		return out
	}
	env := Env{
		New: map[string]any{"a": a, "b": strs("b%06d", 2000), "reversed": reversed, "padded": strs(pad+"%06d"+pad, 2000), "l": cycle(1)},
		Old: map[string]any{"l": cycle(7)},
	}
	const limit = 50_000
	for _, src := range []string{"$.a.toSet().intersect($.b.toSet())", "$.a.toSet() = $.reversed.toSet()", "$.padded.toSet()", "added($.l)"} {
		env.Budget = NewBudget(BudgetLimits{Steps: limit})
		_, err := eval(t, src, env)
		wantLimit(t, src, err, "step", true)
		if steps, _ := env.Budget.Used(); steps > limit+limit/10 {
			t.Errorf("%s: %d steps spent of %d", src, steps, limit)
		}
	}
}

// heapAllocated is the bytes of heap that f allocates.
func heapAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Values are counted before they are made, not once made: flatten() and concat() of a
// list given many times, and added() splitting a string of many lines, made a list of
// every item and then failed (concat() of 200 data lists: 934 MB against a budget of a
// million values; added() of 8M newlines: 1.5 GB).
func TestValuesCountedBeforeTheyAreMade(t *testing.T) {
	list := make([]any, 10_000)
	env := Env{
		New:    map[string]any{"l": list, "s": strings.Repeat("\n", 100_000)},
		Old:    map[string]any{"s": "x"},
		Limits: Limits{Values: 1000},
	}
	fifty := strings.TrimSuffix(strings.Repeat("$.l, ", 50), ", ")
	for name, src := range map[string]string{"flatten() of 50 lists": "[" + fifty + "].flatten()", "concat() of 50 lists": "concat(" + fifty + ")", "added() of 100,000 lines": "added($.s)"} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		made := heapAllocated(func() { _, err = e.Eval(context.Background(), env) })
		wantLimit(t, name, err, "value", false)
		if made > 1<<20 {
			t.Errorf("%s: %d bytes allocated within a budget of 1,000 values", name, made)
		}
	}
}

// toYaml() and toJson() make no more text than the byte budget allows. What they
// reserved before writing was the value's JSON with one byte a character and 8 a
// number, and the rest was counted once written: YAML indents each line by its depth
// (a list 150 dicts deep: 300 bytes an item; 1.7 GB made against 16 MB), JSON escapes
// a control character in 6 bytes and writes a float in up to 24.
func TestSerializingStopsAtTheByteBudget(t *testing.T) {
	deep := strings.Repeat("{a => ", 150) + "['x'] * 10000" + strings.Repeat("}", 150)
	env := Env{New: map[string]any{"s": strings.Repeat("\x01", 100), "f": -1.2345678901234567e-300}}
	const limit = 128 << 10
	for name, src := range map[string]string{
		"toYaml() of a list 150 dicts deep": "(" + deep + ").toYaml()",
		"toJson() of control characters":    "([$.s] * 1000).toJson()",
		"toJson() of floats":                "([$.f] * 10000).toJson()",
	} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		env.Budget = NewBudget(BudgetLimits{Bytes: limit})
		made := heapAllocated(func() { _, err = e.Eval(context.Background(), env) })
		wantLimit(t, name, err, "byte", true)
		if _, bytes := env.Budget.Used(); bytes > limit+limit/8 || made > 16*limit { // the list and the text made up to the budget take under 1 MB
			t.Errorf("%s: %d bytes counted and %d allocated within a budget of %d", name, bytes, made, limit)
		}
	}
	if got, err := eval(t, "[$.s, 0.5].toJson()", Env{New: map[string]any{"s": "\x01\"é"}, Limits: Limits{Bytes: 64}}); err != nil || got != `["\u0001\"é",0.5]` {
		t.Errorf("toJson() within the budget: %q, %v", got, err)
	}
}

// A pattern over MaxPatternInsts is refused before it is expanded and compiled:
// x{1000} is a thousand copies of x once simplified, so "a{1000}" 3,000 times (21 KB)
// took 2 s and 681 MB before its size was looked at, at upload and, for a pattern
// given at run time, on every evaluation of matches() for a step a byte.
func TestOversizedPatternRefusedBeforeCompiling(t *testing.T) {
	src := strings.Repeat("a{1000}", 30)
	var err error
	made := heapAllocated(func() { _, err = CompilePattern(src) })
	if err == nil || !strings.Contains(err.Error(), "over the limit of 2000") || made > 1<<20 {
		t.Errorf("CompilePattern(%q): %v, %d bytes allocated", src[:14]+"...", err, made)
	}
	for _, fits := range []string{strings.Repeat("[a-z]", 1990), "^(node|controller)-[0-9]{1,3}(\\.[a-z]+)*$", "(a|b){600}", "x{2,500}y{1,499}"} {
		if _, err := CompilePattern(fits); err != nil {
			t.Errorf("CompilePattern(%.30q): %v", fits, err)
		}
	}
}

// Hashing a dict or a list reads its items, and costs a step each: toSet() of a
// 1,000-key dict given 100,000 times hashed it 100,000 times in 4.6 s, within
// 200,000 steps and past the context's deadline, and where($.key = value) indexed
// the values of key the same way.
func TestHashingCostsSteps(t *testing.T) {
	big := map[string]any{}
	for i := range 1000 {
		big[fmt.Sprint("k", i)] = i
	}
	items := make([]any, 2000)
	for i := range items {
		items[i] = map[string]any{"key": big}
	}
	env := Env{New: map[string]any{"big": big, "items": items}}
	const limit = 50_000
	for _, src := range []string{"([$.big] * 2000).toSet()", "$.items.where($.key = 1)"} {
		env.Budget = NewBudget(BudgetLimits{Steps: limit})
		_, err := eval(t, src, env)
		wantLimit(t, src, err, "step", true)
		if steps, _ := env.Budget.Used(); steps > limit+limit/10 {
			t.Errorf("%s: %d steps spent of %d", src, steps, limit)
		}
	}
}

// Making a value costs a step, as visiting one does: a condition such as
// ([1] * 999999).len() > 0 allocated 16 MB for four steps, so a request's
// hundred million steps let its conditions allocate terabytes, stopped only
// by its deadline.
func TestMakingValuesCostsSteps(t *testing.T) {
	env := Env{New: map[string]any{}, Budget: NewBudget(BudgetLimits{Steps: 50_000})}
	_, err := eval(t, "([1] * 100000).len() > 0", env)
	wantLimit(t, "a list of 100,000 items", err, "step", true)
}

// An error quotes at most the head of a string it names: a pattern or a key given
// at run time can be megabytes, and a 21 KB pattern was quoted whole (twice: Go's
// error on it quotes it too) in the error, the answer and the log line.
func TestErrorsQuoteTheHeadOfLongStrings(t *testing.T) {
	long := strings.Repeat("a", 100_000)
	env := Env{New: map[string]any{"bad": "(" + long, "big": strings.Repeat("a{1000}", 3000), "key": long}}
	for _, src := range []string{"'x'.matches($.bad)", "'x' =~ $.big", "{}[$.key]"} {
		_, err := eval(t, src, env)
		var failed *EvalError
		if !errors.As(err, &failed) || len(err.Error()) > 1000 {
			t.Errorf("%s: a %d-byte error: %.200s", src, len(fmt.Sprint(err)), err)
		}
	}
	if _, err := Compile("$.a =~ '(" + strings.Repeat("b", 10_000) + "'"); err == nil || len(err.Error()) > 1000 {
		t.Errorf("a constant pattern: a %d-byte error", len(fmt.Sprint(err)))
	}
}

// Finalizing a result costs a step a value it visits: a dict holding the same
// dict twice, n times over, is 2^n values to visit from n+1 made, and
// [1].select({a => $, b => $}) 40 times over took hours of CPU after the
// evaluation, past its deadline, with no budget looking.
func TestFinalizingCostsSteps(t *testing.T) {
	doubled := "[1]" + strings.Repeat(".select({a => $, b => $})", 22)
	for _, src := range []string{doubled, doubled + ".first().toJson()"} {
		env := Env{New: map[string]any{}, Budget: NewBudget(BudgetLimits{Steps: 100_000})}
		_, err := eval(t, src, env)
		wantLimit(t, src[:40]+"...", err, "step", true)
	}
}
