package configapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// docPath is a parsed document URL:
//
//	/environments/{env}/{lvl}/{val}/.../resources/{id, UUID or name...}/{values|overrides|override}[/versions | /keys/{set|delete}]
//
// Resource names may contain "/", so the name runs up to the final kind segment.
type docPath struct {
	ref  configdb.DocRef
	kind configdb.Kind
	// versions: the route lists the document's versions (GET .../versions).
	versions bool
	// keysOp is "set" or "delete" for PATCH .../keys/{op}.
	keysOp string
}

// parseDocPath parses the URL of a document route. It works on the escaped path so
// that an escaped "/" inside a level value or name segment stays inside it.
func parseDocPath(r *http.Request) (docPath, error) {
	escaped := strings.TrimPrefix(r.URL.EscapedPath(), Prefix+"/environments/")
	var segs []string
	for s := range strings.SplitSeq(escaped, "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			return docPath{}, errs.Invalidf("malformed URL path")
		}
		segs = append(segs, u)
	}
	v := idsFor(r)
	dp := docPath{ref: configdb.DocRef{Env: segs[0]}}
	if err := v.pathRef(dp.ref.Env, false); err != nil {
		return docPath{}, err
	}
	rest := segs[1:]
	for len(rest) > 0 && rest[0] != "resources" {
		if len(rest) < 2 {
			return docPath{}, errs.NotFoundf("level %q has no value", rest[0])
		}
		dp.ref.Levels = append(dp.ref.Levels, configdb.LevelValue{Name: rest[0], Value: rest[1]})
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return docPath{}, errs.NotFoundf("expected .../resources/<resource>/values or /overrides")
	}
	name := rest[1:]
	last := func(n int) string {
		if len(name) < n {
			return ""
		}
		return name[len(name)-n]
	}
	switch {
	case r.Method == http.MethodPatch && last(2) == "keys" && (last(1) == "set" || last(1) == "delete"):
		dp.keysOp = last(1)
		name = name[:len(name)-2]
	case r.Method == http.MethodGet && last(1) == "versions":
		dp.versions = true
		name = name[:len(name)-1]
	}
	kind, ok := configdb.ParseKind(last(1))
	if !ok || len(name) < 2 {
		return docPath{}, errs.NotFoundf("expected .../resources/<resource>/values or /overrides")
	}
	dp.kind = kind
	dp.ref.Resource = strings.Join(name[:len(name)-1], "/")
	return dp, v.pathRef(dp.ref.Resource, true)
}

// flag reads a presence flag like tuning-box's "?effective": set unless its value says false.
func flag(q url.Values, name string) bool {
	if !q.Has(name) {
		return false
	}
	switch strings.ToLower(q.Get(name)) {
	case "false", "0", "no":
		return false
	}
	return true
}

func (h *handlers) getDocument(w http.ResponseWriter, r *http.Request) {
	dp, err := parseDocPath(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if dp.versions {
		versions, err := h.svc.ListVersions(r.Context(), dp.ref, dp.kind)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusOK, versions)
		return
	}
	q := r.URL.Query()
	rq := configdb.ReadQuery{
		DocRef:     dp.ref,
		Kind:       dp.kind,
		Effective:  flag(q, "effective"),
		ShowLookup: flag(q, "show_lookup"),
		Key:        q.Get("key"),
	}
	if q.Has("version") {
		if rq.Version, err = strconv.Atoi(q.Get("version")); err != nil || rq.Version < 1 {
			httpapi.Error(w, r, errs.Invalidf("version must be a positive integer"))
			return
		}
	}
	doc, err := h.svc.Read(r.Context(), rq)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("ETag", doc.ETag)
	w.Header().Set("Cache-Control", "no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && configdb.ETagMatches(inm, doc.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	httpapi.RawJSON(w, http.StatusOK, doc.Body)
}

func (h *handlers) putDocument(w http.ResponseWriter, r *http.Request) {
	dp, err := parseDocPath(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	body, err := httpapi.ReadBody(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	v, err := h.svc.PutDocument(r.Context(), dp.ref, dp.kind, body, r.Header.Get("If-Match"))
	stored(w, r, v, err)
}

func (h *handlers) editDocumentKeys(w http.ResponseWriter, r *http.Request) {
	dp, err := parseDocPath(r)
	if err == nil && dp.keysOp == "" {
		err = errs.New(errs.MethodNotAllowed, "PATCH is only allowed on .../keys/set and .../keys/delete")
	}
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var ops []configdb.KeyOp
	if err := httpapi.Decode(r, &ops); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	edit := h.svc.DeleteKeys
	if dp.keysOp == "set" {
		edit = h.svc.SetKeys
	}
	v, err := edit(r.Context(), dp.ref, dp.kind, ops, r.Header.Get("If-Match"))
	stored(w, r, v, err)
}

// VersionHeader carries the version number a write created.
const VersionHeader = "X-Config-Version"

// stored answers a document write: 204 with the new document's ETag and version number.
func stored(w http.ResponseWriter, r *http.Request, v configdb.Version, err error) {
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("ETag", v.ETag())
	w.Header().Set(VersionHeader, strconv.Itoa(v.Version))
	httpapi.NoContent(w)
}
