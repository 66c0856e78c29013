package yaql

import (
	"fmt"
	"math"
	"strings"
)

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case map[string]any:
		return "a dict"
	case []any, *iterator:
		return "a list"
	case *set:
		return "a set"
	case undefinedValue:
		return "undefined"
	}
	if _, _, kind := number(v); kind != notNumber {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// describe shows a scalar in an error message.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", head(s))
	}
	return typeName(v)
}

// maxQuoted bounds what an error message quotes of a text (a string, a pattern,
// Go's error on a pattern, which quotes it too): one given at run time can be
// megabytes, and its head names it.
const maxQuoted = 100

// head is s, or its first maxQuoted bytes and "...".
func head(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return strings.ToValidUTF8(s[:maxQuoted], "") + "..."
}

// compare is <, >, <=, >= as yaql defines them: numbers with numbers, strings with
// strings, and null below everything else.
func compare(op string, left, right any, pos int) (any, error) {
	var c int
	switch {
	case left == nil && right == nil:
		c = 0
	case left == nil:
		c = -1
	case right == nil:
		c = 1
	default:
		ls, lok := left.(string)
		rs, rok := right.(string)
		if lok && rok {
			c = strings.Compare(ls, rs)
			break
		}
		li, lf, lk := number(left)
		ri, rf, rk := number(right)
		if lk == notNumber || rk == notNumber {
			return nil, failf(pos, "cannot compare %s with %s", typeName(left), typeName(right))
		}
		if lk == intNumber && rk == intNumber {
			c = cmpInt(li, ri)
			break
		}
		if lk == intNumber {
			lf = float64(li)
		}
		if rk == intNumber {
			rf = float64(ri)
		}
		switch {
		case lf < rf:
			c = -1
		case lf > rf:
			c = 1
		case lf != rf: // NaN: every comparison is false
			return false, nil
		}
	}
	switch op {
	case "<":
		return c < 0, nil
	case ">":
		return c > 0, nil
	case "<=":
		return c <= 0, nil
	}
	return c >= 0, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arithmetic is + - * / mod: Python's numbers (an int divided by an int is floored),
// strings and lists joined with +, dicts merged with +.
func arithmetic(ev *evaluator, op string, left, right any, pos int) (any, error) {
	li, lf, lk := number(left)
	ri, rf, rk := number(right)
	if lk != notNumber && rk != notNumber {
		if lk == intNumber && rk == intNumber {
			return intArithmetic(op, li, ri, pos)
		}
		if lk == intNumber {
			lf = float64(li)
		}
		if rk == intNumber {
			rf = float64(ri)
		}
		switch op {
		case "+":
			return lf + rf, nil
		case "-":
			return lf - rf, nil
		case "*":
			return lf * rf, nil
		}
		if rf == 0 {
			return nil, failf(pos, "division by zero")
		}
		if op == "/" {
			return lf / rf, nil
		}
		m := math.Mod(lf, rf)
		if m != 0 && (m < 0) != (rf < 0) {
			m += rf
		}
		return m, nil
	}
	if op == "+" {
		switch l := left.(type) {
		case string:
			if r, ok := right.(string); ok {
				if err := ev.allocBytes(len(l) + len(r)); err != nil {
					return nil, err
				}
				return l + r, nil
			}
		case map[string]any:
			if r, ok := right.(map[string]any); ok {
				if err := ev.alloc(len(l) + len(r)); err != nil {
					return nil, err
				}
				out := make(map[string]any, len(l)+len(r))
				for k, v := range l {
					out[k] = v
				}
				for k, v := range r {
					out[k] = v
				}
				return out, nil
			}
		case *set:
			if r, ok := right.(*set); ok {
				return newSet(ev, append(append([]any(nil), l.items...), r.items...))
			}
		}
		litems, lok := listItems(left)
		ritems, rok := listItems(right)
		if lok && rok {
			if err := ev.alloc(len(litems) + len(ritems)); err != nil {
				return nil, err
			}
			out := append(append(make([]any, 0, len(litems)+len(ritems)), litems...), ritems...)
			_, lplain := left.([]any)
			_, rplain := right.([]any)
			if lplain && rplain {
				return out, nil
			}
			return &iterator{items: out}, nil
		}
	}
	if op == "*" {
		if items, ok := listItems(left); ok && rk == intNumber {
			return repeatList(ev, items, ri)
		}
		if items, ok := listItems(right); ok && lk == intNumber {
			return repeatList(ev, items, li)
		}
	}
	return nil, failf(pos, "cannot apply %s to %s and %s", op, typeName(left), typeName(right))
}

func repeatList(ev *evaluator, items []any, times int64) (any, error) {
	if times <= 0 {
		return []any{}, nil
	}
	if times > int64(ev.values.max) || int64(len(items))*times > int64(ev.values.max) {
		return nil, ev.alloc(ev.values.max + 1)
	}
	if err := ev.alloc(len(items) * int(times)); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items)*int(times))
	for range times {
		out = append(out, items...)
	}
	return out, nil
}

func intArithmetic(op string, a, b int64, pos int) (any, error) {
	switch op {
	case "+":
		if s := a + b; (s > a) == (b > 0) {
			return s, nil
		}
	case "-":
		if d := a - b; (d < a) == (b > 0) {
			return d, nil
		}
	case "*":
		if a == 0 || b == 0 {
			return int64(0), nil
		}
		if p := a * b; p/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64) {
			return p, nil
		}
	default: // "/" and "mod" floor as Python does
		if b == 0 {
			return nil, failf(pos, "division by zero")
		}
		if a == math.MinInt64 && b == -1 {
			break
		}
		q, m := a/b, a%b
		if m != 0 && (m < 0) != (b < 0) {
			q--
			m += b
		}
		if op == "/" {
			return q, nil
		}
		return m, nil
	}
	return nil, failf(pos, "integer overflow")
}
