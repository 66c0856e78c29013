package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is an API microversion, MAJOR.MINOR, as the header
// OpenStack-API-Version: config X.Y asks for it.
type Version struct{ Major, Minor int }

func (v Version) String() string { return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) }

// Less reports whether v is older than o.
func (v Version) Less(o Version) bool {
	return v.Major < o.Major || (v.Major == o.Major && v.Minor < o.Minor)
}

// AtLeast reports whether v is o or newer.
func (v Version) AtLeast(o Version) bool { return !v.Less(o) }

// The API's microversion history. One sequence covers every endpoint group.
var (
	// V1_0: the ConfigDB API, tuning-box compatible; graphs, overrides and nodes with integer ids.
	V1_0 = Version{1, 0}
	// V1_1: deploy templates and a node's deploy_steps appear.
	V1_1 = Version{1, 1}
	// V1_2: UUID identities: every "id" in a response is the entity's UUID and path ids must be UUIDs.
	V1_2 = Version{1, 2}
	// V1_3: ConfigDB reads and writes take merge, explain, as_of, wait and dry_run,
	// and POST /api/v1/config/diff exists; older versions refuse these parameters
	// (400) rather than ignore them, so a write meant as a dry run is never stored.
	V1_3 = Version{1, 3}
	// V1_4: PATCH …/keys/set creates the objects missing on a key's path; before,
	// as in tuning-box, every key but the last must exist (409 "Keys path … doesn't exist").
	V1_4 = Version{1, 4}

	MinVersion = V1_0
	MaxVersion = V1_4
)

// ParseVersion parses "X.Y" or "latest" (MaxVersion).
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "latest") {
		return MaxVersion, nil
	}
	major, minor, ok := strings.Cut(s, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || ma < 0 || mi < 0 || strings.HasPrefix(minor, "+") || strings.HasPrefix(major, "+") {
		return Version{}, fmt.Errorf("invalid API version %q: expected MAJOR.MINOR or latest", s)
	}
	return Version{ma, mi}, nil
}

// VersionsDocument is the answer of GET /api/v1/config: the supported microversions.
type VersionsDocument struct {
	Version VersionInfo `json:"version"`
}

// VersionInfo describes the API's microversion range.
type VersionInfo struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	MinVersion string `json:"min_version" pattern:"^\\d+\\.\\d+$"`
	Version    string `json:"version" pattern:"^\\d+\\.\\d+$"`
}

// ErrorBody is the answer of every error: {"error": {"code", "message"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries the status code and a human-readable message.
type ErrorDetail struct {
	Code    int    `json:"code" minimum:"400" maximum:"599"`
	Message string `json:"message"`
}
