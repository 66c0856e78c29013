package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// Expression is a value fuel-library gives as {yaql_exp: "..."} instead of
// a constant (a condition, a strategy's amount, a cross dependency list):
// it is compiled when the task is read and evaluated per node at plan time,
// with the node's deployment data as $.
type Expression struct {
	expr *yaql.Expr
}

// MarshalJSON writes the expression back as it was given.
func (e *Expression) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"yaql_exp": e.expr.Source()})
}

// compiledBytes is about what the tasks' compiled expressions hold in memory
// beyond their JSON (yaql.Expr.Bytes): a few bytes of regular expression can
// compile to 50 KB, so caches of decoded tasks count it.
func CompiledBytes(tasks []Task) int64 {
	var n int64
	for _, t := range tasks {
		n += t.CompiledBytes()
	}
	return n
}

func (t Task) CompiledBytes() int64 {
	var n int64
	for _, e := range []*Expression{t.CrossDepends.Expr, t.CrossDependedBy.Expr} {
		n += e.bytes()
	}
	if t.Condition != nil {
		n += t.Condition.Expr.bytes()
	}
	if t.Strategy != nil {
		n += t.Strategy.AmountExpr.bytes()
	}
	return n
}

func (e *Expression) bytes() int64 {
	if e == nil {
		return 0
	}
	return e.expr.Bytes()
}

// Eval evaluates the expression on one node's data.
func (e *Expression) Eval(ctx context.Context, env yaql.Env) (any, error) {
	return e.expr.Eval(ctx, env)
}

// isExpression reports whether raw is an object with a yaql_exp key.
func isExpression(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	_, ok := fields["yaql_exp"]
	return ok
}

// decodeExpression decodes and compiles {yaql_exp: "..."}.
func decodeExpression(raw json.RawMessage) (*Expression, error) {
	var fields map[string]json.RawMessage
	if err := decodeObject(raw, &fields); err != nil {
		return nil, fieldErrorf("", "must be {yaql_exp: ...}")
	}
	src, ok := fields["yaql_exp"]
	if !ok || len(fields) != 1 {
		return nil, fieldErrorf("", "must be {yaql_exp: ...} and nothing else")
	}
	text, err := decodeString(src)
	if err != nil {
		return nil, under("yaql_exp", err)
	}
	expr, err := yaql.Compile(text)
	if err != nil {
		return nil, fieldErrorf("yaql_exp", "%v", err)
	}
	return &Expression{expr: expr}, nil
}

// A name in a placement (tags, role, roles, groups) or in a cross dependency
// (name, role, tags) is matched as Nailgun's NameMatchingPolicy does: "/re/"
// is a regular expression found anywhere in the name (Python's re.search),
// anything else must equal it.
type nameMatcher struct {
	exact string
	re    *yaql.Pattern
}

// isPattern reports whether a name is written "/re/".
func isPattern(name string) bool {
	return len(name) >= 2 && strings.HasPrefix(name, "/") && strings.HasSuffix(name, "/")
}

// compileName returns the matcher of a name; an invalid "/re/", or one over
// yaql.MaxPatternInsts, is an error.
func compileName(name string) (nameMatcher, error) {
	if !isPattern(name) {
		return nameMatcher{exact: name}, nil
	}
	re, err := yaql.CompilePattern(name[1 : len(name)-1])
	if err != nil {
		return nameMatcher{}, fmt.Errorf("invalid regular expression %s: %v", name, err)
	}
	return nameMatcher{re: re}, nil
}

// Patterns holds the compiled "/re/" names of plans by their text, within a
// budget (graphs gives them a share of its cache, WithCacheBytes).
type Patterns = cache.LRU[string, nameMatcher]

// NewPatterns returns a cache of compiled names holding at most maxBytes.
func NewPatterns(maxBytes int64) *Patterns {
	return cache.New[string](maxBytes, func(m nameMatcher) int64 {
		return cache.EntryOverhead + 2*int64(len(m.re.String())) + m.re.Bytes()
	})
}

// compileNameIn is compileName through c (nil: none).
func compileNameIn(c *Patterns, name string) (nameMatcher, error) {
	if c == nil || !isPattern(name) {
		return compileName(name)
	}
	if m, ok := c.Get(name); ok {
		return m, nil
	}
	m, err := compileName(name)
	if err == nil {
		c.Add(name, m)
	}
	return m, err
}

func (m nameMatcher) match(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return m.exact == s
}
