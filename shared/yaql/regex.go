package yaql

import (
	"fmt"
	"regexp"
	"regexp/syntax"
)

// MaxPatternInsts bounds the program a regular expression compiles to: a few bytes
// such as [a-z]{1000} make a thousand instructions, some 50 KB, and matching costs
// per character and instruction. Names and conditions need a few dozen.
const MaxPatternInsts = 2000

// Memory and time a compiled regular expression costs, as measured with Go 1.26's
// regexp: some 1 KB plus under 48 bytes per instruction; matching up to 26 ns per
// character and instruction, some two steps.
const (
	patternBytes     = 1024
	patternInstBytes = 48
	matchStepsInst   = 2
)

// Pattern is a compiled regular expression with what it costs.
type Pattern struct {
	*regexp.Regexp
	insts int
}

// CompilePattern compiles a regular expression (Go's RE2 syntax), refusing one whose
// program is over MaxPatternInsts.
func CompilePattern(src string) (*Pattern, error) {
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	if bound := instsBound(parsed); bound > 4*MaxPatternInsts {
		return nil, fmt.Errorf("it compiles to some %d instructions, over the limit of %d", bound, MaxPatternInsts)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, err
	}
	if len(prog.Inst) > MaxPatternInsts {
		return nil, fmt.Errorf("it compiles to %d instructions, over the limit of %d", len(prog.Inst), MaxPatternInsts)
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	return &Pattern{Regexp: re, insts: len(prog.Inst)}, nil
}

// instsBound is about the instructions re compiles to (from the count less two to about
// twice it), read on the parsed tree: Simplify expands x{1000} into a thousand copies of
// x, so a pattern of 21 KB took 2 s and 681 MB to compile before its size could be
// refused. It saturates at 2^30.
func instsBound(re *syntax.Regexp) int {
	const ceiling = 1 << 30
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpRepeat:
		times := re.Max
		if times < 0 { // x{n,} is n copies and x*
			times = re.Min + 1
		}
		return min(times*(instsBound(re.Sub[0])+1), ceiling)
	}
	n := 1
	for _, sub := range re.Sub {
		n = min(n+instsBound(sub)+1, ceiling)
	}
	return n
}

// Bytes is about what the compiled pattern holds in memory.
func (p *Pattern) Bytes() int64 { return patternBytes + patternInstBytes*int64(p.insts) }

// match is p.MatchString(s), counted in steps before it runs: matching reads every
// character once per live instruction at worst.
func (ev *evaluator) match(p *Pattern, s string) (bool, error) {
	ev.steps += len(s) * p.insts * matchStepsInst
	if err := ev.checkSteps(); err != nil {
		return false, err
	}
	return p.MatchString(s), nil
}

// compileRegexp compiles a pattern given at run time (constant patterns are compiled by
// Compile), counting the work: a step per byte of its source and per instruction.
func (ev *evaluator) compileRegexp(src string, pos int) (*Pattern, error) {
	ev.steps += len(src)
	if err := ev.checkSteps(); err != nil {
		return nil, err
	}
	p, err := CompilePattern(src)
	if err != nil {
		return nil, failf(pos, "bad regular expression %q: %s", head(src), head(err.Error()))
	}
	ev.steps += p.insts
	return p, ev.checkSteps()
}
