package yaql

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSourceBytes and maxDepth bound what Compile accepts: the parser recurses once per
// nesting level, and an expression is a line of a task file, not a program.
// MaxPatternBytes bounds the compiled regular expressions of one expression together
// (Pattern.Bytes): a few bytes of source can compile to 50 KB.
const (
	MaxSourceBytes  = 64 << 10
	maxDepth        = 200
	MaxPatternBytes = 1 << 20
)

// SyntaxError is a malformed expression; Pos is the byte offset where parsing stopped.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("yaql: syntax error at position %d: %s", e.Pos, e.Msg)
}

type tokenKind int

const (
	tokEOF     tokenKind = iota
	tokNumber            // 12, 1.5
	tokString            // 'a', "a", `a`
	tokKeyword           // a bare identifier: a string constant, or an attribute name after '.'
	tokFunc              // an identifier directly followed by '(' (the '(' is consumed)
	tokDollar            // $, $name
	tokOp                // operators and punctuation
)

type token struct {
	kind tokenKind
	text string // operator text, identifier, variable name (without '$'), decoded string
	num  any    // int64 or float64 for tokNumber
	pos  int
}

// operatorWords are identifiers that lex as operators, as in yaql's operator table.
var operatorWords = map[string]bool{"and": true, "or": true, "not": true, "in": true, "mod": true}

// symbolOps in longest-first order: the lexer takes the first that matches.
var symbolOps = []string{"=>", "=~", "!~", "!=", ">=", "<=", "->", "?.", ".", "=", ">", "<", "+", "-", "*", "/", "(", ")", "[", "]", "{", "}", ","}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func lex(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '$':
			j := i + 1
			for j < len(src) {
				r, n := utf8.DecodeRuneInString(src[j:])
				if !isIdentPart(r) {
					break
				}
				j += n
			}
			toks = append(toks, token{kind: tokDollar, text: src[i+1 : j], pos: i})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			isFloat := false
			if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
				isFloat = true
				j++
				for j < len(src) && src[j] >= '0' && src[j] <= '9' {
					j++
				}
			}
			text := src[i:j]
			t := token{kind: tokNumber, text: text, pos: i}
			if isFloat {
				f, err := strconv.ParseFloat(text, 64)
				if err != nil {
					return nil, &SyntaxError{i, "bad number " + text}
				}
				t.num = f
			} else {
				n, err := strconv.ParseInt(text, 10, 64)
				if err != nil {
					return nil, &SyntaxError{i, "integer out of range " + text}
				}
				t.num = n
			}
			toks = append(toks, t)
			i = j
		case c == '\'' || c == '"' || c == '`':
			s, n, err := lexString(src[i:], c)
			if err != nil {
				return nil, &SyntaxError{i, err.Error()}
			}
			toks = append(toks, token{kind: tokString, text: s, pos: i})
			i += n
		default:
			r, n := utf8.DecodeRuneInString(src[i:])
			if isIdentStart(r) {
				j := i + n
				for j < len(src) {
					r, n := utf8.DecodeRuneInString(src[j:])
					if !isIdentPart(r) {
						break
					}
					j += n
				}
				word := src[i:j]
				switch {
				case j < len(src) && src[j] == '(':
					toks = append(toks, token{kind: tokFunc, text: word, pos: i})
					j++
				case operatorWords[word]:
					toks = append(toks, token{kind: tokOp, text: word, pos: i})
				case strings.HasPrefix(word, "__"):
					return nil, &SyntaxError{i, "identifiers may not start with __"}
				default:
					toks = append(toks, token{kind: tokKeyword, text: word, pos: i})
				}
				i = j
				continue
			}
			matched := false
			for _, op := range symbolOps {
				if strings.HasPrefix(src[i:], op) {
					toks = append(toks, token{kind: tokOp, text: op, pos: i})
					i += len(op)
					matched = true
					break
				}
			}
			if !matched {
				return nil, &SyntaxError{i, fmt.Sprintf("unexpected character %q", r)}
			}
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(src)}), nil
}

// lexString reads a quoted string at the start of s; it returns the decoded text and the
// number of bytes consumed. Backquoted strings are verbatim but for \`.
func lexString(s string, quote byte) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == quote:
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(s):
			i++
			if quote == '`' {
				if s[i] != '`' {
					b.WriteByte('\\')
				}
				b.WriteByte(s[i])
				continue
			}
			n, err := decodeEscape(&b, s[i:])
			if err != nil {
				return "", 0, err
			}
			i += n - 1
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}

// Python's escapes: single characters, and hexadecimal ones with their digit counts.
var (
	simpleEscapes = map[byte]string{'\\': "\\", '\'': "'", '"': "\"", 'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v"}
	hexEscapes    = map[byte]int{'x': 2, 'u': 4, 'U': 8}
)

// decodeEscape writes the character of the escape sequence at the start of s (after the
// backslash) and returns how many bytes it took; unknown escapes stay as written, as in Python.
func decodeEscape(b *strings.Builder, s string) (int, error) {
	if r, ok := simpleEscapes[s[0]]; ok {
		b.WriteString(r)
		return 1, nil
	}
	hexLen := hexEscapes[s[0]]
	if hexLen > 0 {
		if len(s) < 1+hexLen {
			return 0, fmt.Errorf("truncated \\%c escape", s[0])
		}
		v, err := strconv.ParseUint(s[1:1+hexLen], 16, 32)
		if err != nil || v > unicode.MaxRune {
			return 0, fmt.Errorf("bad \\%c escape", s[0])
		}
		b.WriteRune(rune(v))
		return 1 + hexLen, nil
	}
	if s[0] >= '0' && s[0] <= '7' {
		n := 1
		for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint(s[:n], 8, 32)
		b.WriteRune(rune(v))
		return n, nil
	}
	b.WriteByte('\\')
	b.WriteByte(s[0])
	return 1, nil
}

// Binding powers, loosest first, as yaql's operator table orders them.
const (
	bpArrow   = 10
	bpOr      = 20
	bpAnd     = 30
	bpNot     = 40
	bpCompare = 50
	bpAdd     = 60
	bpMul     = 70
	bpMatch   = 80
	bpUnary   = 90
	bpIndex   = 100
	bpDot     = 110
)

var binaryPower = map[string]int{
	"->": bpArrow, "or": bpOr, "and": bpAnd,
	">": bpCompare, "<": bpCompare, ">=": bpCompare, "<=": bpCompare, "!=": bpCompare, "=": bpCompare, "in": bpCompare,
	"+": bpAdd, "-": bpAdd, "*": bpMul, "/": bpMul, "mod": bpMul, "=~": bpMatch, "!~": bpMatch,
	"[": bpIndex, ".": bpDot, "?.": bpDot,
}

type parser struct {
	src          string
	toks         []token
	i            int
	depth        int
	patternBytes int64 // of the constant patterns compiled so far
}

// compiled counts a constant pattern the expression compiled (nil: none).
func (p *parser) compiled(re *Pattern, pos int) error {
	if re == nil {
		return nil
	}
	p.patternBytes += re.Bytes()
	if p.patternBytes > MaxPatternBytes {
		return &SyntaxError{pos, fmt.Sprintf("its regular expressions compile to over %d bytes", MaxPatternBytes)}
	}
	return nil
}

func parse(src string) (node, error) {
	if len(src) > MaxSourceBytes {
		return nil, &SyntaxError{MaxSourceBytes, fmt.Sprintf("expression longer than %d bytes", MaxSourceBytes)}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.unexpected(t)
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) unexpected(t token) error {
	if t.kind == tokEOF {
		return &SyntaxError{t.pos, "unexpected end of expression"}
	}
	text := t.text
	if t.kind == tokNumber {
		text = fmt.Sprint(t.num)
	}
	return &SyntaxError{t.pos, fmt.Sprintf("unexpected %q", head(text))}
}

func (p *parser) expect(op string) error {
	if t := p.peek(); t.kind != tokOp || t.text != op {
		return p.unexpected(t)
	}
	p.i++
	return nil
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tokOp && t.text == op
}

// expr parses an expression whose operators all bind tighter than minPower.
func (p *parser) expr(minPower int) (node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, &SyntaxError{p.peek().pos, fmt.Sprintf("expression nested deeper than %d", maxDepth)}
	}
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokOp {
			return left, nil
		}
		power, ok := binaryPower[t.text]
		if !ok || power <= minPower {
			return left, nil
		}
		p.i++
		switch t.text {
		case "[":
			args, err := p.args("]")
			if err != nil {
				return nil, err
			}
			left = &indexNode{recv: left, args: args, pos: t.pos}
		case ".", "?.":
			right, err := p.expr(bpDot)
			if err != nil {
				return nil, err
			}
			left = newDot(left, right, t.text == "?.", t.pos)
		case "->":
			right, err := p.expr(power - 1) // right associative
			if err != nil {
				return nil, err
			}
			left = &binaryNode{op: t.text, left: left, right: right, pos: t.pos}
		default:
			right, err := p.expr(power)
			if err != nil {
				return nil, err
			}
			binary, err := newBinary(t.text, left, right, t.pos)
			if err != nil {
				return nil, err
			}
			if err := p.compiled(binary.re, t.pos); err != nil {
				return nil, err
			}
			left = binary
		}
	}
}

func (p *parser) prefix() (node, error) {
	t := p.next()
	switch t.kind {
	case tokNumber:
		return &constNode{value: t.num}, nil
	case tokString:
		return &constNode{value: t.text}, nil
	case tokKeyword:
		switch t.text {
		case "true":
			return &constNode{value: true}, nil
		case "false":
			return &constNode{value: false}, nil
		case "null":
			return &constNode{value: nil}, nil
		}
		return &keywordNode{name: t.text}, nil
	case tokDollar:
		return &varNode{name: t.text}, nil
	case tokFunc:
		first := p.i
		args, err := p.args(")")
		if err != nil {
			return nil, err
		}
		call, err := newCall(t.text, args, t.pos)
		if err != nil {
			return nil, err
		}
		if dataDiffFunctions[t.text] {
			// Kept for Env.Trace: what an explanation quotes.
			call.text, call.argText = p.src[t.pos:p.toks[p.i-1].pos+1], p.argTexts(first, p.i-1)
		}
		return call, p.compiled(call.re, t.pos)
	case tokOp:
		switch t.text {
		case "(":
			inner, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			return inner, p.expect(")")
		case "[":
			args, err := p.args("]")
			if err != nil {
				return nil, err
			}
			return &listNode{items: args, pos: t.pos}, nil
		case "{":
			args, err := p.args("}")
			if err != nil {
				return nil, err
			}
			return &mapNode{pairs: args, pos: t.pos}, nil
		case "-", "+":
			operand, err := p.expr(bpUnary)
			if err != nil {
				return nil, err
			}
			return &unaryNode{op: t.text, operand: operand, pos: t.pos}, nil
		case "not":
			operand, err := p.expr(bpNot)
			if err != nil {
				return nil, err
			}
			return &unaryNode{op: t.text, operand: operand, pos: t.pos}, nil
		}
	}
	p.i--
	return nil, p.unexpected(t)
}

// args parses a comma-separated argument list up to the closing token; an argument may
// be a `key => value` pair.
// argTexts is the source of each argument of a call whose tokens after
// the "(" run from toks[from] to the closing ")" at toks[end].
func (p *parser) argTexts(from, end int) []string {
	var texts []string
	depth, start := 0, p.toks[from].pos
	for i := from; i < end; i++ {
		switch t := p.toks[i]; {
		case t.kind == tokFunc || t.kind == tokOp && (t.text == "(" || t.text == "[" || t.text == "{"):
			depth++
		case t.kind == tokOp && (t.text == ")" || t.text == "]" || t.text == "}"):
			depth--
		case t.kind == tokOp && t.text == "," && depth == 0:
			texts = append(texts, strings.TrimSpace(p.src[start:t.pos]))
			start = t.pos + 1
		}
	}
	if end > from {
		texts = append(texts, strings.TrimSpace(p.src[start:p.toks[end].pos]))
	}
	return texts
}

func (p *parser) args(closing string) ([]node, error) {
	var args []node
	if p.isOp(closing) {
		p.i++
		return args, nil
	}
	for {
		arg, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if p.isOp("=>") {
			pos := p.next().pos
			value, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			arg = &pairNode{key: arg, value: value, pos: pos}
		}
		args = append(args, arg)
		if p.isOp(",") {
			p.i++
			continue
		}
		return args, p.expect(closing)
	}
}
