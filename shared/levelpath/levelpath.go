// Package levelpath reads the level path of a ConfigDB document address, as
// every API writes it after the environment:
//
//	{level}/{value}/.../resources/{resource...}/{values|overrides}[/...]
//
// and knows which level names are node-bound. It is shared by the ConfigDB
// (shared/configdb), its HTTP routes and the auth policy, which confines a
// node to its own placement without depending on either.
package levelpath

import "github.com/tuningbox/tuningbox/shared/errs"

// Level is one level of a path: the level's name and the value at it.
type Level struct {
	Name  string
	Value string
}

// The node-bound level. An environment's level named "nodes" (as in Fuel) or
// "node" (as spec 000's CLI examples write it) takes registered nodes as
// values; in a path either name addresses the environment's node level.
const (
	NodeLevel      = "nodes"
	NodeLevelAlias = "node"
)

// IsNodeLevel reports whether a level of that name is node-bound.
func IsNodeLevel(name string) bool { return name == NodeLevel || name == NodeLevelAlias }

// Split reads the segments of a document path after its environment: the
// level path, and the segments after "resources" (the resource name and what
// follows it). Not a document path: a NotFound error.
func Split(segs []string) ([]Level, []string, error) {
	var levels []Level
	for len(segs) > 0 && segs[0] != "resources" {
		if len(segs) < 2 {
			return nil, nil, errs.NotFoundf("level %q has no value", segs[0])
		}
		levels = append(levels, Level{Name: segs[0], Value: segs[1]})
		segs = segs[2:]
	}
	if len(segs) == 0 {
		return nil, nil, errs.NotFoundf("expected .../resources/<resource>/values or /overrides")
	}
	return levels, segs[1:], nil
}
