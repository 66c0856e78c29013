package graphs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

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
	re    *regexp.Regexp
}

// isPattern reports whether a name is written "/re/".
func isPattern(name string) bool {
	return len(name) >= 2 && strings.HasPrefix(name, "/") && strings.HasSuffix(name, "/")
}

// compileName returns the matcher of a name; an invalid "/re/" is an error.
func compileName(name string) (nameMatcher, error) {
	if !isPattern(name) {
		return nameMatcher{exact: name}, nil
	}
	re, err := regexp.Compile(name[1 : len(name)-1])
	if err != nil {
		return nameMatcher{}, fmt.Errorf("invalid regular expression %s: %v", name, err)
	}
	return nameMatcher{re: re}, nil
}

func (m nameMatcher) match(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return m.exact == s
}
