package puppetyaml

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is Psych's ScalarScanner#tokenize (Ruby 3.1, Psych 4.0.4, the
// Psych of Debian's puppet-agent): how a plain scalar's text becomes a Ruby
// value. The branches and regular expressions are Psych's, in Psych's order;
// the Ruby behaviour each one relies on (Integer(), Float(), String#to_i,
// String#to_f) is written out next to it. Table tests in scalar_test.go hold
// the values real Psych returns, and puppet/test checks them against Ruby.

// symbol is a Ruby Symbol (":name"): Puppet turns symbol keys into strings
// and refuses symbol values.
type symbol string

// refusal is a scalar Psych or Puppet refuses to load: a Date or a Time
// (Puppet allows no class but Symbol in safe_load), or a number Ruby's
// Integer()/Float() rejects after Psych's regular expression accepted it.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

var (
	// The "looks like a word" test Psych runs first; Ruby's [[:alpha:]] is
	// Unicode-aware, hence \p{L}.
	psychWord = regexp.MustCompile(`^[^\d.:-]?[\p{L}\p{Nl}_\s!@#$%^&*(){}<>|/\\~;=]+`)
	// Ruby's ^ and $ match at line boundaries: (?m) keeps that for the word
	// branch, the only one a string with a newline reaches.
	notSpecialStart = regexp.MustCompile(`(?im)^[^ytonf~]`)
	nullWord        = regexp.MustCompile(`(?im)^null$`)
	trueWord        = regexp.MustCompile(`(?im)^(yes|true|on)$`)
	falseWord       = regexp.MustCompile(`(?im)^(no|false|off)$`)

	timeRE           = regexp.MustCompile(`^-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|\s+)\d{1,2}:\d\d:\d\d(?:\.\d*)?(?:\s*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$`)
	dateRE           = regexp.MustCompile(`^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$`)
	positiveInfRE    = regexp.MustCompile(`(?i)^\+?\.inf$`)
	negativeInfRE    = regexp.MustCompile(`(?i)^-\.inf$`)
	nanRE            = regexp.MustCompile(`(?i)^\.nan$`)
	quotedSymbolRE   = regexp.MustCompile(`^:(["'])`)
	sexagesimalInt   = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$`)
	sexagesimalFloat = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}\.[0-9_]*$`)
	floatRE          = regexp.MustCompile(`^(?:[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?)$`)
	bareDotRE        = regexp.MustCompile(`^[-+]?\.$`)
	dotBeforeExp     = regexp.MustCompile(`\.([Ee]|$)`)
	// INTEGER_LEGACY: Psych's default, which also takes commas.
	integerRE = regexp.MustCompile(`^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$`)
	// The prefix String#to_i and String#to_f read: digits, single
	// underscores between digits, and for to_f a fraction.
	rubyToI = regexp.MustCompile(`^[-+]?[0-9]+(?:_[0-9]+)*`)
	rubyToF = regexp.MustCompile(`^[-+]?[0-9]+(?:_[0-9]+)*(?:\.[0-9]+(?:_[0-9]+)*)?`)
)

// tokenize returns what Psych makes of a plain scalar: nil, bool, string,
// *big.Int, float64 or symbol, or a *refusal.
func tokenize(s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	switch {
	case psychWord.MatchString(s) || strings.Contains(s, "\n"):
		if utf8.RuneCountInString(s) > 5 {
			return s, nil
		}
		switch {
		case notSpecialStart.MatchString(s):
			return s, nil
		case s == "~" || nullWord.MatchString(s):
			return nil, nil
		case trueWord.MatchString(s):
			return true, nil
		case falseWord.MatchString(s):
			return false, nil
		}
		return s, nil
	case timeRE.MatchString(s):
		return nil, &refusal{"reads as a Ruby Time, which Puppet's yaml_data refuses (\"Tried to load unspecified class: Time\"); quote it to keep the text"}
	case dateRE.MatchString(s):
		return nil, &refusal{"reads as a Ruby Date, which Puppet's yaml_data refuses (\"Tried to load unspecified class: Date\"); quote it to keep the text"}
	case positiveInfRE.MatchString(s):
		return math.Inf(1), nil
	case negativeInfRE.MatchString(s):
		return math.Inf(-1), nil
	case nanRE.MatchString(s):
		return math.NaN(), nil
	case strings.HasPrefix(s, ":") && len(s) > 1:
		// :"a b" and :'a b' name the symbol inside the quotes (Psych's
		// /^:(["'])(.*)\1/ is not anchored at the end, and drops one more
		// leading colon there); otherwise the name follows the colon.
		if m := quotedSymbolRE.FindStringSubmatch(s); m != nil {
			if end := strings.LastIndex(s[2:], m[1]); end >= 0 {
				return symbol(strings.TrimPrefix(s[2:2+end], ":")), nil
			}
		}
		return symbol(s[1:]), nil
	case sexagesimalInt.MatchString(s):
		return sexagesimal(s), nil
	case sexagesimalFloat.MatchString(s):
		return sexagesimalFraction(s), nil
	case floatRE.MatchString(s):
		if bareDotRE.MatchString(s) {
			return s, nil
		}
		return rubyFloat(dotBeforeExp.ReplaceAllString(strings.NewReplacer(",", "", "_", "").Replace(s), "$1"))
	case integerRE.MatchString(s):
		return rubyInteger(strings.NewReplacer(",", "", "_", "").Replace(s))
	}
	return s, nil
}

// sexagesimal is Psych's base-60 integer: the parts are weighted 60^|i-2|
// from the left, so "1:30" is 1*3600 + 30*60 = 5400 and "1:30:15" is 5415;
// each part is read by String#to_i, so only the first carries a sign.
func sexagesimal(s string) *big.Int {
	sum := new(big.Int)
	for i, part := range strings.Split(s, ":") {
		n, _ := new(big.Int).SetString(strings.ReplaceAll(rubyToI.FindString(part), "_", ""), 10)
		sum.Add(sum, n.Mul(n, new(big.Int).Exp(big.NewInt(60), big.NewInt(int64(abs(i-2))), nil)))
	}
	return sum
}

// sexagesimalFraction is the same with String#to_f parts ("1:30.5" = 5430.0).
func sexagesimalFraction(s string) float64 {
	var sum float64
	for i, part := range strings.Split(s, ":") {
		f, _ := strconv.ParseFloat(strings.ReplaceAll(rubyToF.FindString(part), "_", ""), 64)
		weight := 1.0
		for range abs(i - 2) {
			weight *= 60
		}
		sum += f * weight
	}
	return sum
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// rubyInteger is Kernel#Integer on a string: 0b binary, 0x hex, a leading 0
// octal, otherwise decimal, any size.
func rubyInteger(s string) (any, error) {
	digits := strings.TrimLeft(s, "+-")
	if len(digits) > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9' {
		s = strings.Replace(s, "0", "0o", 1) // big.Int's base prefix for C-style octal
	}
	i, ok := new(big.Int).SetString(s, 0)
	if !ok {
		return nil, &refusal{"Psych reads it as an integer but Ruby's Integer() rejects it, so Puppet cannot load the file"}
	}
	return i, nil
}

// rubyFloat is Kernel#Float on what Psych's FLOAT accepted; out of range it
// is an infinity, as in Ruby.
func rubyFloat(s string) (any, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, &refusal{"Psych reads it as a float but Ruby's Float() rejects it, so Puppet cannot load the file"}
	}
	return f, nil
}

// rubyFloatText is Kernel#Float on a string given an explicit !!float tag:
// surrounding blanks, underscores between digits and 0x hex are allowed.
var rubyFloatText = regexp.MustCompile(`^[-+]?(?:[0-9]+(?:_[0-9]+)*)?(?:\.[0-9]+(?:_[0-9]+)*)?(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?$`)

// toFloat is Psych's Float(tokenize(value)) for a scalar tagged !!float.
func toFloat(v any, text string) (any, error) {
	switch t := v.(type) {
	case float64:
		return t, nil
	case *big.Int:
		f, _ := new(big.Float).SetInt(t).Float64()
		return f, nil
	case string:
		s := strings.TrimSpace(t)
		if h, ok := strings.CutPrefix(strings.TrimLeft(s, "+-"), "0x"); ok {
			if i, ok := new(big.Int).SetString(strings.ReplaceAll(h, "_", ""), 16); ok {
				if strings.HasPrefix(s, "-") {
					i.Neg(i)
				}
				return toFloat(i, text)
			}
		} else if s != "" && rubyFloatText.MatchString(s) && strings.ContainsAny(s, "0123456789") {
			return rubyFloat(strings.ReplaceAll(s, "_", ""))
		}
	}
	return nil, &refusal{"tagged !!float, but Ruby's Float() rejects " + strconv.Quote(text) + ", so Puppet cannot load the file"}
}
