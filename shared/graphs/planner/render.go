package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/wire"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// The placeholders Nailgun's task serializer formatted every string of a
// task with (Python's str.format), and where their values come from.
const (
	// PlaceholderClusterID is the node data's cluster.id.
	PlaceholderClusterID = "CLUSTER_ID"
	// PlaceholderOpenStackVersion is the node data's openstack_version.
	PlaceholderOpenStackVersion = "OPENSTACK_VERSION"
	// PlaceholderMasterIP is the cluster's master_ip setting, else the node data's master_ip.
	PlaceholderMasterIP = "MASTER_IP"
	// PlaceholderCNHostname is the node data's public_ssl.hostname.
	PlaceholderCNHostname = "CN_HOSTNAME"
)

// placeholderValues works out a node's placeholder values from its
// deployment data; a value the data lacks is left out (strings naming it
// stay as they are, and the plan warns).
func PlaceholderValues(data any, masterIP string) map[string]string {
	vars := map[string]string{}
	set := func(name string, v any) {
		if s, ok := formatValue(v); ok {
			vars[name] = s
		}
	}
	set(PlaceholderClusterID, lookupPath(data, "cluster", "id"))
	set(PlaceholderOpenStackVersion, lookupPath(data, "openstack_version"))
	set(PlaceholderCNHostname, lookupPath(data, "public_ssl", "hostname"))
	if masterIP != "" {
		vars[PlaceholderMasterIP] = masterIP
	} else {
		set(PlaceholderMasterIP, lookupPath(data, "master_ip"))
	}
	return vars
}

// lookupPath reads a value by its keys (nil when a key is missing).
func lookupPath(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// formatValue is str() of a scalar as Python formats it into a string.
func formatValue(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return strconv.FormatInt(int64(v), 10), true
		}
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case bool:
		if v {
			return "True", true
		}
		return "False", true
	}
	return "", false
}

// formatPlaceholders is Nailgun's text_format_safe: s.format(**vars), or s
// unchanged when Python could not format it (a field that names no value, a
// positional or empty field, a lone brace). "{{" and "}}" are literal braces.
// Fields with attributes, indexes, conversions other than !s or format
// specs are not formatted (fuel-library has none).
func formatPlaceholders(s string, vars map[string]string) string {
	if !strings.ContainsAny(s, "{}") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{', c == '}' && i+1 < len(s) && s[i+1] == '}':
			b.WriteByte(c)
			i++
		case c == '}':
			return s
		case c == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return s
			}
			field := strings.TrimSuffix(s[i+1:i+1+end], "!s")
			v, ok := vars[field]
			if !ok {
				return s
			}
			b.WriteString(v)
			i += end + 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// renderData is what a node's task bodies are rendered with: its
// placeholder values and what yaql in them sees ($, $%old, $node, $common).
type renderData struct {
	vars map[string]string
	env  yaql.Env
}

// rendered reports whether a value (decoded JSON) has anything a node's
// rendering changes: a string with a brace, or a yaql expression.
func rendered(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["yaql_exp"]; ok {
			return true
		}
		for k, item := range v {
			if k != "regex" && rendered(item) {
				return true
			}
		}
	case []any:
		for _, item := range v {
			if rendered(item) {
				return true
			}
		}
	case string:
		return strings.ContainsAny(v, "{}")
	}
	return false
}

// traverse is Nailgun's utils.traverse: an object with a yaql_exp key is
// replaced by the expression's value, every other string is formatted with
// the placeholders, and values under a key named regex are left alone.
func (t *Task) traverse(ctx context.Context, v any, d *renderData) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if src, ok := v["yaql_exp"]; ok {
			return t.evalParameter(ctx, src, d)
		}
		out := make(map[string]any, len(v))
		for k, item := range v {
			if k == "regex" {
				out[k] = item
				continue
			}
			r, err := t.traverse(ctx, item, d)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			r, err := t.traverse(ctx, item, d)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case string:
		return formatPlaceholders(v, d.vars), nil
	}
	return v, nil
}

// evalParameter evaluates a {yaql_exp: src} found in a task's fields.
func (t *Task) evalParameter(ctx context.Context, src any, d *renderData) (any, error) {
	text, _ := src.(string)
	e, ok := t.fieldExprs[text]
	if !ok {
		// Checked when the task was read; a task built in code may still carry one.
		var err error
		if e, err = yaql.Compile(text); err != nil {
			return nil, fmt.Errorf("task %s: yaql_exp %q: %w", t.ID, text, err)
		}
	}
	v, err := e.Eval(ctx, d.env)
	if err != nil {
		return nil, expressionFailed(err, "task %s: yaql_exp %q: %v", t.ID, text, err)
	}
	if v == yaql.Undefined {
		return nil, nil
	}
	return v, nil
}

// decodeFieldValue decodes a field of a task keeping numbers as written.
func decodeFieldValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// Body returns the task as a node's agent gets it, as Nailgun's task
// serializer sent it: its parameters and its other free-form fields
// rendered with the node's data (rendered), parameters.cwd "/" and
// fail_on_error true unless the task says otherwise. The fields the
// planner interprets (placement, order, condition, cross dependencies) go
// out as written: the plan already applied them. vars are the node's
// placeholder values, env what yaql in the fields sees.
func (t *Task) Body(ctx context.Context, vars map[string]string, env yaql.Env) (wire.TaskDocument, error) {
	d := &renderData{vars: vars, env: env}
	out := *t
	out.Extra = make(map[string]json.RawMessage, len(t.Extra)+1)
	for k, raw := range t.Extra {
		r, err := t.renderField(ctx, raw, d)
		if err != nil {
			return nil, err
		}
		out.Extra[k] = r
	}
	if _, ok := out.Extra["fail_on_error"]; !ok {
		out.Extra["fail_on_error"] = json.RawMessage("true")
	}
	params := map[string]any{}
	if len(t.Parameters) > 0 {
		v, err := decodeFieldValue(t.Parameters)
		if err != nil {
			return nil, err
		}
		if r, err := t.traverse(ctx, v, d); err != nil {
			return nil, err
		} else if m, ok := r.(map[string]any); ok {
			params = m
		}
	}
	if _, ok := params["cwd"]; !ok {
		params["cwd"] = "/"
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("task %s: parameters: %w", t.ID, err)
	}
	out.Parameters = raw
	return json.Marshal(out)
}

// renderField renders one free-form field (unchanged when nothing in it renders).
func (t *Task) renderField(ctx context.Context, raw json.RawMessage, d *renderData) (json.RawMessage, error) {
	v, err := decodeFieldValue(raw)
	if err != nil || !rendered(v) {
		return raw, err
	}
	r, err := t.traverse(ctx, v, d)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// PerNode reports whether the task's body differs between nodes: a field
// other than the planner's holds a placeholder or a yaql expression
// (worked out when the task is read).
func (t *Task) PerNode() bool { return t.bodyPerNode }

// rendersPerNode works out PerNode from the task's fields.
func (t *Task) rendersPerNode() bool {
	if len(t.fieldExprs) > 0 {
		return true
	}
	if len(t.Parameters) > 0 && bytes.ContainsAny(t.Parameters, "{}") {
		if v, err := decodeFieldValue(t.Parameters); err == nil && rendered(v) {
			return true
		}
	}
	for _, raw := range t.Extra {
		if v, err := decodeFieldValue(raw); err == nil && rendered(v) {
			return true
		}
	}
	return false
}

// ReadsData reports whether the task's body evaluates yaql ({yaql_exp: ...}
// in its fields), which reads the node's data.
func (t *Task) ReadsData() bool { return len(t.fieldExprs) > 0 }

// ReadsParts reports whether the task's yaql reads $node or $common, which
// cost a read of their own.
func (t *Task) ReadsParts() bool {
	for src := range t.fieldExprs {
		if strings.Contains(src, "$node") || strings.Contains(src, "$common") {
			return true
		}
	}
	return false
}
