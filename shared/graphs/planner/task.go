package planner

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/wire"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// Task types: wire's, the one definition the agent shares without linking the planner.
const (
	TypePuppet          = wire.TaskTypePuppet
	TypeShell           = wire.TaskTypeShell
	TypeSync            = wire.TaskTypeSync
	TypeUploadFile      = wire.TaskTypeUploadFile
	TypeGroup           = wire.TaskTypeGroup
	TypeStage           = wire.TaskTypeStage
	TypeSkipped         = wire.TaskTypeSkipped
	TypeReboot          = wire.TaskTypeReboot
	TypeCopyFiles       = wire.TaskTypeCopyFiles
	TypeRole            = wire.TaskTypeRole
	TypeMasterShell     = wire.TaskTypeMasterShell
	TypeMoveToBootstrap = wire.TaskTypeMoveToBootstrap
	TypeEraseNode       = wire.TaskTypeEraseNode
)

// MaxTaskTimeout, MaxTaskRetries and MaxTaskInterval bound a task's
// parameters.timeout, retries and interval (checked on upload): a task may
// hold its node for (1 + retries) x timeout + retries x interval, at most
// some two years, which a time.Duration holds 140 times over.
const (
	MaxTaskTimeout  = 7 * 24 * time.Hour
	MaxTaskRetries  = 100
	MaxTaskInterval = 24 * time.Hour
)

// TaskTypes lists every valid task type.
var TaskTypes = []string{
	TypePuppet, TypeShell, TypeSync, TypeUploadFile, TypeGroup, TypeStage, TypeSkipped,
	TypeReboot, TypeCopyFiles, TypeRole, TypeMasterShell, TypeMoveToBootstrap, TypeEraseNode,
}

// DefaultTaskVersion is the version of a task that does not name one.
const DefaultTaskVersion = "1.0.0"

var versionPattern = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// Task is one deployment task. The fields tuningbox understands are typed;
// every other field is kept verbatim in Extra and echoed back.
type Task struct {
	ID              string
	Type            string
	Version         string
	Requires        []string
	RequiredFor     []string
	Tasks           []string
	Groups          []string
	Role            []string
	Roles           []string
	Tags            []string
	Stage           string
	CrossDepends    CrossDependencies
	CrossDependedBy CrossDependencies
	// Condition, when set, decides per node whether the task runs there (a
	// false condition keeps the task in the node's plan as skipped).
	Condition  *Condition
	Parameters json.RawMessage
	// Strategy is parameters.strategy, decoded.
	Strategy    *Strategy
	ReexecuteOn []string
	RefreshOn   []string
	Extra       map[string]json.RawMessage
	// fieldExprs are the {yaql_exp: ...} of Parameters and Extra, compiled
	// when the task is read, by source: each node's body evaluates them.
	fieldExprs map[string]*yaql.Expr
	// bodyPerNode: the body differs between nodes (PerNode).
	bodyPerNode bool
}

// CrossDependency is one entry of cross-depends / cross-depended-by.
type CrossDependency struct {
	Name   string   `json:"name"`
	Role   []string `json:"role,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Policy string   `json:"policy,omitempty"`
	// Sync is Nailgun's explicit `role: null`: the dependency is on the
	// cluster-wide (stage) copy of the task rather than on a node's.
	Sync bool `json:"-"`
}

// CrossDependencies is a cross-depends or cross-depended-by field: a list,
// or a yaql expression (fuel-library's {yaql_exp: ...}) that gives the list
// per node at plan time.
type CrossDependencies struct {
	List []CrossDependency
	Expr *Expression
}

func (c CrossDependencies) empty() bool { return len(c.List) == 0 && c.Expr == nil }

// value is the field as written back: the expression, the list, or nil when empty.
func (c CrossDependencies) value() any {
	switch {
	case c.Expr != nil:
		return c.Expr
	case len(c.List) > 0:
		return c.List
	}
	return nil
}

// MarshalJSON writes Nailgun's explicit `role: null` back as it was given.
func (d CrossDependency) MarshalJSON() ([]byte, error) {
	type plain CrossDependency
	if !d.Sync {
		return json.Marshal(plain(d))
	}
	return json.Marshal(struct {
		plain
		Role *string `json:"role"`
	}{plain: plain(d)})
}

// Condition is a task's condition: a yaql expression evaluated on each
// node's deployment data, or a constant.
type Condition struct {
	Expr  *Expression
	Const bool
}

// Strategy limits how many nodes run a task at once: one_by_one is one,
// parallel is Amount (a number or a yaql expression), unlimited without one.
type Strategy struct {
	Type       string
	Amount     int
	AmountExpr *Expression
}

// NoOp reports whether the task only structures the graph.
func (t Task) NoOp() bool {
	return t.Type == TypeGroup || t.Type == TypeStage || t.Type == TypeSkipped
}

// asSkipped returns the task as it is sent when an execution does not select it.
func (t Task) asSkipped() Task {
	t.Type = TypeSkipped
	return t
}

// groupPattern returns the regular expression of a "/regex/" groups entry.
func groupPattern(g string) (string, bool) {
	if len(g) >= 2 && strings.HasPrefix(g, "/") && strings.HasSuffix(g, "/") {
		return "^(?:" + g[1:len(g)-1] + ")$", true
	}
	return "", false
}

// fieldError is a validation error located at a field path inside one task.
type fieldError struct {
	path string
	msg  string
}

func (e *fieldError) Error() string { return e.path + ": " + e.msg }

func fieldErrorf(path, format string, args ...any) error {
	return &fieldError{path: path, msg: fmt.Sprintf(format, args...)}
}

// under prefixes the path of a fieldError (a sub-field error becomes "parent.sub").
func under(parent string, err error) error {
	fe, ok := err.(*fieldError)
	if !ok {
		return err
	}
	switch {
	case fe.path == "":
		return &fieldError{path: parent, msg: fe.msg}
	case strings.HasPrefix(fe.path, "["):
		return &fieldError{path: parent + fe.path, msg: fe.msg}
	default:
		return &fieldError{path: parent + "." + fe.path, msg: fe.msg}
	}
}

// taskFields decodes and validates each known field into a Task.
var taskFields = map[string]func(t *Task, raw json.RawMessage) error{
	"id": func(t *Task, raw json.RawMessage) (err error) {
		if t.ID, err = decodeString(raw); err != nil {
			return err
		}
		if t.ID == "" {
			return fieldErrorf("", "must not be empty")
		}
		if strings.Contains(t.ID, ",") {
			return fieldErrorf("", "must not contain a comma (task lists in queries are comma-separated)")
		}
		return nil
	},
	"type": func(t *Task, raw json.RawMessage) (err error) {
		if t.Type, err = decodeString(raw); err != nil {
			return err
		}
		if !slices.Contains(TaskTypes, t.Type) {
			return fieldErrorf("", "%q is not one of %s", t.Type, strings.Join(TaskTypes, ", "))
		}
		return nil
	},
	"version": func(t *Task, raw json.RawMessage) (err error) {
		if t.Version, err = decodeString(raw); err != nil {
			return err
		}
		if !versionPattern.MatchString(t.Version) {
			return fieldErrorf("", "%q does not match %s", t.Version, versionPattern)
		}
		return nil
	},
	"requires":     stringListField(func(t *Task) *[]string { return &t.Requires }),
	"required_for": stringListField(func(t *Task) *[]string { return &t.RequiredFor }),
	"tasks":        stringListField(func(t *Task) *[]string { return &t.Tasks }),
	"reexecute_on": stringListField(func(t *Task) *[]string { return &t.ReexecuteOn }),
	"refresh_on":   stringListField(func(t *Task) *[]string { return &t.RefreshOn }),
	"role":         nameListField(func(t *Task) *[]string { return &t.Role }),
	"roles":        nameListField(func(t *Task) *[]string { return &t.Roles }),
	"tags":         nameListField(func(t *Task) *[]string { return &t.Tags }),
	"condition": func(t *Task, raw json.RawMessage) error {
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			t.Condition = &Condition{Const: b}
			return nil
		}
		expr, err := decodeExpression(raw)
		if err != nil {
			if _, isString := decodeString(raw); isString == nil {
				return fieldErrorf("", "Nailgun's legacy string conditions are not supported: give {yaql_exp: ...}")
			}
			return err
		}
		t.Condition = &Condition{Expr: expr}
		return nil
	},
	"groups": func(t *Task, raw json.RawMessage) (err error) {
		if t.Groups, err = decodeStringOrList(raw); err != nil {
			return err
		}
		for i, g := range t.Groups {
			if pattern, ok := groupPattern(g); ok {
				if _, err := yaql.CompilePattern(pattern); err != nil {
					return fieldErrorf(fmt.Sprintf("[%d]", i), "invalid regular expression %s: %v", g, err)
				}
			}
		}
		return nil
	},
	"stage": func(t *Task, raw json.RawMessage) (err error) {
		t.Stage, err = decodeString(raw)
		return err
	},
	"cross-depends":     crossDependencyField(func(t *Task) *CrossDependencies { return &t.CrossDepends }),
	"cross-depended-by": crossDependencyField(func(t *Task) *CrossDependencies { return &t.CrossDependedBy }),
	// The spellings of spec 002's data model; written back as cross-depends and cross-depended-by.
	"cross_depends":     crossDependencyAlias("cross-depends", func(t *Task) *CrossDependencies { return &t.CrossDepends }),
	"cross_depended_by": crossDependencyAlias("cross-depended-by", func(t *Task) *CrossDependencies { return &t.CrossDependedBy }),
	"parameters": func(t *Task, raw json.RawMessage) error {
		var params map[string]json.RawMessage
		if err := decodeObject(raw, &params); err != nil {
			return err
		}
		if raw, ok := params["strategy"]; ok && !isNull(raw) {
			strategy, err := decodeStrategy(raw)
			if err != nil {
				return under("strategy", err)
			}
			t.Strategy = strategy
		}
		if err := checkRunParameters(params); err != nil {
			return err
		}
		t.Parameters = raw
		return nil
	},
}

// runParameters bound how long a task may run: parameters.timeout (seconds,
// above 0), retries (a whole number) and interval (seconds), at most their max.
var runParameters = []struct {
	name      string
	max       float64
	whole     bool
	aboveZero bool
}{
	{name: "timeout", max: MaxTaskTimeout.Seconds(), aboveZero: true},
	{name: "retries", max: MaxTaskRetries, whole: true},
	{name: "interval", max: MaxTaskInterval.Seconds()},
}

// checkRunParameters refuses a timeout, retries or interval out of its bounds.
func checkRunParameters(params map[string]json.RawMessage) error {
	for _, p := range runParameters {
		raw, ok := params[p.name]
		if !ok || isNull(raw) {
			continue
		}
		var v float64
		err := json.Unmarshal(raw, &v)
		switch {
		case err != nil, v > p.max, v < 0, p.aboveZero && v == 0, p.whole && v != math.Trunc(v):
			kind := "a number of seconds"
			if p.whole {
				kind = "a whole number"
			}
			low := "at least 0"
			if p.aboveZero {
				low = "above 0"
			}
			return fieldErrorf(p.name, "must be %s %s, at most %v", kind, low, p.max)
		}
	}
	return nil
}

func stringListField(dst func(*Task) *[]string) func(*Task, json.RawMessage) error {
	return func(t *Task, raw json.RawMessage) (err error) {
		*dst(t), err = decodeStringList(raw)
		return err
	}
}

// nameListField is a string or list of names, whose "/re/" ones must compile.
func nameListField(dst func(*Task) *[]string) func(*Task, json.RawMessage) error {
	return func(t *Task, raw json.RawMessage) (err error) {
		*dst(t), err = decodeStringOrList(raw)
		return checkNamePatterns(*dst(t), err)
	}
}

func crossDependencyField(dst func(*Task) *CrossDependencies) func(*Task, json.RawMessage) error {
	return func(t *Task, raw json.RawMessage) (err error) {
		if isExpression(raw) {
			expr, err := decodeExpression(raw)
			*dst(t) = CrossDependencies{Expr: expr}
			return err
		}
		list, err := decodeCrossDependencies(raw)
		*dst(t) = CrossDependencies{List: list}
		return err
	}
}

// decodeCrossDependencies decodes a list of cross dependencies, as a task
// gives it or as a yaql expression evaluates to (JSON-encoded).
func decodeCrossDependencies(raw json.RawMessage) ([]CrossDependency, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, fieldErrorf("", "must be a list or {yaql_exp: ...}")
	}
	deps := make([]CrossDependency, 0, len(items))
	for i, item := range items {
		if isNull(item) {
			continue // Nailgun skips empty entries
		}
		d, err := decodeCrossDependency(item)
		if err != nil {
			return nil, under(fmt.Sprintf("[%d]", i), err)
		}
		deps = append(deps, d)
	}
	return deps, nil
}

// crossDependencyAlias decodes the underscore spelling of a cross dependency
// field; a task may not give both spellings (fields decode in key order, and
// "-" sorts before "_", so the hyphenated one is already set).
func crossDependencyAlias(canonical string, dst func(*Task) *CrossDependencies) func(*Task, json.RawMessage) error {
	decode := crossDependencyField(dst)
	return func(t *Task, raw json.RawMessage) error {
		if !dst(t).empty() {
			return fieldErrorf("", "given together with %s", canonical)
		}
		return decode(t, raw)
	}
}

func decodeCrossDependency(raw json.RawMessage) (CrossDependency, error) {
	var fields map[string]json.RawMessage
	if err := decodeObject(raw, &fields); err != nil {
		return CrossDependency{}, err
	}
	var d CrossDependency
	var err error
	for _, key := range sortedKeys(fields) {
		v := fields[key]
		switch key {
		case "name":
			d.Name, err = decodeString(v)
		case "role":
			if isNull(v) {
				d.Sync = true
			} else {
				d.Role, err = decodeStringOrList(v)
			}
			err = checkNamePatterns(d.Role, err)
		case "tags":
			d.Tags, err = decodeStringOrList(v)
			err = checkNamePatterns(d.Tags, err)
		case "policy":
			if d.Policy, err = decodeString(v); err == nil && d.Policy != "all" && d.Policy != "any" {
				err = fieldErrorf("", "%q is not one of all, any", d.Policy)
			}
		default:
			err = fieldErrorf("", "unknown field")
		}
		if err != nil {
			return d, under(key, err)
		}
	}
	if d.Name == "" {
		return d, fieldErrorf("name", "is required")
	}
	if err := checkNamePatterns([]string{d.Name}, nil); err != nil {
		return d, under("name", err)
	}
	return d, nil
}

// checkNamePatterns refuses a "/re/" name whose regular expression does not compile.
func checkNamePatterns(names []string, err error) error {
	if err != nil {
		return err
	}
	for i, n := range names {
		if _, err := compileName(n); err != nil {
			return fieldErrorf(fmt.Sprintf("[%d]", i), "%v", err)
		}
	}
	return nil
}

// Strategy types.
const (
	StrategyParallel = "parallel"
	StrategyOneByOne = "one_by_one"
)

func decodeStrategy(raw json.RawMessage) (*Strategy, error) {
	var fields map[string]json.RawMessage
	if err := decodeObject(raw, &fields); err != nil {
		return nil, err
	}
	var st Strategy
	for _, key := range sortedKeys(fields) {
		switch key {
		case "type":
			typ, err := decodeString(fields[key])
			if err == nil && typ != StrategyParallel && typ != StrategyOneByOne {
				err = fieldErrorf("", "%q is not one of parallel, one_by_one", typ)
			}
			if err != nil {
				return nil, under(key, err)
			}
			st.Type = typ
		case "amount":
			if isExpression(fields[key]) {
				expr, err := decodeExpression(fields[key])
				if err != nil {
					return nil, under(key, err)
				}
				st.AmountExpr = expr
				continue
			}
			n, err := positiveInt(fields[key])
			if err != nil {
				return nil, under(key, err)
			}
			st.Amount = n
		default:
			return nil, fieldErrorf(key, "unknown field")
		}
	}
	if st.Type == "" {
		return nil, fieldErrorf("type", "is required")
	}
	return &st, nil
}

// positiveInt decodes a positive integer (a whole JSON number such as 6 or 6.0).
func positiveInt(raw json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f < 1 || f != float64(int(f)) {
		return 0, fieldErrorf("", "must be a positive integer or {yaql_exp: ...}")
	}
	return int(f), nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func decodeString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || isNull(raw) {
		return "", fieldErrorf("", "must be a string")
	}
	return s, nil
}

func decodeStringList(raw json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, fieldErrorf("", "must be a list of strings")
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, err := decodeString(item)
		if err != nil {
			return nil, under(fmt.Sprintf("[%d]", i), err)
		}
		out[i] = s
	}
	return out, nil
}

// decodeStringOrList accepts a string (a one-item list) or a list of strings.
func decodeStringOrList(raw json.RawMessage) ([]string, error) {
	if s, err := decodeString(raw); err == nil {
		return []string{s}, nil
	}
	out, err := decodeStringList(raw)
	if err != nil {
		return nil, fieldErrorf("", "must be a string or a list of strings")
	}
	return out, nil
}

func decodeObject(raw json.RawMessage, v *map[string]json.RawMessage) error {
	if err := json.Unmarshal(raw, v); err != nil || *v == nil {
		return fieldErrorf("", "must be an object")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// UnmarshalJSON decodes and validates a task: required id and type, typed
// known fields, everything else kept in Extra. A null optional field counts as absent.
func (t *Task) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := decodeObject(b, &fields); err != nil {
		return err
	}
	*t = Task{Version: DefaultTaskVersion}
	for _, key := range sortedKeys(fields) {
		raw := fields[key]
		decode, known := taskFields[key]
		switch {
		case !known:
			if t.Extra == nil {
				t.Extra = map[string]json.RawMessage{}
			}
			t.Extra[key] = raw
		case isNull(raw) && key != "id" && key != "type":
			// absent
		default:
			if err := decode(t, raw); err != nil {
				return under(key, err)
			}
		}
	}
	switch {
	case t.ID == "":
		return fieldErrorf("id", "is required")
	case t.Type == "":
		return fieldErrorf("type", "is required")
	}
	if len(t.Parameters) > 0 {
		if err := t.compileFieldExprs("parameters", t.Parameters); err != nil {
			return err
		}
	}
	for _, key := range sortedKeys(t.Extra) {
		if err := t.compileFieldExprs(key, t.Extra[key]); err != nil {
			return err
		}
	}
	t.bodyPerNode = t.rendersPerNode()
	return nil
}

// compileFieldExprs compiles every {yaql_exp: ...} of a free-form field, so
// that an expression that does not compile is refused when the task is read.
func (t *Task) compileFieldExprs(field string, raw json.RawMessage) error {
	if !bytes.Contains(raw, []byte("yaql_exp")) {
		return nil
	}
	v, err := decodeFieldValue(raw)
	if err != nil {
		return fieldErrorf(field, "%v", err)
	}
	var walk func(path string, v any) error
	walk = func(path string, v any) error {
		switch v := v.(type) {
		case map[string]any:
			if src, ok := v["yaql_exp"]; ok {
				text, isString := src.(string)
				if !isString || len(v) != 1 {
					return fieldErrorf(path, "must be {yaql_exp: \"...\"} and nothing else")
				}
				e, err := yaql.Compile(text)
				if err != nil {
					return fieldErrorf(path+".yaql_exp", "%v", err)
				}
				if t.fieldExprs == nil {
					t.fieldExprs = map[string]*yaql.Expr{}
				}
				t.fieldExprs[text] = e
				return nil
			}
			for _, k := range sortedKeys(v) {
				if k == "regex" {
					continue
				}
				if err := walk(path+"."+k, v[k]); err != nil {
					return err
				}
			}
		case []any:
			for i, item := range v {
				if err := walk(fmt.Sprintf("%s[%d]", path, i), item); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(field, v)
}

// MarshalJSON writes the task with its known fields normalised (lists for
// groups/role/roles, the default version filled in) and its other fields as given.
func (t Task) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, 8+len(t.Extra))
	for k, v := range t.Extra {
		out[k] = v
	}
	out["id"] = t.ID
	out["type"] = t.Type
	out["version"] = cmp.Or(t.Version, DefaultTaskVersion)
	setList := func(key string, v []string) {
		if len(v) > 0 {
			out[key] = v
		}
	}
	setList("requires", t.Requires)
	setList("required_for", t.RequiredFor)
	setList("tasks", t.Tasks)
	setList("groups", t.Groups)
	setList("role", t.Role)
	setList("roles", t.Roles)
	setList("tags", t.Tags)
	setList("reexecute_on", t.ReexecuteOn)
	setList("refresh_on", t.RefreshOn)
	if t.Stage != "" {
		out["stage"] = t.Stage
	}
	if v := t.CrossDepends.value(); v != nil {
		out["cross-depends"] = v
	}
	if v := t.CrossDependedBy.value(); v != nil {
		out["cross-depended-by"] = v
	}
	if c := t.Condition; c != nil {
		if c.Expr != nil {
			out["condition"] = c.Expr
		} else {
			out["condition"] = c.Const
		}
	}
	if len(t.Parameters) > 0 {
		out["parameters"] = t.Parameters
	}
	return json.Marshal(out)
}

// MaxCompiledBytes bounds what a task list's yaql expressions compile to
// (yaql.Expr.Bytes), which caches of decoded tasks hold: fuel-library's
// default graph compiles to some 880 KB (its JSON is 149 KB).
const MaxCompiledBytes = 16 << 20

// ParseTasks decodes and validates a task list. Errors name the offending
// field ("tasks[3].version (task "x"): ..."); duplicate ids are reported together.
func ParseTasks(raw json.RawMessage) ([]Task, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, errs.Invalidf("tasks: must be a list")
	}
	tasks := make([]Task, len(items))
	var compiled int64
	for i, item := range items {
		if err := json.Unmarshal(item, &tasks[i]); err != nil {
			return nil, errs.Invalidf("%s", describeTaskError(i, item, err))
		}
		if compiled += tasks[i].CompiledBytes(); compiled > MaxCompiledBytes {
			return nil, errs.New(errs.TooLarge, "tasks: the expressions of tasks[0] to tasks[%d] compile to %d bytes, over the limit of %d: use fewer or smaller regular expressions", i, compiled, MaxCompiledBytes)
		}
	}
	if err := checkDuplicates(tasks); err != nil {
		return nil, err
	}
	return tasks, nil
}

func describeTaskError(i int, item json.RawMessage, err error) string {
	path := fmt.Sprintf("tasks[%d]", i)
	fe, ok := err.(*fieldError)
	if !ok {
		return path + ": " + err.Error()
	}
	if fe.path != "" {
		path += "." + fe.path
	}
	var withID struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(item, &withID) == nil {
		if id, ok := withID.ID.(string); ok && id != "" && fe.path != "id" {
			return fmt.Sprintf("%s (task %q): %s", path, id, fe.msg)
		}
	}
	return path + ": " + fe.msg
}

func checkDuplicates(tasks []Task) error {
	seen := make(map[string]bool, len(tasks))
	var dups []string
	for _, t := range tasks {
		if seen[t.ID] && !slices.Contains(dups, t.ID) {
			dups = append(dups, t.ID)
		}
		seen[t.ID] = true
	}
	if len(dups) > 0 {
		sort.Strings(dups)
		return errs.Invalidf("Tasks duplication found: %s", strings.Join(dups, ", "))
	}
	return nil
}

// failOnError says whether the task's failure fails its node: unless its
// fail_on_error (Nailgun's task field, also read from parameters) is false.
func (t Task) FailOnError() bool {
	var p struct {
		FailOnError *bool `json:"fail_on_error"`
	}
	if raw, ok := t.Extra["fail_on_error"]; ok && json.Unmarshal(raw, &p.FailOnError) == nil && p.FailOnError != nil {
		return *p.FailOnError
	}
	if json.Unmarshal(t.Parameters, &p) == nil && p.FailOnError != nil {
		return *p.FailOnError
	}
	return true
}

// RunLimit is how long an agent may take over a task: parameters.timeout
// (wire.DefaultTaskTimeout without one) for each of its 1 + retries attempts,
// with interval seconds (at least 1) between them, as the agent runs it.
func (t Task) RunLimit() time.Duration {
	var p struct {
		Timeout  float64 `json:"timeout"`
		Retries  int     `json:"retries"`
		Interval float64 `json:"interval"`
	}
	// Parameters that do not decode fail at once on the agent: the defaults do.
	_ = json.Unmarshal(t.Parameters, &p)
	timeout := wire.DefaultTaskTimeout.Seconds()
	if p.Timeout > 0 {
		timeout = p.Timeout
	}
	retries := float64(max(p.Retries, 0))
	return wire.Seconds((retries+1)*timeout + retries*max(p.Interval, 1))
}
