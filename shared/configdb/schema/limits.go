package schema

import (
	"context"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Bounds on a resource definition's JSON Schema. Validation work grows with
// the subschemas a value meets, and $ref lets a small schema name a subschema
// many times: a chain of $defs whose every level holds allOf [$ref next, $ref
// next] doubles the work per level (2.8 KB and 40 levels: 2^40 subschemas for
// one value). Schemas are checked when saved, and every validation runs on a
// budget, which also bounds what no static check can see (recursion through
// "$ref": "#", which repeats with the document's depth).
const (
	// maxSchemaBytes bounds a schema's source.
	maxSchemaBytes = 64 << 10
	// maxSchemaExpansion bounds the subschemas one value can meet, counting a
	// subschema once for every path of $ref, allOf, anyOf, oneOf, ... to it.
	maxSchemaExpansion = 50_000
	// maxRefChain bounds how many $refs one path through the schema follows.
	maxRefChain = 32
	// maxPatternInstructions bounds one regular expression ("pattern",
	// "patternProperties") compiled to Go's linear-time matcher.
	maxPatternInstructions = 2_000
	// A validation evaluates at most baseValidationSteps subschemas plus
	// stepsPerValue for every value of the document (a step is about 0.5 us
	// of one core: a small document gets 0.1 s, a 7 MB one a few seconds);
	// it also stops when its request ends.
	baseValidationSteps = 200_000
	stepsPerValue       = 16
	// maxValidationTime bounds a validation on a slow or busy machine too.
	maxValidationTime = 500 * time.Millisecond
)

// checkSchemaLimits refuses a schema (parsed, before compiling) past the bounds above.
func checkSchemaLimits(doc any, size int) error {
	if size > maxSchemaBytes {
		return errs.Invalidf("content.schema has %d bytes, more than %d (limit: schema size)", size, maxSchemaBytes)
	}
	if err := checkPatterns(doc, ""); err != nil {
		return err
	}
	e := expansion{root: doc, memo: map[string]weight{}, active: map[string]bool{}}
	w := e.of(doc, "")
	switch {
	case w.subschemas > maxSchemaExpansion:
		return errs.Invalidf("content.schema expands to more than %d subschemas for one value through $ref, allOf, anyOf and oneOf (limit: schema fan-out)", maxSchemaExpansion)
	case w.refChain > maxRefChain:
		return errs.Invalidf("content.schema follows a chain of %d $refs, more than %d (limit: $ref chain depth)", w.refChain, maxRefChain)
	}
	return nil
}

// weight is what validating one value against a subschema may cost.
type weight struct {
	subschemas int // saturates just past maxSchemaExpansion
	refChain   int
}

// expansion computes weights, each local $ref target's once.
type expansion struct {
	root   any
	memo   map[string]weight // by JSON pointer of $ref targets
	active map[string]bool   // targets being expanded: a $ref back to one is recursion
}

// of is the weight of the subschema node at pointer: itself, the subschemas it
// applies ($defs only through $refs) and what its $ref names.
func (e *expansion) of(node any, pointer string) weight {
	obj, ok := node.(map[string]any)
	if !ok {
		return weight{subschemas: 1}
	}
	w := weight{subschemas: 1}
	add := func(c weight) {
		w.subschemas = min(w.subschemas+c.subschemas, maxSchemaExpansion+1)
		w.refChain = max(w.refChain, c.refChain)
	}
	for _, k := range schemaKeywords {
		if sub, ok := obj[k]; ok {
			add(e.of(sub, pointer+"/"+k))
		}
	}
	for _, k := range schemaListKeywords {
		if list, ok := obj[k].([]any); ok {
			for i, sub := range list {
				add(e.of(sub, pointer+"/"+k+"/"+strconv.Itoa(i)))
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if k == "$defs" || k == "definitions" {
			continue
		}
		if m, ok := obj[k].(map[string]any); ok {
			for name, sub := range m {
				add(e.of(sub, pointer+"/"+k+"/"+escapePointer(name)))
			}
		}
	}
	for _, k := range []string{"$ref", "$dynamicRef"} {
		if ref, ok := obj[k].(string); ok {
			target := e.ref(ref)
			target.refChain++
			add(target)
		}
	}
	return w
}

// ref is the weight of the local subschema ref names. A reference this
// cannot follow (an anchor, a relative $id) counts as one subschema: the
// validation budget bounds it.
func (e *expansion) ref(ref string) weight {
	pointer, ok := strings.CutPrefix(ref, "#")
	if !ok || (pointer != "" && !strings.HasPrefix(pointer, "/")) {
		return weight{subschemas: 1}
	}
	if w, ok := e.memo[pointer]; ok {
		return w
	}
	if e.active[pointer] {
		return weight{subschemas: 1} // recursion: bounded by the document's depth and the budget
	}
	node, ok := resolvePointer(e.root, pointer)
	if !ok {
		return weight{subschemas: 1}
	}
	e.active[pointer] = true
	w := e.of(node, pointer)
	delete(e.active, pointer)
	e.memo[pointer] = w
	return w
}

// resolvePointer finds the value at a JSON pointer (RFC 6901) in doc.
func resolvePointer(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := doc.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			doc = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			doc = v[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// checkPatterns bounds every regular expression of the schema at pointer.
func checkPatterns(node any, pointer string) error {
	switch v := node.(type) {
	case map[string]any:
		if p, ok := v["pattern"].(string); ok {
			if err := checkPattern(p, pointer+"/pattern"); err != nil {
				return err
			}
		}
		if props, ok := v["patternProperties"].(map[string]any); ok {
			for p := range props {
				if err := checkPattern(p, pointer+"/patternProperties"); err != nil {
					return err
				}
			}
		}
		for k, sub := range v {
			if err := checkPatterns(sub, pointer+"/"+escapePointer(k)); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range v {
			if err := checkPatterns(sub, pointer+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPattern measures a regular expression as Go's regexp compiles it
// (linear-time matching: its cost per byte of input is its program's size).
func checkPattern(pattern, at string) error {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil // the compiler reports the invalid pattern itself
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil || len(prog.Inst) > maxPatternInstructions {
		return errs.Invalidf("content.schema's regular expression at %s is too complex: more than %d instructions (limit: regex complexity)", at, maxPatternInstructions)
	}
	return nil
}

// boundedSchema is a compiled schema whose validations run on a budget: the
// compiler gives every subschema a step counter (the "budget" vocabulary)
// which stops the validation when the steps run out or its context ends.
// Validations of one schema take turns; the counter is theirs meanwhile.
type boundedSchema struct {
	mu       sync.Mutex
	schema   *jsonschema.Schema
	ctx      context.Context // of the validation in progress
	budget   int
	left     int
	deadline time.Time
}

// stopValidation is panicked by the step counter and recovered by validate.
type stopValidation struct{ err error }

// budgetVocabulary counts every evaluated subschema of b's schema.
func (b *boundedSchema) budgetVocabulary() *jsonschema.Vocabulary {
	return &jsonschema.Vocabulary{
		URL: "urn:tuningbox:validation-budget",
		Compile: func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error) {
			return stepCounter{b}, nil
		},
	}
}

type stepCounter struct{ b *boundedSchema }

func (c stepCounter) Validate(*jsonschema.ValidatorContext, any) {
	b := c.b
	b.left--
	if b.left < 0 {
		panic(stopValidation{errs.Invalidf("validating the document takes more than %d schema steps (limit: validation budget); simplify the schema", b.budget)})
	}
	if b.left%1024 != 0 {
		return
	}
	if err := b.ctx.Err(); err != nil {
		panic(stopValidation{err})
	}
	if time.Now().After(b.deadline) {
		panic(stopValidation{errs.Invalidf("validating the document takes more than %v (limit: validation budget); simplify the schema", maxValidationTime)})
	}
}

// validate validates v within the budget, stopping when ctx ends.
func (b *boundedSchema) validate(ctx context.Context, v any) (err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ctx, b.budget = ctx, baseValidationSteps+stepsPerValue*countValues(v)
	b.left, b.deadline = b.budget, time.Now().Add(maxValidationTime)
	defer func() {
		b.ctx = nil
		if r := recover(); r != nil {
			stop, ok := r.(stopValidation)
			if !ok {
				panic(r)
			}
			err = stop.err
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.schema.Validate(v)
}

// countValues counts the values of a decoded JSON document.
func countValues(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += countValues(e)
		}
	case []any:
		for _, e := range v {
			n += countValues(e)
		}
	}
	return n
}
