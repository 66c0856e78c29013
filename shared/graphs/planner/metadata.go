package planner

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// EntryMetadata is what a release (or a plugin) says of roles, as Nailgun's
// release does: roles_metadata maps a role to its tags (and other fields,
// kept as given), tags_metadata says which tags have a primary node.
type EntryMetadata struct {
	RolesMetadata map[string]json.RawMessage `json:"roles_metadata,omitempty"`
	TagsMetadata  map[string]json.RawMessage `json:"tags_metadata,omitempty"`
	// DeploymentInfoResource names the ConfigDB resource whose effective
	// document at a node is that node's deployment data ($ in conditions);
	// DefaultDeploymentInfoResource when empty.
	DeploymentInfoResource string `json:"deployment_info_resource,omitempty"`
}

// DefaultDeploymentInfoResource holds a node's deployment data (Fuel's astute.yaml).
const DefaultDeploymentInfoResource = "astute"

// roleMetadata and tagMetadata are the fields of the metadata tuningbox reads.
type roleMetadata struct {
	Tags []string `json:"tags"`
}

type tagMetadata struct {
	HasPrimary bool `json:"has_primary"`
}

// Validate checks that the role and tag metadata tuningbox reads are well formed.
func (m EntryMetadata) Validate() error {
	for _, role := range sortedKeys(m.RolesMetadata) {
		var rm roleMetadata
		if err := decodeMetadata(m.RolesMetadata[role], &rm); err != nil {
			return errs.Invalidf("roles_metadata.%s: %s", role, err)
		}
	}
	for _, tag := range sortedKeys(m.TagsMetadata) {
		var tm tagMetadata
		if err := decodeMetadata(m.TagsMetadata[tag], &tm); err != nil {
			return errs.Invalidf("tags_metadata.%s: %s", tag, err)
		}
	}
	if len(m.DeploymentInfoResource) > 255 {
		return errs.Invalidf("deployment_info_resource: at most 255 characters")
	}
	return nil
}

func decodeMetadata(raw json.RawMessage, v any) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return errs.Invalidf("must be an object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errs.Invalidf("%v", err)
	}
	return nil
}

// Rules are the role and tag metadata of a cluster: its release's,
// overridden role by role and tag by tag by its plugins' (in plugin order).
type Rules struct {
	roleTags   map[string][]string
	hasPrimary map[string]bool
}

// NewRules returns the rules of a release's metadata and its plugins', in plugin order.
func NewRules(entries ...EntryMetadata) Rules {
	r := Rules{roleTags: map[string][]string{}, hasPrimary: map[string]bool{}}
	for _, e := range entries {
		for role, raw := range e.RolesMetadata {
			var rm roleMetadata
			if json.Unmarshal(raw, &rm) == nil && rm.Tags != nil {
				r.roleTags[role] = rm.Tags
			}
		}
		for tag, raw := range e.TagsMetadata {
			var tm tagMetadata
			if json.Unmarshal(raw, &tm) == nil {
				r.hasPrimary[tag] = tm.HasPrimary
			}
		}
	}
	return r
}

// known reports whether a placement name is one the release's metadata
// defines (a role, a tag, the primary form of a tag with has_primary, or
// "master"), or a pattern: such a name matching no node of a cluster is
// normal (a cluster without Cinder nodes), not worth a warning.
func (r Rules) known(name string) bool {
	if isPattern(name) || name == "master" {
		return true
	}
	if _, ok := r.roleTags[name]; ok {
		return true
	}
	for _, tags := range r.roleTags {
		for _, tag := range tags {
			if name == tag || r.hasPrimary[tag] && name == primaryPrefix+tag {
				return true
			}
		}
	}
	return false
}

// primaryPrefix marks a role or tag held by the cluster's primary node.
const primaryPrefix = "primary-"

// baseRole returns the role a node's role stands for, and whether the node
// is named primary for it: Fuel's astute.yaml writes "primary-controller"
// for the controller role of the primary controller.
func (r Rules) baseRole(role string) (string, bool) {
	if base, ok := strings.CutPrefix(role, primaryPrefix); ok {
		if _, known := r.roleTags[base]; known {
			return base, true
		}
	}
	return role, false
}

// tagsOf returns the tags a role gives: its metadata's, or itself without any.
func (r Rules) tagsOf(role string) []string {
	if tags, ok := r.roleTags[role]; ok {
		return tags
	}
	return []string{role}
}

// nodeTags gives each node its tags (Nailgun's Node.all_tags): the tags of
// its roles, where a tag with has_primary is "primary-<tag>" (instead of the
// tag) on one node of the cluster: the lowest id of the nodes named primary
// for a role that gives the tag, else the lowest id of the nodes that carry it.
func (r Rules) nodeTags(nodes []ClusterNode) [][]string {
	type carried struct {
		tags    []string
		primary map[string]bool // tags the node is named primary for
	}
	per := make([]carried, len(nodes))
	for n, node := range nodes {
		per[n].primary = map[string]bool{}
		for _, role := range node.Roles {
			base, primary := r.baseRole(role)
			for _, tag := range r.tagsOf(base) {
				if !slices.Contains(per[n].tags, tag) {
					per[n].tags = append(per[n].tags, tag)
				}
				if primary {
					per[n].primary[tag] = true
				}
			}
		}
	}
	// The primary node of each tag: a node named primary for it before one
	// that is not, then the lowest id.
	better := func(n, cur int, tag string) bool {
		if per[n].primary[tag] != per[cur].primary[tag] {
			return per[n].primary[tag]
		}
		return lowerID(nodes[n].ID, nodes[cur].ID)
	}
	primaryOf := map[string]int{}
	for n := range nodes {
		for _, tag := range per[n].tags {
			if cur, ok := primaryOf[tag]; r.hasPrimary[tag] && (!ok || better(n, cur, tag)) {
				primaryOf[tag] = n
			}
		}
	}
	out := make([][]string, len(nodes))
	for n := range nodes {
		tags := make([]string, len(per[n].tags))
		for i, tag := range per[n].tags {
			if p, ok := primaryOf[tag]; ok && p == n {
				tag = primaryPrefix + tag
			}
			tags[i] = tag
		}
		out[n] = tags
	}
	return out
}

// checkPrimaries refuses two nodes named primary for one tag: a node with
// the role primary-<role> is named primary for each tag of <role> (<role>
// itself without metadata), and a tag has one primary node, so both would
// run the tasks of the primary.
func (r Rules) checkPrimaries(nodes []ClusterNode) error {
	named := map[string][]string{} // tag -> ids of the nodes named primary for it
	roleOf := map[string]string{}  // tag -> a role that names its primary
	for _, node := range nodes {
		for _, role := range node.Roles {
			base, ok := strings.CutPrefix(role, primaryPrefix)
			if !ok || base == "" {
				continue
			}
			for _, tag := range r.tagsOf(base) {
				if !slices.Contains(named[tag], node.ID) {
					named[tag], roleOf[tag] = append(named[tag], node.ID), role
				}
			}
		}
	}
	for _, tag := range sortedKeys(named) {
		if ids := named[tag]; len(ids) > 1 {
			slices.SortFunc(ids, func(a, b string) int {
				if lowerID(a, b) {
					return -1
				}
				return 1
			})
			return errs.Conflictf("nodes %s and %s are each named primary for tag %s (role %s): a tag has one primary node; give all but one the role %s",
				strings.Join(ids[:len(ids)-1], ", "), ids[len(ids)-1], tag, roleOf[tag], strings.TrimPrefix(roleOf[tag], primaryPrefix))
		}
	}
	return nil
}

// lowerID orders node ids numerically (they are the registry's integers).
func lowerID(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA != nil || errB != nil {
		return a < b
	}
	return x < y
}
