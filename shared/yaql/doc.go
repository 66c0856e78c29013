// Package yaql evaluates the yaql expressions of Fuel's deployment tasks (fuel-library's
// `condition`, `strategy.amount`, `cross-depends`, `parameters` given as {yaql_exp: ...})
// as Nailgun evaluated them with Python's yaql and its LCM extensions.
//
// Compile parses once; an *Expr is immutable and safe for concurrent Eval. Eval sees Env:
// `$` is Env.New, old()/changed() read Env.Old (nil is Nailgun's {}: no earlier run), and
// Env.Vars are the other context variables ($node, $common). Results are JSON-shaped
// (map[string]any, []any, string, bool, nil, int64, float64) or Undefined. An evaluation
// is bounded: Env.Limits counts steps (matching a regular expression and other passes over
// long strings count by their length, before the work), created values and the bytes of
// the strings it makes (*LimitError past any); an Env.Budget bounds the steps and bytes
// of all the evaluations of a request together, and its Context their time; ctx is
// checked as it runs. Sources over MaxSourceBytes, nesting deeper than 200, unknown
// functions and bad or oversized constant patterns are syntax errors, and nothing
// recurses beyond the expression's own nesting or the data's depth.
// A Cache shared by the evaluations of one plan evaluates the closed method chains over
// data every node shares (the same map object) once.
//
// # The subset
//
// Literals: integers, floats, 'strings', "strings" (Python escapes), `verbatim`, true,
// false, null, a bare identifier (a string: `compute`, `None`), [lists], {key => value}.
// Variables: `$` (the data, or a lambda's item; also `$1`), `$name` (Env.Vars; unknown is
// null). Operators, tightest first: `.` and `?.`; `[index]` and `[key, default]`; unary
// `+ -`; `=~ !~`; `* / mod` (an int divided by an int is floored, as in Python); `+ -`
// (numbers; + also joins strings, lists, sets and merges dicts); `> < >= <= = != in`
// (null sorts below everything; = is Python's ==, so 6 = 6.0 and true = 1); `not`; `and`;
// `or` (both give Python's operand, not a bool).
//
// Attribute access: a dict's key, null when missing (the yaql 1.1 Nailgun ran); on a list,
// the attribute of every item. Functions (m = method, f = function, as yaql declares them):
// get(key, default) m; keys() values() items() m; set(key, value | dict | k => v...) m;
// dict(k => v... | pairs) f; where(pred) select(expr) m; any(pred) all(pred) m+f; first(default)
// m; len() m+f; concat(strings | collections) f, concat(collections) m; flatten() m; toSet()
// intersect(set) m; string.matches(regex) m (Python's re.search); switch(cond => value...) f;
// coalesce(args) f; bool(v) f; toYaml() toJson() m. Nailgun's (nailgun/yaql_ext/datadiff.py):
// new(expr) and old(expr) evaluate expr on the new and old data (old gives Undefined when
// expr fails there); changed(expr) compares the two (Undefined differs from everything);
// changedAny/changedAll(exprs...) stop at the first that decides; added(expr)/deleted(expr)
// are nailgun.utils.datadiff's flat diff (dicts by key, sets by difference, lists and
// string lines by difflib's SequenceMatcher), added is the whole new value and deleted null
// when old is Undefined; value.isUndef().
//
// # Differences from python3-yaql (and the yaql Nailgun ran)
//
// The differential test (differential_test.go, testdata/reference.py) checks every
// expression of the shared release graphs on every shared node against python3-yaql; what
// differs is outside what those expressions do:
//
//   - Dicts have no order in Go: keys(), values() and items() list them by sorted key
//     (Python: insertion order; the test gives Python sorted documents).
//   - Evaluation is eager: where(), select() and the like evaluate every item at once where
//     Python iterates lazily, so an error in an item Python never reaches (after first())
//     is an error here; and a result used twice is not exhausted. Until finalized, such a
//     result keeps Python's iterator semantics otherwise: truthy, equal only to itself, not
//     indexable.
//   - A list is a list: data lists equal literal ones (Python: a list never equals a tuple);
//     len() accepts values() (python3-yaql refuses a dict view).
//   - Integers are int64 (overflow is an error), dict keys are strings, regular expressions
//     are Go's RE2 syntax (no backreferences or lookaround) with re.search's semantics.
//   - toJson() gives the same data in Go's layout (sorted keys), not json.dumps' bytes;
//     toYaml() writes PyYAML's block layout, quoting strings its own way (appendYAML).
//   - Budgets are steps, values and bytes, not Nailgun's 5,000 items per collection and
//     20,000 bytes of sys.getsizeof (which two of the release's expressions exceed in Python).
//   - Not supported: `->` and let(), def(), delegates (an error when evaluated), and the
//     rest of yaql's standard library (strings, dates, math, queries beyond the above: an
//     unknown function is a syntax error, where yaql fails when it evaluates it).
package yaql
