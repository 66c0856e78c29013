package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Step is one deploy step: a method of a driver interface, its arguments and
// when it runs (higher priority first; 0 = does not run).
type Step struct {
	Interface string          `json:"interface"`
	Step      string          `json:"step"`
	Args      json.RawMessage `json:"args"`
	Priority  int             `json:"priority"`
}

// Name is the step's identity, "interface.step".
func (s Step) Name() string { return s.Interface + "." + s.Step }

// interfaceRank orders steps of equal priority: power first, raid last.
var interfaceRank = map[string]int{"power": 5, "management": 4, "deploy": 3, "bios": 2, "raid": 1}

// Interfaces lists the driver interfaces a step may belong to, in rank order.
var Interfaces = []string{"power", "management", "deploy", "bios", "raid"}

var digits = regexp.MustCompile(`^[0-9]+$`)

// maxStepName bounds a step's method name (the spec's VARCHAR(255) column).
const maxStepName = 255

// problems collects every validation failure of a document, so a client sees them all at once.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// stepList says which list parseSteps reads.
type stepList int

const (
	// templateSteps: at least one step; the same (interface, step) may come
	// more than once, each with its own args (spec 003: "to partition multiple
	// disks"); the core step may only be disabled (priority 0).
	templateSteps stepList = iota
	// defaultSteps: an environment's default steps, possibly none, each
	// (interface, step) once: a step has one default priority and args.
	defaultSteps
)

// parseSteps validates a JSON array of steps. Each step has exactly interface,
// step, args and priority; priority is an integer >= 0 or a string of digits.
// kind adds the rules of the list (see stepList). Problems are added under field.
func parseSteps(raw json.RawMessage, field string, kind stepList, p *problems) []Step {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		p.add("%s must be an array of steps", field)
		return nil
	}
	if kind == templateSteps && len(items) == 0 {
		p.add("%s must contain at least one step", field)
	}
	steps := make([]Step, 0, len(items))
	seen := map[string]int{}
	for i, item := range items {
		where := fmt.Sprintf("%s[%d]", field, i)
		st, ok := parseStep(item, where, p)
		if !ok {
			continue
		}
		if kind == templateSteps {
			if err := checkCoreStep(st); err != nil {
				p.add("%s: %v", where, err)
				continue
			}
		} else if first, dup := seen[st.Name()]; dup {
			p.add("%s: duplicate deploy step %s (also %s[%d]); a default step has one priority and one set of args", where, st.Name(), field, first)
			continue
		}
		seen[st.Name()] = i
		steps = append(steps, st)
	}
	return steps
}

func parseStep(raw json.RawMessage, where string, p *problems) (Step, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		p.add("%s must be an object", where)
		return Step{}, false
	}
	before := len(*p)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains([]string{"interface", "step", "args", "priority"}, k) {
			p.add("%s: unknown property %q", where, k)
		}
	}
	var st Step
	if raw, ok := fields["interface"]; !ok || json.Unmarshal(raw, &st.Interface) != nil || interfaceRank[st.Interface] == 0 {
		p.add("%s: interface must be one of %s", where, strings.Join(Interfaces, ", "))
	}
	if raw, ok := fields["step"]; !ok || json.Unmarshal(raw, &st.Step) != nil || st.Step == "" || len(st.Step) > maxStepName {
		p.add("%s: step must be a non-empty string of at most %d characters", where, maxStepName)
	}
	if raw, ok := fields["args"]; !ok || !isObject(raw) {
		p.add("%s: args must be an object", where)
	} else {
		st.Args = compact(raw)
	}
	if raw, ok := fields["priority"]; !ok {
		p.add("%s: priority is required", where)
	} else if prio, err := parsePriority(raw); err != nil {
		p.add("%s: %v", where, err)
	} else {
		st.Priority = prio
	}
	return st, len(*p) == before
}

// parsePriority accepts a non-negative JSON integer or a string of digits.
func parsePriority(raw json.RawMessage) (int, error) {
	text := string(raw)
	if s := ""; json.Unmarshal(raw, &s) == nil {
		text = s
	}
	if !digits.MatchString(text) {
		return 0, fmt.Errorf("priority must be an integer >= 0 or a string of digits, got %s", raw)
	}
	n, err := strconv.ParseInt(text, 10, 32)
	if err != nil || n > math.MaxInt32 {
		return 0, fmt.Errorf("priority %s is too large", text)
	}
	return int(n), nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// compact removes insignificant space from raw, which came out of a decoded document.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
