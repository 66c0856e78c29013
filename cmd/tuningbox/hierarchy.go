package main

import (
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
)

// hieraEntry is one entry of the Hiera hierarchy puppet/tuningbox recommends:
// the data source it reads ("*" for an interpolated segment such as
// %{calling_class}) and whether it reads one key of it (split: the key is the
// last segment, the data source the rest).
type hieraEntry struct {
	resource string
	split    bool
}

// recommendedHierarchy is the hierarchy of puppet/tuningbox/README.md and
// examples/hiera.yaml (a test keeps them equal), most specific first.
var recommendedHierarchy = []hieraEntry{
	{"override/node", false},
	{"override/class/*", true},
	{"override/module/*", true},
	{"override/plugins", false},
	{"override/common", false},
	{"override/configuration/node", false},
	{"override/configuration/role", false},
	{"override/configuration/cluster", false},
	{"class/*", true},
	{"module/*", true},
	{"deleted_nodes", false},
	{"nodes", false},
	{"globals", false},
	{"astute", false},
}

// hierarchyReads reports whether the recommended hierarchy reads data source
// resource: as a whole (key ""), or its top-level key (an imported per-key file).
func hierarchyReads(resource, key string) bool {
	return slices.ContainsFunc(recommendedHierarchy, func(e hieraEntry) bool {
		if e.split {
			// A split entry reads the keys of its data source named by the interpolated segment.
			return path.Dir(e.resource) == resource
		}
		matched, _ := path.Match(e.resource, resource)
		return matched && key == ""
	})
}

// warnUnread prints a warning for every file of uploads the recommended
// hierarchy would not read: imported, its data would never reach Puppet.
func warnUnread(w io.Writer, uploads []*upload) {
	const hierarchy = "the hierarchy of puppet/tuningbox/README.md"
	for _, u := range uploads {
		if u.whole != "" && !hierarchyReads(u.resource, "") {
			fmt.Fprintf(w, "warning: %s: %s does not read data source %s\n", u.whole, hierarchy, u.resource)
		}
		for _, key := range slices.Sorted(maps.Keys(u.keyed)) {
			if hierarchyReads(u.resource, key) {
				continue
			}
			reason := "does not read data source " + u.resource
			if hierarchyReads(u.resource, "") {
				reason = fmt.Sprintf("reads data source %s whole, not its key %s (see Fuel's per-FQDN layout there)", u.resource, key)
			}
			fmt.Fprintf(w, "warning: %s: %s %s\n", u.keyed[key], hierarchy, strings.TrimSpace(reason))
		}
	}
}
