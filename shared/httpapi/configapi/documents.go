package configapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
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
	segs, err := httpapi.PathSegments(strings.TrimPrefix(r.URL.EscapedPath(), Prefix+"/environments/"))
	if err != nil {
		return docPath{}, err
	}
	v := idsFor(r)
	dp := docPath{ref: configdb.DocRef{Env: segs[0]}}
	if err := v.pathRef(dp.ref.Env, false); err != nil {
		return docPath{}, err
	}
	var name []string
	if dp.ref.Levels, name, err = SplitLevelPath(segs[1:]); err != nil {
		return docPath{}, err
	}
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

// SplitLevelPath reads the segments of a document path after its environment,
// {lvl}/{val}/.../resources/{rest...}: the level path, and the segments after
// "resources" (the resource name and what follows it). Not a document path: 404.
func SplitLevelPath(segs []string) ([]configdb.LevelValue, []string, error) {
	var levels []configdb.LevelValue
	for len(segs) > 0 && segs[0] != "resources" {
		if len(segs) < 2 {
			return nil, nil, errs.NotFoundf("level %q has no value", segs[0])
		}
		levels = append(levels, configdb.LevelValue{Name: segs[0], Value: segs[1]})
		segs = segs[2:]
	}
	if len(segs) == 0 {
		return nil, nil, errs.NotFoundf("expected .../resources/<resource>/values or /overrides")
	}
	return levels, segs[1:], nil
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
	q := routes.QueryOf(r)
	rq := configdb.ReadQuery{
		DocRef:     dp.ref,
		Kind:       dp.kind,
		Effective:  q.Flag("effective"),
		ShowLookup: q.Flag("show_lookup"),
		Key:        q.String("key"),
		Explain:    q.Flag("explain"),
		AsOf:       q.Time("as_of"),
	}
	rq.Version, _ = q.Integer("version")
	if rq.Merge, err = configdb.ParseMergeMode(q.String("merge")); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	wait, err := waitFor(q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var doc *configdb.Document
	if inm := r.Header.Get("If-None-Match"); wait > 0 && inm != "" {
		doc, err = h.svc.Wait(r.Context(), rq, inm, wait)
	} else {
		doc, err = h.svc.Read(r.Context(), rq)
	}
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
	h.compressed.ServeJSON(w, r, doc.ETag, doc.Body)
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
	if IsDryRun(r) {
		p, err := h.svc.PreviewPut(r.Context(), dp.ref, dp.kind, body, r.Header.Get("If-Match"))
		previewed(w, r, p, err)
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
	if IsDryRun(r) {
		p, err := h.svc.PreviewKeys(r.Context(), dp.ref, dp.kind, ops, r.Header.Get("If-Match"), dp.keysOp == "set")
		previewed(w, r, p, err)
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
