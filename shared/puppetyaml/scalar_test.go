package puppetyaml

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// psychScalars are plain scalars and what Psych 4.0.4's
// ScalarScanner#tokenize (Ruby 3.1, Debian's puppet-agent) returns for them
// under Puppet's YAML.safe_load(permitted_classes: [Symbol], aliases: true),
// written as Ruby's #inspect prints the value; "ERROR" where safe_load
// raises. The rows were taken from real Ruby, and TestScalarsAgainstRuby
// checks them against it again (make hiera).
var psychScalars = []struct{ in, want, why string }{
	// Booleans and null: the word branch, case-insensitive (/i), words of at most 5 characters.
	{"yes", "true", "yes|true|on"}, {"Yes", "true", ""}, {"YES", "true", ""}, {"yEs", "true", "any case: the regexp is /i"},
	{"no", "false", "no|false|off"}, {"No", "false", ""}, {"NO", "false", ""},
	{"on", "true", ""}, {"On", "true", ""}, {"ON", "true", ""},
	{"off", "false", ""}, {"Off", "false", ""}, {"OFF", "false", ""},
	{"true", "true", ""}, {"True", "true", ""}, {"TRUE", "true", ""}, {"tRUE", "true", ""},
	{"false", "false", ""}, {"False", "false", ""}, {"FALSE", "false", ""},
	{"y", `"y"`, "not a boolean in Psych, unlike the YAML 1.1 type repository"}, {"Y", `"Y"`, ""}, {"n", `"n"`, ""}, {"N", `"N"`, ""},
	{"falsey", `"falsey"`, "longer than 5 characters: a string"},
	{"~", "nil", ""}, {"null", "nil", ""}, {"Null", "nil", ""}, {"NULL", "nil", ""}, {"nULL", "nil", ""},
	// Sexagesimal: parts weighted 60^|i-2| from the left.
	{"1:30", "5400", "two parts are hours and minutes: 1*3600 + 30*60"},
	{"-1:30", "-1800", "only the first part is negative: -3600 + 1800"},
	{"+1:30", "5400", ""},
	{"1:30:15", "5415", ""},
	{"190:20:30", "685230", ""},
	{"1:5", "3900", ""},
	{"010:20", "37200", ""},
	{"1_0:30", "37800", "String#to_i reads the underscore"},
	{"1:60", `"1:60"`, "60 is no base-60 digit"},
	{"1:30:15:10", `"1:30:15:10"`, "at most three parts"},
	{"1:30.5", "5430.0", "the float form"},
	{"1:30.5_5", "5433.0", ""},
	{"-1:30.5", "-1770.0", ""},
	{"21:59:43.10", "79183.1", ""},
	// Integers: INTEGER_LEGACY, read by Kernel#Integer after deleting , and _.
	{"0755", "493", "a leading 0 is octal"},
	{"0_755", "493", ""},
	{"08", `"08"`, "not octal, not decimal: a string"},
	{"00", "0", ""}, {"0", "0", ""}, {"-0", "0", ""}, {"+1", "1", ""}, {"-12", "-12", ""},
	{"0o755", `"0o755"`, "0o is YAML 1.2; Psych keeps the text"},
	{"0x1F", "31", ""}, {"0X1F", `"0X1F"`, "upper-case X is no hex prefix"}, {"0x_1F", "31", ""},
	{"0b101", "5", ""}, {"0b", `"0b"`, ""}, {"0x", `"0x"`, ""},
	{"1_000", "1000", ""}, {"-1_0", "-10", ""}, {"1__0", `"1__0"`, "one underscore between digits"},
	{"1,000", "1000", "commas: INTEGER_LEGACY"}, {"1,2,3", "123", ""}, {"0,7", "7", ""}, {"0x1,F", "31", ""},
	{"123456789012345678901234567890", "123456789012345678901234567890", "any size"},
	{"0777777777777777777777777", "4722366482869645213695", ""},
	// Floats: FLOAT needs a dot, and a sign on the exponent.
	{"1.5e3", `"1.5e3"`, "no sign on the exponent: a string"},
	{"1e3", `"1e3"`, "no dot: a string"},
	{"12e03", `"12e03"`, ""},
	{"1.5e+3", "1500.0", ""}, {"1.5E-3", "0.0015", ""}, {"6.8523015e+5", "685230.15", ""},
	{"1.e+3", "1000.0", ""}, {"1.", "1.0", ""}, {".5", "0.5", ""}, {"+.5", "0.5", ""}, {"00.5", "0.5", ""}, {"09.5", "9.5", ""},
	{"0.1", "0.1", ""}, {"1_000.5", "1000.5", ""}, {"1,000.5", "1000.5", ""}, {"685_230.15", "685230.15", ""},
	{"1,000.5e+3", "1000500.0", ""},
	{"685.230_15e+03", `"685.230_15e+03"`, "no underscore after the dot"},
	{"1_0.5_0", `"1_0.5_0"`, ""},
	{".", `"."`, ""}, {"+.", `"+."`, ""},
	{".e+3", "ERROR", "FLOAT matches, Float(\"e+3\") raises"},
	{"1.0e+400", "Infinity", "out of range"},
	{"-0.0", "-0.0", ""},
	{".inf", "Infinity", ""}, {".Inf", "Infinity", ""}, {".INF", "Infinity", ""}, {"+.inf", "Infinity", ""},
	{"-.inf", "-Infinity", ""}, {"-.Inf", "-Infinity", ""},
	{".nan", "NaN", ""}, {".NaN", "NaN", ""}, {".NAN", "NaN", ""},
	{".infinity", `".infinity"`, ""},
	// Dates and times load Date and Time, which safe_load does not permit.
	{"2001-12-14", "ERROR", "Tried to load unspecified class: Date"},
	{"2001-02-30", "ERROR", "refused before the date is checked"},
	{"2001-13-01", `"2001-13-01"`, "no month 13: the regexp does not match"},
	{"2001-12-14t21:59:43.10-05:00", "ERROR", "Tried to load unspecified class: Time"},
	{"2001-12-14 21:59:43.10 -5", "ERROR", ""},
	// Symbols.
	{":sym", ":sym", ""},
	{`:"x y"`, `:"x y"`, "quoted symbol"},
	{"::x", `:":x"`, "one colon goes"},
	// Strings.
	{"=", `"="`, ""}, {"hello world", `"hello world"`, ""}, {"1 apple", `"1 apple"`, ""},
}

func TestTokenize(t *testing.T) {
	for _, tt := range psychScalars {
		v, err := tokenize(tt.in)
		if got := rubyInspect(v, err); got != tt.want {
			t.Errorf("tokenize(%q) = %s, Psych gives %s %s", tt.in, got, tt.want, tt.why)
		}
	}
}

// rubyInspect writes a tokenize result as Ruby's #inspect would.
func rubyInspect(v any, err error) string {
	if err != nil {
		return "ERROR"
	}
	switch t := v.(type) {
	case nil:
		return "nil"
	case bool:
		return strconv.FormatBool(t)
	case string:
		return strconv.Quote(t)
	case *big.Int:
		return t.String()
	case symbol:
		if strings.ContainsAny(string(t), ` :"`) {
			return ":" + strconv.Quote(string(t))
		}
		return ":" + string(t)
	case float64:
		switch {
		case math.IsNaN(t):
			return "NaN"
		case math.IsInf(t, 1):
			return "Infinity"
		case math.IsInf(t, -1):
			return "-Infinity"
		case t != 0 && (math.Abs(t) >= 1e16 || math.Abs(t) < 1e-4):
			m, e, _ := strings.Cut(strconv.FormatFloat(t, 'e', -1, 64), "e")
			if !strings.Contains(m, ".") {
				m += ".0"
			}
			return m + "e" + e
		}
		s := strconv.FormatFloat(t, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return fmt.Sprintf("%T", v)
}

// TestScalarsAgainstRuby loads every row through real Ruby Psych as
// Puppet's yaml_data does. puppet/test/run.sh runs it with Puppet's Ruby.
func TestScalarsAgainstRuby(t *testing.T) {
	if os.Getenv("TUNINGBOX_HIERA_TEST") != "1" {
		t.Skip("set TUNINGBOX_HIERA_TEST=1 (make hiera) to check the rows against Ruby's Psych")
	}
	var in bytes.Buffer
	for _, tt := range psychScalars {
		fmt.Fprintln(&in, tt.in)
	}
	const script = `require 'yaml'
STDIN.each_line do |line|
  begin
    puts YAML.safe_load("k: " + line, permitted_classes: [Symbol], aliases: true)["k"].inspect
  rescue StandardError, Psych::Exception
    puts "ERROR"
  end
end`
	cmd := exec.Command("ruby", "-e", script)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ruby: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(psychScalars) {
		t.Fatalf("ruby printed %d lines for %d rows", len(got), len(psychScalars))
	}
	for i, tt := range psychScalars {
		if got[i] != tt.want {
			t.Errorf("Psych reads %q as %s; the table says %s", tt.in, got[i], tt.want)
		}
	}
	t.Logf("%d scalars: the table agrees with %s", len(psychScalars), rubyVersion(t))
}

func rubyVersion(t *testing.T) string {
	out, err := exec.Command("ruby", "-ryaml", "-e", `print "Ruby #{RUBY_VERSION}, Psych #{Psych::VERSION}"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
