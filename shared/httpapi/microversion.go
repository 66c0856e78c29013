package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Version is an API microversion, MAJOR.MINOR.
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

	MinVersion = V1_0
	MaxVersion = V1_3
)

// ServiceType names the API in the OpenStack-API-Version header: "OpenStack-API-Version: config 1.2".
const ServiceType = "config"

const (
	versionHeader       = "OpenStack-API-Version"
	legacyVersionHeader = "X-OpenStack-Config-API-Version"
)

// The version headers as http.Header keys them: every answer carries them,
// and canonicalizing their names was a fair part of a cached read's allocations.
var (
	versionHeaderKey       = http.CanonicalHeaderKey(versionHeader)
	legacyVersionHeaderKey = http.CanonicalHeaderKey(legacyVersionHeader)
)

// setVersionHeaders echoes microversion v in both version headers.
func setVersionHeaders(h http.Header, v Version) {
	s := v.String()
	h[versionHeaderKey] = []string{ServiceType + " " + s}
	h[legacyVersionHeaderKey] = []string{s}
}

type versionKey struct{}

// RequestVersion returns the microversion negotiated for r (MinVersion outside the middleware).
func RequestVersion(r *http.Request) Version {
	if v, ok := r.Context().Value(versionKey{}).(Version); ok {
		return v
	}
	return MinVersion
}

// WithVersion returns ctx carrying microversion v (for tests and internal calls).
func WithVersion(ctx context.Context, v Version) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

// ParseVersion parses "X.Y" or "latest".
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "latest") {
		return MaxVersion, nil
	}
	major, minor, ok := strings.Cut(s, ".")
	if !ok {
		return Version{}, errs.Invalidf("invalid API version %q: expected MAJOR.MINOR or latest", s)
	}
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || ma < 0 || mi < 0 || strings.HasPrefix(minor, "+") || strings.HasPrefix(major, "+") {
		return Version{}, errs.Invalidf("invalid API version %q: expected MAJOR.MINOR or latest", s)
	}
	return Version{ma, mi}, nil
}

// negotiateVersion reads the requested microversion from r's headers.
func negotiateVersion(r *http.Request) (Version, error) {
	requested := ""
	for _, h := range r.Header.Values(versionHeader) {
		for part := range strings.SplitSeq(h, ",") {
			service, ver, ok := strings.Cut(strings.TrimSpace(part), " ")
			if ok && strings.EqualFold(service, ServiceType) {
				requested = ver
			}
		}
	}
	if requested == "" {
		requested = r.Header.Get(legacyVersionHeader)
	}
	if requested == "" {
		return MinVersion, nil
	}
	v, err := ParseVersion(requested)
	if err != nil {
		return Version{}, err
	}
	if v.Less(MinVersion) || MaxVersion.Less(v) {
		return Version{}, errs.New(errs.NotAcceptable,
			"Version %s is not supported by the API. Minimum is %s and maximum is %s.", v, MinVersion, MaxVersion)
	}
	return v, nil
}

// Since wraps h so that it exists only from microversion v on: older requests
// get 404 for reads and 405 for writes, as if the route were not there.
func Since(v Version, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if RequestVersion(r).Less(v) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				Error(w, r, errs.NotFoundf("the resource could not be found at API version %s", RequestVersion(r)))
			} else {
				Error(w, r, errs.New(errs.MethodNotAllowed, "method %s is not allowed at API version %s", r.Method, RequestVersion(r)))
			}
			return
		}
		h(w, r)
	}
}

// VersionsDocument is the root document that lists the supported microversions.
type VersionsDocument struct {
	Version VersionInfo `json:"version"`
}

// VersionInfo describes the API's microversion range.
type VersionInfo struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	MinVersion string `json:"min_version"`
	Version    string `json:"version"`
}

// ServeVersions answers the root document with the supported microversion range.
func ServeVersions(w http.ResponseWriter, r *http.Request) {
	JSON(w, http.StatusOK, VersionsDocument{Version: VersionInfo{
		ID: "v1", Status: "CURRENT", MinVersion: MinVersion.String(), Version: MaxVersion.String(),
	}})
}
