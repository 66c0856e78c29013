package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Version is an API microversion (wire.Version); the history is wire's.
type Version = wire.Version

// The API's microversion history (see wire.V1_0 and on).
var (
	V1_0 = wire.V1_0
	V1_1 = wire.V1_1
	V1_2 = wire.V1_2
	V1_3 = wire.V1_3
	V1_4 = wire.V1_4

	MinVersion = wire.MinVersion
	MaxVersion = wire.MaxVersion
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
	if echo, ok := versionEchoes[v]; ok {
		h[versionHeaderKey], h[legacyVersionHeaderKey] = echo[0], echo[1]
		return
	}
	s := v.String()
	h[versionHeaderKey] = []string{ServiceType + " " + s}
	h[legacyVersionHeaderKey] = []string{s}
}

// versionEchoes are the version headers' values of the supported
// microversions of MinVersion's major (all of them today), shared by every
// answer: nothing changes a header's value in place (net/http copies them
// before it writes them).
var versionEchoes = func() map[Version][2][]string {
	m := map[Version][2][]string{}
	for v := MinVersion; v.Major == MinVersion.Major && !MaxVersion.Less(v); v.Minor++ {
		m[v] = [2][]string{{ServiceType + " " + v.String()}, {v.String()}}
	}
	return m
}()

type versionKey struct{}

// RequestVersion returns the microversion Wrap negotiated for r; outside Wrap,
// the one WithVersion gave its context, or MinVersion.
func RequestVersion(r *http.Request) Version {
	if ex := exchangeOf(r.Context()); ex != nil {
		return ex.version
	}
	if v, ok := r.Context().Value(versionKey{}).(Version); ok {
		return v
	}
	return MinVersion
}

// WithVersion returns ctx carrying microversion v, for a request served
// without Wrap (tests).
func WithVersion(ctx context.Context, v Version) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

// ParseVersion parses "X.Y" or "latest"; a malformed version is invalid input.
func ParseVersion(s string) (Version, error) {
	v, err := wire.ParseVersion(s)
	if err != nil {
		return Version{}, errs.Wrap(errs.Invalid, err, err.Error())
	}
	return v, nil
}

// negotiateVersion reads the requested microversion from r's headers.
func negotiateVersion(r *http.Request) (Version, error) {
	requested := ""
	for _, h := range r.Header[versionHeaderKey] {
		for part := range strings.SplitSeq(h, ",") {
			service, ver, ok := strings.Cut(strings.TrimSpace(part), " ")
			if ok && strings.EqualFold(service, ServiceType) {
				requested = ver
			}
		}
	}
	if legacy := r.Header[legacyVersionHeaderKey]; requested == "" && len(legacy) > 0 {
		requested = legacy[0]
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

// ServeVersions answers the root document with the supported microversion range.
func ServeVersions(w http.ResponseWriter, r *http.Request) {
	JSON(w, http.StatusOK, wire.VersionsDocument{Version: wire.VersionInfo{
		ID: "v1", Status: "CURRENT", MinVersion: MinVersion.String(), Version: MaxVersion.String(),
	}})
}
