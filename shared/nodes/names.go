package nodes

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
)

// MaxTraitLength is the longest trait name (Placement's limit).
const MaxTraitLength = 255

var (
	customTrait   = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+$`)
	standardTrait = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	hostLabel     = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	allDigits     = regexp.MustCompile(`^[0-9]+$`)
)

// CheckTrait validates a trait name: CUSTOM_ followed by uppercase letters,
// digits and underscores, or a standard trait name of the same alphabet
// (such as HW_CPU_X86_VMX); 1 to 255 characters.
func CheckTrait(name string) error {
	switch {
	case name == "":
		return errs.Invalidf("trait name must not be empty")
	case len(name) > MaxTraitLength:
		return errs.Invalidf("trait name %.40q... is longer than %d characters", name, MaxTraitLength)
	case strings.HasPrefix(name, "CUSTOM_"):
		if !customTrait.MatchString(name) {
			return errs.Invalidf("trait name %q: a custom trait is CUSTOM_ followed by A-Z, 0-9 and _", name)
		}
	case !standardTrait.MatchString(name):
		return errs.Invalidf("trait name %q must match ^CUSTOM_[A-Z0-9_]+$ or be a standard trait (A-Z, 0-9, _)", name)
	}
	return nil
}

// normalizeFQDN lowercases name and checks that it is a host name that can
// never be mistaken for another kind of node reference: not all digits (a
// legacy id) and not shaped like a UUID.
func normalizeFQDN(name string) (string, error) {
	fqdn := strings.ToLower(strings.TrimSuffix(name, "."))
	if fqdn == "" || len(fqdn) > 253 {
		return "", errs.Invalidf("fqdn %q must be 1 to 253 characters", name)
	}
	for label := range strings.SplitSeq(fqdn, ".") {
		if len(label) > 63 || !hostLabel.MatchString(label) {
			return "", errs.Invalidf("fqdn %q: label %q must be 1 to 63 of a-z, 0-9 and '-', not starting or ending with '-'", name, label)
		}
	}
	if allDigits.MatchString(fqdn) || ident.IsUUID(fqdn) {
		return "", errs.Invalidf("fqdn %q would be ambiguous with a node id or UUID", name)
	}
	return fqdn, nil
}

// checkNames validates a list of names with check and rejects duplicates.
func checkNames(kind string, names []string, check func(string) error) error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if err := check(n); err != nil {
			return err
		}
		if seen[n] {
			return errs.Invalidf("%s %q is listed twice", kind, n)
		}
		seen[n] = true
	}
	return nil
}

// AllSteps in a node's interfaces stands for every step of the interface.
const AllSteps = "*"

// checkInterfaces checks a node's supported deploy steps: interface names
// like a driver interface's, step names of 1 to 255 characters (a deploy
// template's rule), each step listed once.
func checkInterfaces(interfaces map[string][]string) error {
	for iface, steps := range interfaces {
		if !methodName.MatchString(iface) {
			return errs.Invalidf("interfaces: %q is not an interface name (a-z, 0-9 and _, at most 255 characters)", iface)
		}
		err := checkNames("interfaces."+iface+" step", steps, func(step string) error {
			if step == "" || len(step) > 255 {
				return errs.Invalidf("interfaces.%s: a step name has 1 to 255 characters", iface)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// methodName is the form of a driver interface's name.
var methodName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,254}$`)

func checkRole(name string) error {
	if name == "" || len(name) > 255 || strings.TrimSpace(name) != name {
		return errs.Invalidf("role %q must be 1 to 255 characters without surrounding spaces", name)
	}
	return nil
}

// checkPlacement checks a node's level values: level names are one URL
// segment, values non-empty text (the ConfigDB checks them again where it uses them).
func checkPlacement(levels map[string]string) error {
	for name, value := range levels {
		switch {
		case name == "" || len(name) > 255 || strings.ContainsAny(name, "/") || strings.IndexFunc(name, unicode.IsControl) >= 0:
			return errs.Invalidf("level name %q must be 1 to 255 characters of one URL segment", name)
		case value == "" || value == "." || value == ".." || utf8.RuneCountInString(value) > 255 || strings.IndexFunc(value, unicode.IsControl) >= 0 || !utf8.ValidString(value):
			return errs.Invalidf("level %q: value %q must be 1 to 255 characters of text", name, value)
		}
	}
	return nil
}
