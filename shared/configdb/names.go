package configdb

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
)

const (
	// maxNameLen bounds names and level values (in characters; at most 1020 bytes,
	// so they fit an index sort key).
	maxNameLen = 255
	// maxLevels bounds an environment's hierarchy: a warm effective read fetches
	// two heads per prefix of the level path in one BatchGet.
	maxLevels = 16
	// maxKeyBytes is the store's bound on partition and sort keys.
	maxKeyBytes = 1024
)

// Level names that would make environment URLs ambiguous.
var reservedLevelNames = map[string]bool{"resources": true, "hierarchy_levels": true}

// refKind says how a reference string names an entity.
type refKind int

const (
	byName refKind = iota
	byID
	byUUID
)

// ref is a parsed reference: an integer id, a UUID, or a name. Names can never
// look like ids or UUIDs (validName refuses them), so the parse is unambiguous.
type ref struct {
	kind refKind
	id   int64
	uuid string
	name string
}

func parseRef(s string) ref {
	switch {
	case ident.IsIntegerID(s):
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			return ref{kind: byID, id: id}
		}
	case ident.IsUUID(s):
		return ref{kind: byUUID, uuid: strings.ToLower(s)}
	}
	return ref{kind: byName, name: s}
}

// validName checks a component or resource definition name: names may contain
// "/" (override/plugins) but no empty, "." or ".." segment, no control
// characters, and must not look like an id or UUID.
func validName(what, name string) error {
	if err := validText(what, name); err != nil {
		return err
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return errs.Invalidf("%s %q has an empty, '.' or '..' path segment", what, name)
		}
	}
	if ident.IsIntegerID(name) || ident.IsUUID(name) {
		return errs.Invalidf("%s %q looks like an id; names must not be integers or UUIDs", what, name)
	}
	return nil
}

// validLevelName checks a hierarchy level name: one URL segment, not an id, not reserved.
func validLevelName(name string) error {
	if err := validText("hierarchy level name", name); err != nil {
		return err
	}
	switch {
	case strings.Contains(name, "/") || name == "." || name == "..":
		return errs.Invalidf("hierarchy level name %q must be one URL segment", name)
	case reservedLevelNames[name]:
		return errs.Invalidf("hierarchy level name %q is reserved", name)
	case ident.IsIntegerID(name) || ident.IsUUID(name):
		return errs.Invalidf("hierarchy level name %q looks like an id; names must not be integers or UUIDs", name)
	}
	return nil
}

// validLevelValue checks one level value of a document address (a node id, a role name, ...).
func validLevelValue(lv LevelValue) error {
	if err := validText("level value of '"+lv.Name+"'", lv.Value); err != nil {
		return err
	}
	if lv.Value == "." || lv.Value == ".." {
		return errs.Invalidf("level value %q is not allowed", lv.Value)
	}
	return nil
}

func validText(what, s string) error {
	switch {
	case s == "":
		return errs.Invalidf("%s must not be empty", what)
	case !utf8.ValidString(s):
		return errs.Invalidf("%s must be valid UTF-8", what)
	case utf8.RuneCountInString(s) > maxNameLen:
		return errs.Invalidf("%s is longer than %d characters", what, maxNameLen)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return errs.Invalidf("%s %q contains control characters", what, s)
	}
	return nil
}
