package authapi

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
	"github.com/tuningbox/tuningbox/shared/store"
)

// writerWindow bounds how far from a version's creation its audit record is
// looked for: the record is written with the version or right after it.
const writerWindow = time.Minute

// VersionWriters finds who wrote a ConfigDB document version in log: the
// audited PUT or PATCH under the document's environment, recorded within
// writerWindow of the version, that created that version number of that
// document (kind, resource by id, UUID or name, level path; a node by any of
// its names, in a full or a short node path).
func VersionWriters(log *audit.Log) configdb.WriterLookup {
	return func(ctx context.Context, d configdb.WrittenDoc) (*configdb.Writer, error) {
		q := audit.Query{
			Environment: strconv.FormatInt(d.Env, 10),
			Before:      store.SortID(d.Version.CreatedAt.Add(writerWindow).UnixNano()),
			Limit:       audit.DefaultLimit,
		}
		oldest := d.Version.CreatedAt.Add(-time.Second)
		for {
			records, err := log.List(ctx, q)
			if err != nil {
				return nil, err
			}
			for _, rec := range records {
				if rec.Time.Before(oldest) {
					return nil, nil
				}
				if rec.Version == d.Version.Version && (rec.Method == http.MethodPut || rec.Method == http.MethodPatch) && recordsWrite(rec.Path, d) {
					return &configdb.Writer{Principal: rec.Principal, Role: rec.Role, Time: rec.Time}, nil
				}
				q.Before = rec.ID
			}
			if len(records) < q.Limit {
				return nil, nil
			}
		}
	}
}

// recordsWrite reports whether an audited document path addresses d.
func recordsWrite(escapedPath string, d configdb.WrittenDoc) bool {
	segs, ok := pathSegments(escapedPath)
	if !ok || !hasPrefix(segs, "api", "v1", "config", "environments") || len(segs) < 6 {
		return false
	}
	levels, rest, err := configapi.SplitLevelPath(segs[5:])
	if err != nil {
		return false
	}
	if n := len(rest); n >= 3 && rest[n-2] == "keys" {
		rest = rest[:n-2]
	}
	if len(rest) < 2 {
		return false
	}
	kind, ok := configdb.ParseKind(rest[len(rest)-1])
	resource := strings.Join(rest[:len(rest)-1], "/")
	if !ok || kind != d.Kind || !slices.Contains([]string{strconv.FormatInt(d.Resource.ID, 10), d.Resource.UUID, d.Resource.Name}, resource) {
		return false
	}
	// A short node path starts at the node level: compare the levels from the end.
	if len(levels) > len(d.Levels) || len(levels) < len(d.Levels) && (len(levels) == 0 || !configdb.IsNodeLevel(levels[0].Name)) {
		return false
	}
	offset := len(d.Levels) - len(levels)
	if offset > 0 && !configdb.IsNodeLevel(d.Levels[offset].Name) {
		return false
	}
	for i, lv := range levels {
		want := d.Levels[offset+i]
		if lv.Value == want.Value {
			continue
		}
		if !configdb.IsNodeLevel(want.Name) || d.Node == nil ||
			lv.Value != d.Node.UUID && !strings.EqualFold(strings.TrimSuffix(lv.Value, "."), d.Node.FQDN) {
			return false
		}
	}
	return true
}
